package keras

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/hdf5"
)

// maxLayerWeights bounds the weights of one layer.
const maxLayerWeights = 1 << 12

// readTensor reads dataset o as a float32 tensor called name.
func readTensor(o *hdf5.Object, name string) (*canonical.Tensor, error) {
	ds, err := o.Dataset()
	if err != nil {
		return nil, err
	}
	v, err := ds.Read()
	if err != nil {
		return nil, err
	}
	f, err := v.Float32s()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path(), err)
	}
	dims := make([]int64, len(v.Shape))
	for i, d := range v.Shape {
		dims[i] = int64(d)
	}
	if n, err := canonical.NumElements(dims); err != nil || int(n) != len(f) {
		return nil, fmt.Errorf("%s: shape %v does not hold %d values", o.Path(), dims, len(f))
	}
	return canonical.NewTensor(name, canonical.Float, dims, f32Bytes(f)), nil
}

func notFound(err error) bool {
	var nf *hdf5.NotFoundError
	return errors.As(err, &nf)
}

// v2Weights reads Keras 2 weights: a group per top-level layer whose
// weight_names attribute lists its weights' paths (relative to the group)
// in Keras's order: "dense/kernel:0", "lstm/lstm_cell/kernel:0",
// "nested_model/dense/kernel:0".
type v2Weights struct {
	file string
	g    *hdf5.Object
}

func (w *v2Weights) LayerWeights(path []string) ([]Weight, error) {
	if len(path) == 0 {
		return nil, nil
	}
	lg, err := w.g.Child(path[0])
	if err != nil {
		if notFound(err) {
			return nil, nil
		}
		return nil, err
	}
	names, err := weightNames(lg)
	if err != nil {
		return nil, err
	}
	last := path[len(path)-1]
	var out []Weight
	for _, n := range names {
		comps := strings.Split(n, "/")
		if len(path) > 1 && !containsComp(comps[:len(comps)-1], last) {
			continue
		}
		if len(out) >= maxLayerWeights {
			return nil, fmt.Errorf("%s: layer %s has more than %d weights", w.file, path[0], maxLayerWeights)
		}
		o, err := lg.Get(n)
		if err != nil {
			return nil, fmt.Errorf("weight %s listed in weight_names: %w", n, err)
		}
		short := strings.TrimSuffix(comps[len(comps)-1], ":0")
		t, err := readTensor(o, short)
		if err != nil {
			return nil, err
		}
		out = append(out, Weight{Name: short, Tensor: t})
	}
	// Names that repeat (a Bidirectional's two cells) leave only the
	// order to tell the weights apart.
	seen := map[string]bool{}
	dup := false
	for _, x := range out {
		dup = dup || seen[x.Name]
		seen[x.Name] = true
	}
	if dup {
		for i := range out {
			out[i].Name = ""
		}
	}
	return out, nil
}

func containsComp(comps []string, s string) bool {
	for _, c := range comps {
		if c == s {
			return true
		}
	}
	return false
}

// weightNames reads the weight_names attribute of a Keras 2 layer group;
// without one, the datasets below the group in path order.
func weightNames(lg *hdf5.Object) ([]string, error) {
	a, err := lg.Attr("weight_names")
	if err == nil {
		if len(a.Shape) == 1 && a.Shape[0] == 0 {
			return nil, nil
		}
		names, err := a.Strings()
		if err != nil {
			// An empty weight_names is stored as a float array by h5py.
			if a.Len() == 0 {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: weight_names: %w", lg.Path(), err)
		}
		return names, nil
	}
	if !notFound(err) {
		return nil, err
	}
	var names []string
	prefix := lg.Path() + "/"
	err = lg.Walk(func(o *hdf5.Object) error {
		if o.Kind() == hdf5.KindDataset {
			if len(names) >= maxLayerWeights {
				return fmt.Errorf("%s: more than %d weights", lg.Path(), maxLayerWeights)
			}
			names = append(names, strings.TrimPrefix(o.Path(), prefix))
		}
		return nil
	})
	return names, err
}

// v3Weights reads Keras 3 weights (model.weights.h5): a layer's variables
// are the datasets layers/NAME/vars/0, 1, ... in Keras's order (nested
// models: layers/MODEL/layers/NAME/vars), those of its sublayers (an RNN's
// cell, a Bidirectional's forward_layer and backward_layer) below it.
type v3Weights struct {
	f *hdf5.File
}

func (w *v3Weights) LayerWeights(path []string) ([]Weight, error) {
	if len(path) == 0 {
		return nil, nil
	}
	p := "layers/" + strings.Join(path, "/layers/")
	g, err := w.f.Get(p)
	if err != nil {
		if !notFound(err) {
			return nil, err
		}
		// Keras 3 keeps a functional model's layers at the top too.
		if g, err = w.f.Get("layers/" + path[len(path)-1]); err != nil {
			if notFound(err) {
				return nil, nil
			}
			return nil, err
		}
	}
	var out []Weight
	if err := collectVars(g, &out, 0, map[uint64]bool{}); err != nil {
		return nil, err
	}
	return out, nil
}

// collectVars appends the vars of g, then those of its sublayers
// (forward_layer before backward_layer, others by name). Each group is
// visited once (seen holds the headers visited): groups linked from many
// places in a DAG cost one visit each, not one per path.
func collectVars(g *hdf5.Object, out *[]Weight, depth int, seen map[uint64]bool) error {
	if depth > 16 {
		return fmt.Errorf("%s: sublayers nested more than 16 deep", g.Path())
	}
	if seen[g.Addr()] {
		return nil
	}
	seen[g.Addr()] = true
	links, err := g.Links()
	if err != nil {
		return err
	}
	var subs []string
	for _, l := range links {
		if l.Name == "vars" {
			vg, err := g.Child("vars")
			if err != nil {
				return err
			}
			vl, err := vg.Links()
			if err != nil {
				return err
			}
			var names []string
			for _, x := range vl {
				names = append(names, x.Name)
			}
			sortNumeric(names)
			for _, n := range names {
				if len(*out) >= maxLayerWeights {
					return fmt.Errorf("%s: more than %d weights", g.Path(), maxLayerWeights)
				}
				o, err := vg.Child(n)
				if err != nil {
					return err
				}
				if o.Kind() != hdf5.KindDataset {
					continue
				}
				t, err := readTensor(o, "")
				if err != nil {
					return err
				}
				*out = append(*out, Weight{Tensor: t})
			}
			continue
		}
		if l.Soft != "" || l.External {
			continue
		}
		subs = append(subs, l.Name)
	}
	rank := func(s string) int {
		switch s {
		case "cell", "layer", "forward_layer":
			return 0
		case "backward_layer":
			return 1
		}
		return 2
	}
	sort.SliceStable(subs, func(i, j int) bool {
		if rank(subs[i]) != rank(subs[j]) {
			return rank(subs[i]) < rank(subs[j])
		}
		return subs[i] < subs[j]
	})
	for _, s := range subs {
		c, err := g.Child(s)
		if err != nil {
			return err
		}
		if c.Kind() != hdf5.KindGroup {
			continue
		}
		if err := collectVars(c, out, depth+1, seen); err != nil {
			return err
		}
	}
	return nil
}
