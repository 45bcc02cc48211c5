package verify

import (
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// RuntimeDimsKey is the model metadata key under which an importer
// records the sizes the source's reference runtime runs the symbolic dims
// of the inputs at ("batch=1,x_dim1=5"): a runtime that cannot resize
// inputs (the TFLite interpreter) runs only those, so generated inputs use
// them.
const RuntimeDimsKey = "onnxconv.runtime_dims"

// RuntimeDims returns the dims recorded under RuntimeDimsKey.
func RuntimeDims(m *canonical.Model) map[string]int64 {
	out := map[string]int64{}
	for _, p := range m.MetadataProps {
		if p.Key != RuntimeDimsKey {
			continue
		}
		for _, kv := range strings.Split(p.Value, ",") {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if ok && err == nil && n > 0 && n < 1<<20 {
				out[k] = n
			}
		}
	}
	return out
}

// MinDims returns, per symbolic dim of the graph inputs, the smallest
// size the graph can run at when the graph says so: a constant index of
// Gather or GatherND into an input along that dim needs the dim to exceed
// it; a convolution or pooling window over the input needs the dim to
// hold the window (less its padding).
func MinDims(m *canonical.Model) map[string]int64 {
	out := map[string]int64{}
	for _, v := range GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape {
			continue
		}
		need := func(axis int64, idx int64) {
			if axis < 0 || int(axis) >= len(ds) || ds[axis].Known || idx < 0 {
				return
			}
			key := ds[axis].Param
			if key == "" {
				key = v.Name + ":" + strconv.FormatInt(axis, 10)
			}
			out[key] = max(out[key], idx+1)
		}
		// A window (convolution or pooling) needs its input at least as
		// long as the window, less the padding: read directly or through
		// Reshape, Unsqueeze, Squeeze, Transpose and elementwise ops.
		for ax, d := range ds {
			if d.Known {
				continue
			}
			if least := windowLeast(v, ax, len(ds)); least > 1 {
				need(int64(ax), least-1)
			}
		}
		for _, u := range v.Uses() {
			n := u.Node
			// Only the indices of Gather and GatherND are read: input 1 of
			// another op may be a weight of gigabytes.
			if n == nil || n.OpType != "Gather" && n.OpType != "GatherND" || u.Index != 0 || len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil {
				continue
			}
			idx, err := n.Inputs[1].Const.Int64s()
			if err != nil || len(idx) == 0 {
				continue
			}
			switch n.OpType {
			case "Gather":
				hi := int64(0)
				for _, x := range idx {
					hi = max(hi, x)
				}
				axis := n.AttrInt("axis", 0)
				if axis < 0 {
					axis += int64(len(ds))
				}
				need(axis, hi)
			case "GatherND":
				dims := n.Inputs[1].Const.Dims
				if len(dims) == 0 {
					continue
				}
				k := dims[len(dims)-1]
				b := n.AttrInt("batch_dims", 0)
				for j := int64(0); k > 0 && j < int64(len(idx)); j++ {
					need(b+j%k, idx[j])
				}
			}
		}
	}
	return out
}

// ImageSide is the size generated for the free height and width of an
// image input: 224, the side ImageNet classifiers and the backbones of
// most detectors are trained at, so that strides and pools leave feature
// maps of a realistic size (a 1x1 image hides misplaced padding, resizes
// and windows that fall off the edge).
const ImageSide = 224

// ImageDims returns ImageSide for the free dims 2 and 3 of every rank-4
// graph input (NCHW) that a convolution or pooling window of more than
// one element reads along those dims, directly or through reshapes,
// transposes and elementwise ops.
func ImageDims(m *canonical.Model) map[string]int64 {
	out := map[string]int64{}
	for _, v := range GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape || len(ds) != 4 || ds[2].Known || ds[3].Known {
			continue
		}
		if windowLeast(v, 2, 4) <= 1 && windowLeast(v, 3, 4) <= 1 {
			continue
		}
		for _, ax := range []int{2, 3} {
			key := ds[ax].Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(ax)
			}
			out[key] = ImageSide
		}
	}
	return out
}

// FillDims returns dims with every symbolic dim of m's inputs that dims
// does not set: the source runtime's size (RuntimeDims), at least what
// the graph needs (MinDims), a few frames for audio (AudioDims),
// ImageSide for an image's height and width (ImageDims), else 1.
func FillDims(m *canonical.Model, dims map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range dims {
		out[k] = v
	}
	rt, least, img, audio := RuntimeDims(m), MinDims(m), ImageDims(m), AudioDims(m)
	for _, v := range GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape {
			continue
		}
		for i, d := range ds {
			if d.Known {
				continue
			}
			key := d.Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(i)
			}
			if _, set := out[key]; !set {
				size := rt[key]
				if size == 0 {
					size = audio[key]
				}
				if size == 0 {
					size = img[key]
				}
				out[key] = max(size, least[key], 1)
			}
		}
	}
	return out
}

// windowMin returns, per input axis of a Conv, MaxPool, AveragePool or
// LpPool node (spatial axes from 2), the least size its window runs on:
// (kernel-1)*dilation+1 less the explicit padding.
func windowMin(n *canonical.Node) map[int]int64 {
	var kernel []int64
	switch n.OpType {
	case "Conv":
		// The weights: an initializer or a Constant node's value.
		if len(n.Inputs) < 2 {
			return nil
		}
		w := constTensor(n.Inputs[1])
		if w == nil || len(w.Dims) < 3 {
			return nil
		}
		kernel = w.Dims[2:]
	case "MaxPool", "AveragePool", "LpPool":
		kernel = n.AttrInts("kernel_shape", nil)
	default:
		return nil
	}
	if n.AttrString("auto_pad", "NOTSET") == "SAME_UPPER" || n.AttrString("auto_pad", "NOTSET") == "SAME_LOWER" {
		return nil
	}
	dil := n.AttrInts("dilations", nil)
	pads := n.AttrInts("pads", nil)
	out := map[int]int64{}
	for i, k := range kernel {
		d := int64(1)
		if i < len(dil) {
			d = dil[i]
		}
		size := (k-1)*d + 1
		if len(pads) == 2*len(kernel) {
			size -= pads[i] + pads[i+len(kernel)]
		}
		if size > 1 {
			out[2+i] = size
		}
	}
	return out
}
