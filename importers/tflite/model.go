package tflite

import (
	"errors"
	"fmt"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// The model read out of the flatbuffer into plain Go values. Everything the
// converter needs is copied (or sliced, for buffer data) here, with every
// index and length checked, so the converter never touches the flatbuffer
// except to decode operator options (which are guarded by recover in
// Import).

type quant struct {
	scale []float32
	zp    []int64
	dim   int32
}

type tensor struct {
	index int
	name  string
	typ   fb.TensorType
	// shape is the tensor's shape with -1 for every dynamic dim: where
	// shape_signature says -1, the static shape holds only a placeholder
	// (1 as the TFLite converter writes it), which is not a size.
	shape []int64
	// static is the shape as written in the file (placeholders included):
	// the sizes the interpreter allocates before any resize.
	static   []int64
	sig      []int64 // shape_signature (-1 = dynamic), nil if absent
	data     []byte  // constant data, nil if none
	q        *quant  // nil if not quantized
	variable bool
}

type operator struct {
	index   int
	code    fb.BuiltinOperator
	custom  string
	version int32
	inputs  []int32
	outputs []int32
	raw     *fb.Operator
}

type subgraph struct {
	name    string
	tensors []*tensor
	inputs  []int32
	outputs []int32
	ops     []*operator
}

type model struct {
	version     uint32
	description string
	metadata    map[string][]byte
	metaOrder   []string
	signatures  []string
	// sigIO holds the signature keys of the main subgraph's inputs and
	// outputs, by tensor index.
	sigIO     map[int32]string
	subgraphs []*subgraph
}

// Limits that keep hostile files from making the reader allocate or loop
// without bound. Real models are far below them.
const (
	maxRank     = 16
	maxElements = 1 << 31
	// maxStateElements bounds the zero initial value made for a variable
	// tensor without data (LSTM state), which costs memory the file does
	// not pay for.
	maxStateElements = 1 << 22
	// maxUnroll bounds the time steps of an unrolled LSTM.
	maxUnroll = 1024
)

var errTruncated = errors.New("truncated or corrupt flatbuffer")

// vecFits reports whether a vector of n elements of size elem can lie in a
// buffer of length bufLen at all. It is a cheap upper bound that keeps a lying
// length from driving allocation; the accessors themselves are bounds-checked
// by the Go runtime and turned into errors by Import's recover.
func vecFits(n, elem, bufLen int) bool {
	return n >= 0 && n <= bufLen/elem
}

func readModel(data []byte) (*model, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("tflite: file is %d bytes, too short for a flatbuffer", len(data))
	}
	if string(data[4:8]) != "TFL3" {
		return nil, fmt.Errorf("tflite: file identifier is %q, want \"TFL3\"", data[4:8])
	}
	root := flatbuffers.GetUOffsetT(data)
	if int(root) < 8 || int(root) > len(data)-4 {
		return nil, fmt.Errorf("tflite: root table offset %d outside the file (%d bytes)", root, len(data))
	}
	fm := formats.Root(data)
	m := &model{
		version:     fm.Version(),
		description: string(fm.Description()),
		metadata:    map[string][]byte{},
	}
	n := len(data)

	// Buffers.
	nb := fm.BuffersLength()
	if !vecFits(nb, 4, n) {
		return nil, fmt.Errorf("tflite: buffers vector length %d: %w", nb, errTruncated)
	}
	buffers := make([][]byte, nb)
	var b fb.Buffer
	for i := 0; i < nb; i++ {
		if !fm.Buffers(&b, i) {
			return nil, fmt.Errorf("tflite: buffer %d: %w", i, errTruncated)
		}
		d := b.DataBytes()
		if len(d) == 0 {
			off, size := b.Offset(), b.Size()
			if off > 1 {
				if off > uint64(n) || size > uint64(n)-off {
					return nil, fmt.Errorf("tflite: buffer %d: offset %d size %d outside the %d-byte file", i, off, size, n)
				}
				d = data[off : off+size]
			}
		}
		buffers[i] = d
	}

	// Metadata.
	nm := fm.MetadataLength()
	if !vecFits(nm, 4, n) {
		return nil, fmt.Errorf("tflite: metadata vector length %d: %w", nm, errTruncated)
	}
	var md fb.Metadata
	for i := 0; i < nm; i++ {
		if !fm.Metadata(&md, i) {
			return nil, fmt.Errorf("tflite: metadata %d: %w", i, errTruncated)
		}
		name := string(md.Name())
		bi := md.Buffer()
		if int64(bi) >= int64(nb) {
			return nil, fmt.Errorf("tflite: metadata %q: buffer index %d out of range (%d buffers)", name, bi, nb)
		}
		if _, dup := m.metadata[name]; !dup {
			m.metaOrder = append(m.metaOrder, name)
		}
		m.metadata[name] = buffers[bi]
	}

	// Signatures (names only, kept as metadata).
	ns := fm.SignatureDefsLength()
	if !vecFits(ns, 4, n) {
		return nil, fmt.Errorf("tflite: signature_defs vector length %d: %w", ns, errTruncated)
	}
	var sd fb.SignatureDef
	for i := 0; i < ns; i++ {
		if !fm.SignatureDefs(&sd, i) {
			return nil, fmt.Errorf("tflite: signature %d: %w", i, errTruncated)
		}
		m.signatures = append(m.signatures, string(sd.SignatureKey()))
	}
	// The signature keys of the main subgraph's inputs and outputs name
	// the unnamed ones (formats/tflite IONames).
	sigIO, err := formats.SignatureNames(fm, 0, n)
	if err != nil {
		return nil, fmt.Errorf("tflite: %w", err)
	}
	m.sigIO = sigIO

	// Operator codes.
	nc := fm.OperatorCodesLength()
	if !vecFits(nc, 4, n) {
		return nil, fmt.Errorf("tflite: operator_codes vector length %d: %w", nc, errTruncated)
	}
	type opcode struct {
		code    fb.BuiltinOperator
		custom  string
		version int32
	}
	codes := make([]opcode, nc)
	var oc fb.OperatorCode
	for i := 0; i < nc; i++ {
		if !fm.OperatorCodes(&oc, i) {
			return nil, fmt.Errorf("tflite: operator code %d: %w", i, errTruncated)
		}
		// Schema rule: the real code is the larger of the deprecated int8
		// field and the int32 field.
		c := fb.BuiltinOperator(oc.DeprecatedBuiltinCode())
		if oc.BuiltinCode() > c {
			c = oc.BuiltinCode()
		}
		codes[i] = opcode{code: c, custom: string(oc.CustomCode()), version: oc.Version()}
	}

	// Subgraphs.
	ng := fm.SubgraphsLength()
	if ng == 0 {
		return nil, errors.New("tflite: model has no subgraphs")
	}
	if !vecFits(ng, 4, n) {
		return nil, fmt.Errorf("tflite: subgraphs vector length %d: %w", ng, errTruncated)
	}
	var sg fb.SubGraph
	for gi := 0; gi < ng; gi++ {
		if !fm.Subgraphs(&sg, gi) {
			return nil, fmt.Errorf("tflite: subgraph %d: %w", gi, errTruncated)
		}
		g := &subgraph{name: string(sg.Name())}
		nt := sg.TensorsLength()
		if !vecFits(nt, 4, n) {
			return nil, fmt.Errorf("tflite: subgraph %d: tensors vector length %d: %w", gi, nt, errTruncated)
		}
		var t fb.Tensor
		var qp fb.QuantizationParameters
		for ti := 0; ti < nt; ti++ {
			if !sg.Tensors(&t, ti) {
				return nil, fmt.Errorf("tflite: subgraph %d tensor %d: %w", gi, ti, errTruncated)
			}
			tt, err := readTensor(&t, &qp, ti, buffers)
			if err != nil {
				return nil, fmt.Errorf("tflite: subgraph %d: %w", gi, err)
			}
			g.tensors = append(g.tensors, tt)
		}
		var err error
		if g.inputs, err = readIndices(sg.InputsLength(), sg.Inputs, nt, n, false); err != nil {
			return nil, fmt.Errorf("tflite: subgraph %d inputs: %w", gi, err)
		}
		if g.outputs, err = readIndices(sg.OutputsLength(), sg.Outputs, nt, n, false); err != nil {
			return nil, fmt.Errorf("tflite: subgraph %d outputs: %w", gi, err)
		}
		no := sg.OperatorsLength()
		if !vecFits(no, 4, n) {
			return nil, fmt.Errorf("tflite: subgraph %d: operators vector length %d: %w", gi, no, errTruncated)
		}
		for oi := 0; oi < no; oi++ {
			op := new(fb.Operator)
			if !sg.Operators(op, oi) {
				return nil, fmt.Errorf("tflite: subgraph %d operator %d: %w", gi, oi, errTruncated)
			}
			ci := op.OpcodeIndex()
			if int64(ci) >= int64(nc) {
				return nil, fmt.Errorf("tflite: subgraph %d operator %d: opcode index %d out of range (%d operator codes)", gi, oi, ci, nc)
			}
			o := &operator{index: oi, code: codes[ci].code, custom: codes[ci].custom, version: codes[ci].version, raw: op}
			if o.inputs, err = readIndices(op.InputsLength(), op.Inputs, nt, n, true); err != nil {
				return nil, fmt.Errorf("tflite: subgraph %d operator %d (%s) inputs: %w", gi, oi, opName(o), err)
			}
			if o.outputs, err = readIndices(op.OutputsLength(), op.Outputs, nt, n, false); err != nil {
				return nil, fmt.Errorf("tflite: subgraph %d operator %d (%s) outputs: %w", gi, oi, opName(o), err)
			}
			g.ops = append(g.ops, o)
		}
		m.subgraphs = append(m.subgraphs, g)
	}
	return m, nil
}

// readIndices reads a vector of tensor indices and checks each one; -1 (an
// omitted optional input) is allowed only where optional is true.
func readIndices(length int, at func(int) int32, ntensors, bufLen int, optional bool) ([]int32, error) {
	if !vecFits(length, 4, bufLen) {
		return nil, fmt.Errorf("vector length %d: %w", length, errTruncated)
	}
	out := make([]int32, length)
	for i := range out {
		v := at(i)
		if v == -1 && optional {
			out[i] = v
			continue
		}
		if v < 0 || int(v) >= ntensors {
			return nil, fmt.Errorf("tensor index %d out of range (%d tensors)", v, ntensors)
		}
		out[i] = v
	}
	return out, nil
}

func readTensor(t *fb.Tensor, qp *fb.QuantizationParameters, index int, buffers [][]byte) (*tensor, error) {
	tt := &tensor{index: index, name: string(t.Name()), typ: t.Type(), variable: t.IsVariable()}
	bufLen := len(t.Table().Bytes)
	rank := t.ShapeLength()
	if rank > maxRank {
		return nil, fmt.Errorf("tensor %d %q: rank %d exceeds %d", index, tt.name, rank, maxRank)
	}
	tt.shape = make([]int64, rank)
	elems := int64(1)
	for i := 0; i < rank; i++ {
		d := int64(t.Shape(i))
		if d < 0 {
			// Old converters write -1 for unknown dims in shape too.
			d = -1
		}
		tt.shape[i] = d
		if d > 0 {
			elems *= d
			if elems > maxElements {
				return nil, fmt.Errorf("tensor %d %q: %v has more than %d elements", index, tt.name, tt.shape[:i+1], int64(maxElements))
			}
		}
	}
	if sl := t.ShapeSignatureLength(); sl > 0 {
		if sl != rank {
			return nil, fmt.Errorf("tensor %d %q: shape_signature rank %d differs from shape rank %d", index, tt.name, sl, rank)
		}
		tt.sig = make([]int64, sl)
		for i := 0; i < sl; i++ {
			tt.sig[i] = int64(t.ShapeSignature(i))
		}
	}
	tt.static = append([]int64(nil), tt.shape...)
	for i, d := range tt.sig {
		if d < 0 {
			tt.shape[i] = -1
		}
	}
	bi := t.Buffer()
	if int64(bi) >= int64(len(buffers)) {
		return nil, fmt.Errorf("tensor %d %q: buffer index %d out of range (%d buffers)", index, tt.name, bi, len(buffers))
	}
	if bi > 0 && len(buffers[bi]) > 0 {
		tt.data = buffers[bi]
		es := elemSize(tt.typ)
		if tt.typ == fb.TensorTypeSTRING {
			// A string constant: its count, offsets and bytes, checked here.
			ss, err := tfliteStrings(tt.data)
			if err != nil {
				return nil, fmt.Errorf("tensor %d %q: %w", index, tt.name, err)
			}
			if t.Sparsity(nil) != nil || int64(len(ss)) != elems {
				return nil, fmt.Errorf("tensor %d %q: %d strings for shape %v", index, tt.name, len(ss), tt.shape)
			}
			es = 0
		} else if es == 0 {
			return nil, fmt.Errorf("tensor %d %q: constant of type %s is not supported", index, tt.name, tt.typ)
		}
		if sp := t.Sparsity(nil); sp != nil && es > 0 {
			if tt.typ == fb.TensorTypeINT4 {
				return nil, fmt.Errorf("tensor %d %q: sparse int4 constants are not supported", index, tt.name)
			}
			dense, err := densify(sp, tt.shape, es, tt.data)
			if err != nil {
				return nil, fmt.Errorf("tensor %d %q: %w", index, tt.name, err)
			}
			tt.data = dense
		}
		for _, d := range tt.shape {
			if d < 0 {
				return nil, fmt.Errorf("tensor %d %q: constant with unknown dimension in %v", index, tt.name, tt.shape)
			}
		}
		want := elems * int64(es)
		if tt.typ == fb.TensorTypeINT4 {
			want = (elems + 1) / 2
		}
		if es > 0 && int64(len(tt.data)) != want {
			return nil, fmt.Errorf("tensor %d %q: %s%v needs %d bytes, buffer %d holds %d", index, tt.name, tt.typ, tt.shape, want, bi, len(tt.data))
		}
	}
	if q := t.Quantization(qp); q != nil {
		ns, nz := q.ScaleLength(), q.ZeroPointLength()
		if !vecFits(ns, 4, bufLen) || !vecFits(nz, 8, bufLen) {
			return nil, fmt.Errorf("tensor %d %q: quantization vectors: %w", index, tt.name, errTruncated)
		}
		if ns > 0 {
			qq := &quant{dim: q.QuantizedDimension(), scale: make([]float32, ns), zp: make([]int64, ns)}
			for i := 0; i < ns; i++ {
				s := q.Scale(i)
				if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || s <= 0 {
					return nil, fmt.Errorf("tensor %d %q: quantization scale[%d] = %v is not a positive finite number", index, tt.name, i, s)
				}
				qq.scale[i] = s
			}
			switch nz {
			case 0:
			case 1, ns:
				for i := 0; i < ns; i++ {
					qq.zp[i] = q.ZeroPoint(min(i, nz-1))
				}
			default:
				return nil, fmt.Errorf("tensor %d %q: %d scales but %d zero points", index, tt.name, ns, nz)
			}
			if ns > 1 && rank == 1 && tt.shape[0] == int64(ns) {
				// A per-channel bias: TFLite's kernels scale it per output
				// channel whatever its quantized_dimension says (converters
				// copy the weight's, 3 for a depthwise filter); its own axis
				// is 0.
				qq.dim = 0
			}
			if ns > 1 {
				if qq.dim < 0 || int(qq.dim) >= rank || tt.shape[qq.dim] != int64(ns) {
					return nil, fmt.Errorf("tensor %d %q: %d per-channel scales do not match dimension %d of %v", index, tt.name, ns, qq.dim, tt.shape)
				}
			}
			tt.q = qq
		}
	}
	return tt, nil
}

func elemSize(t fb.TensorType) int {
	switch t {
	case fb.TensorTypeFLOAT32, fb.TensorTypeINT32, fb.TensorTypeUINT32:
		return 4
	case fb.TensorTypeFLOAT16, fb.TensorTypeINT16, fb.TensorTypeUINT16, fb.TensorTypeBFLOAT16:
		return 2
	case fb.TensorTypeINT8, fb.TensorTypeUINT8, fb.TensorTypeBOOL:
		return 1
	case fb.TensorTypeINT64, fb.TensorTypeFLOAT64, fb.TensorTypeUINT64:
		return 8
	case fb.TensorTypeINT4:
		return 1
	}
	return 0
}

func opName(o *operator) string {
	if o.code == fb.BuiltinOperatorCUSTOM {
		return "CUSTOM:" + o.custom
	}
	return o.code.String()
}
