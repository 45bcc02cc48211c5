package torchscript

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// tensorParams are the names of the method's tensor parameters that are
// not bound, in order: the graph's inputs before any lifted state.
func tensorParams(def *fts.Def, o Options) []string {
	var out []string
	for _, prm := range def.Params[1:] {
		if _, ok := o.Bind[prm.Name]; !ok && typeName(prm.Type) == "Tensor" {
			out = append(out, prm.Name)
		}
	}
	return out
}

// samplesShapes fills o.Shapes and o.DTypes from the first sample of
// o.Inputs (a folder as --inputs reads it) when no shapes are given.
func samplesShapes(file string, def *fts.Def, o *Options) error {
	if len(o.Shapes) > 0 || o.Inputs == "" {
		return nil
	}
	names := tensorParams(def, *o)
	if len(names) == 0 {
		return nil
	}
	vals := make([]*canonical.Value, len(names))
	for i, n := range names {
		vals[i] = &canonical.Value{Name: n}
	}
	s, err := tensorio.LoadSamples(o.Inputs, "input", vals, false)
	if err != nil {
		return &importers.OptionError{Importer: Name, Key: importers.OptionInputs, Value: o.Inputs, Known: options.Names(optionSet().Specs()),
			Err: fmt.Errorf("%s: the shapes of the tensor inputs (%s) are read from the samples: %w", file, strings.Join(names, ", "), err)}
	}
	if len(s) == 0 {
		return &importers.OptionError{Importer: Name, Key: importers.OptionInputs, Value: o.Inputs, Known: options.Names(optionSet().Specs()),
			Err: fmt.Errorf("%s holds no sample", o.Inputs)}
	}
	for _, t := range s[0] {
		o.Shapes = append(o.Shapes, append([]int64{}, t.Dims...))
		o.DTypes = append(o.DTypes, t.DataType)
	}
	return nil
}

// checkParams returns one *importers.OptionError naming everything the
// method needs that the options do not give: every tensor input without
// a shape and every int/float/bool input without a value, with an example
// shape that fits the model's first op.
func (c *conv) checkParams(root *object, def *fts.Def, o Options) error {
	var shapes, binds, what []string
	k := 0
	for _, prm := range def.Params[1:] {
		typ := typeName(prm.Type)
		if _, ok := o.Bind[prm.Name]; ok {
			continue
		}
		switch {
		case typ == "Tensor":
			if k >= len(o.Shapes) {
				if len(shapes) == 0 {
					shapes = append(shapes, exampleShape(root.state).shape)
				} else {
					shapes = append(shapes, "SHAPE")
				}
				what = append(what, "the shape of tensor input "+prm.Name)
			}
			k++
		case prm.Default == nil:
			binds = append(binds, prm.Name+"=VALUE")
			what = append(what, fmt.Sprintf("the value of %s input %s", typ, prm.Name))
		}
	}
	if len(what) == 0 {
		return nil
	}
	var give []string
	key := "bind"
	if len(shapes) > 0 {
		key = "shapes"
		known := make([]string, 0, len(o.Shapes)+len(shapes))
		for i := range min(k-len(shapes), len(o.Shapes)) {
			known = append(known, shapeString(o.Shapes[i]))
		}
		give = append(give, "-O shapes="+strings.Join(append(known, shapes...), ";"))
	}
	if len(binds) > 0 {
		give = append(give, "-O bind="+strings.Join(binds, ","))
	}
	msg := fmt.Sprintf("%s.%s needs %s, which the archive does not record: give %s", root.qual, def.Name, joinAnd(what), strings.Join(give, " "))
	if len(shapes) > 0 {
		ex := exampleShape(root.state)
		msg += fmt.Sprintf(" (the example shape is %s; with --inputs DIR the shapes are read from its samples)", ex.why)
	}
	return &importers.OptionError{Importer: Name, Key: key, Value: "", Known: options.Names(optionSet().Specs()), Err: fmt.Errorf("%s", msg)}
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func shapeString(dims []int64) string {
	if len(dims) == 0 {
		return "s"
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// example is an input shape for -O shapes and why it fits.
type example struct{ shape, why string }

// exampleShape finds the first layer of the module tree (in the order
// data.pkl keeps the submodules, the order they were defined in) whose
// kind tells the input it takes, and returns a shape that fits it.
func exampleShape(state *pickle.Dict) example {
	if ex, ok := firstLayer(state, 0); ok {
		return ex
	}
	return example{"1x3x224x224", "an image, which is only a guess: the archive's first layers do not tell the input"}
}

func firstLayer(state *pickle.Dict, depth int) (example, bool) {
	if state == nil || depth > 64 {
		return example{}, false
	}
	for _, it := range state.Items {
		o, ok := it.Value.(*pickle.Object)
		if !ok || fts.AsTensor(o) != nil {
			continue
		}
		g := o.Class()
		if g == nil || !strings.HasPrefix(g.Module, "__torch__") {
			continue
		}
		if ex, ok := layerExample(g.Name, o.Attrs()); ok {
			return ex, true
		}
		if ex, ok := firstLayer(o.Attrs(), depth+1); ok {
			return ex, true
		}
	}
	return example{}, false
}

// layerExample is the example input of a layer of class name, read from
// its weights' sizes.
func layerExample(name string, attrs *pickle.Dict) (example, bool) {
	size := func(key string, i int) int64 {
		if attrs == nil {
			return 0
		}
		v, ok := attrs.Get(key)
		if !ok {
			return 0
		}
		t := fts.AsTensor(v)
		if t == nil || i >= len(t.Size) {
			return 0
		}
		return t.Size[i]
	}
	in := func(key string, i int, def int64) int64 {
		if n := size(key, i); n > 0 {
			return n
		}
		return def
	}
	switch name {
	case "Conv2d", "ConvTranspose2d":
		return example{fmt.Sprintf("1x%dx224x224", in("weight", 1, 3)), "an image [batch, channels, height, width]: the first layer is a 2-D convolution"}, true
	case "Conv3d", "ConvTranspose3d":
		return example{fmt.Sprintf("1x%dx16x112x112", in("weight", 1, 3)), "a clip [batch, channels, frames, height, width]: the first layer is a 3-D convolution"}, true
	case "Conv1d", "ConvTranspose1d":
		return example{fmt.Sprintf("1x%dx16000", in("weight", 1, 1)), "a signal [batch, channels, samples], one second of 16 kHz audio: the first layer is a 1-D convolution"}, true
	case "Linear":
		n := in("weight", 1, 16000)
		return example{fmt.Sprintf("1x%d", n), fmt.Sprintf("[batch, features]: the first layer is a Linear of %d input features", n)}, true
	case "LSTM", "GRU", "RNN":
		return example{fmt.Sprintf("1x10x%d", in("weight_ih_l0", 1, 16)), "a sequence of 10 steps: the first layer is a recurrent layer"}, true
	case "LSTMCell", "GRUCell", "RNNCell":
		return example{fmt.Sprintf("1x%d", in("weight_ih", 1, 16)), "[batch, features]: the first layer is a recurrent cell"}, true
	case "Embedding", "EmbeddingBag":
		return example{"1x16:int64", "16 token ids: the first layer is an embedding"}, true
	case "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer":
		return example{"1x16x" + strconv.FormatInt(in("in_proj_weight", 1, 64), 10), "a sequence of 16 embeddings: the first layer is attention"}, true
	}
	switch {
	case strings.HasSuffix(name, "2d"):
		return example{fmt.Sprintf("1x%dx224x224", in("weight", 0, 3)), "an image [batch, channels, height, width]: the first layer (" + name + ") works on images"}, true
	case strings.HasSuffix(name, "1d"):
		return example{"1x16000", "audio, one second at 16 kHz [batch, samples]: the first layer (" + name + ") works along one axis"}, true
	}
	return example{}, false
}

// runMetadata records how libtorch is to call the method (its run
// options method, call and state: the archive's own method with the bound
// values, the lifted state kept inside the module) and which graph inputs
// are lifted state (canonical.MetaStartState).
func runMetadata(def *fts.Def, o Options, st []stateAttr) []canonical.StringPair {
	var call []string
	k := 0
	for _, prm := range def.Params[1:] {
		if v, ok := o.Bind[prm.Name]; ok {
			call = append(call, prm.Name+"="+bindString(v))
			continue
		}
		if typeName(prm.Type) == "Tensor" {
			call = append(call, fmt.Sprintf("%s=@%d", prm.Name, k))
			k++
		}
	}
	out := []canonical.StringPair{
		{Key: canonical.RunOptionKey(fts.Runtime, fts.RunMethod), Value: o.Method},
		{Key: canonical.RunOptionKey(fts.Runtime, fts.RunCall), Value: strings.Join(call, ",")},
	}
	var paths, inputs []string
	for _, s := range st {
		if s.tensor != nil {
			paths, inputs = append(paths, s.path), append(inputs, s.tensor.name)
		}
	}
	if len(paths) > 0 {
		out = append(out, canonical.StringPair{Key: canonical.RunOptionKey(fts.Runtime, fts.RunState), Value: strings.Join(paths, ",")},
			canonical.StringPair{Key: canonical.MetaStartState, Value: strings.Join(inputs, ",")})
	}
	return out
}

// bindString is a bound value as libtorch's call option spells it.
func bindString(v value) string {
	switch v := v.(type) {
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0" // a float, not an int
		}
		return s
	}
	return fmt.Sprint(v)
}
