// Package torchscript imports TorchScript archives (format "torchscript":
// torch.jit.save's .pt, .jit, .torchscript) without Python: the archive
// and its source are read by formats/torchscript, and the importer walks
// the chosen method (forward by default) with the module tree of data.pkl,
// inlining every submodule and function call, folding what is known when
// converting (Python ints, shapes, flags, the module's own constants) and
// mapping aten ops to ONNX nodes. An if on a tensor becomes an ONNX If; a
// loop with a trip count known when converting is unrolled. Input shapes
// are static: torch.jit.save keeps no example shapes, so each tensor
// input's shape is an option (-O shapes=1x3x224x224) unless it is given
// some other way. Nothing the archive holds is executed.
package torchscript

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/formats/pickle"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/options"
)

// Name is the importer and format name.
const Name = "torchscript"

// MaxArchiveBytes bounds the archives read.
const MaxArchiveBytes = 8 << 30

// Options of Import.
type Options struct {
	// Method is the method of the root module converted ("forward").
	Method string
	// Shapes are the static shapes of the tensor inputs, in order.
	Shapes [][]int64
	// DTypes are their element types (0: float32).
	DTypes []canonical.DataType
	// Bind gives values to the non-tensor inputs (int, float, bool):
	// they are folded into the graph.
	Bind map[string]value
	// Inputs is a folder of input samples (as --inputs reads them): the
	// tensor inputs' shapes and types are read from its first sample when
	// Shapes is empty.
	Inputs string
	// DynamicBatch makes the first dim of the inputs and outputs dynamic
	// ("N") when the graph allows it (see convertDynamicBatch).
	DynamicBatch bool
}

// New returns the TorchScript importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Init: func() Options { return Options{Method: "forward", Bind: map[string]value{}} },
		Options: []importers.Option[Options]{
			options.String("method", "forward", "the method of the root module to convert (reset_states and other methods are not converted)",
				func(o *Options) *string { return &o.Method }).Then(func(_ *Options, v string) error {
				if v == "" || strings.ContainsAny(v, " .") {
					return fmt.Errorf("a method name")
				}
				return nil
			}),
			{Spec: importers.OptionSpec{Name: "shapes", Kind: importers.KindList,
				Doc: "static shapes of the tensor inputs, in order, ';' between inputs, 'x' between dims, ':TYPE' after a shape for an input that is not float32: 1x3x224x224 or 2x7x10;2x5:int64 (a 0-d input: 's')"},
				Set: parseShapes},
			options.Bool("dynamic_batch", "false", "true: the first dim of every input and output is dynamic (N), when the graph depends on the batch size only through sizes (checked by converting at two batch sizes); false: static shapes",
				func(o *Options) *bool { return &o.DynamicBatch }),
			options.String(importers.OptionInputs, "", "a folder of input samples (as --inputs reads them, which sets it): the tensor inputs' shapes and element types are read from its first sample when shapes is not given",
				func(o *Options) *string { return &o.Inputs }),
			{Spec: importers.OptionSpec{Name: "bind", Kind: importers.KindList,
				Doc: "values of the int/float/bool inputs, folded into the graph: sr=16000 (',' between several)"},
				Set: parseBind},
		}}
}

func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "TorchScript archive (torch.jit.save of a traced or scripted module), read without Python",
		Extensions: []string{".pt", ".pth", ".jit", ".torchscript", ".ptl"},
		Magic:      []importers.Magic{{Offset: 0, Bytes: []byte("PK\x03\x04")}},
		Options:    optionSet().Specs(),
		Runtime:    "libtorch",
	}
}

// Detect is 1 for a zip whose first entry is <name>/data.pkl (torch.save
// and torch.jit.save write it first; a state_dict archive is then refused
// by Import with its fix), and for a pre-1.6 torch.save pickle or a .pt2
// (refused as well), else 0.
func (importer) Detect(path string, head []byte) float32 {
	if fts.Identify(head) != "" {
		return 1
	}
	return 0
}

// ParseOptions reads method, shapes, inputs, dynamic_batch and bind.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

// parseShapes reads the value of "shapes".
func parseShapes(o *Options, v string) error {
	for _, s := range strings.Split(v, ";") {
		s = strings.TrimSpace(s)
		dt := canonical.Float
		if sh, ty, ok := strings.Cut(s, ":"); ok {
			d, ok := inputTypes[strings.TrimSpace(ty)]
			if !ok {
				return fmt.Errorf("element type %q (float32, float64, float16, int64, int32, int8, uint8, bool)", ty)
			}
			s, dt = strings.TrimSpace(sh), d
		}
		o.DTypes = append(o.DTypes, dt)
		if s == "s" || s == "" {
			o.Shapes = append(o.Shapes, []int64{})
			continue
		}
		var dims []int64
		for _, d := range strings.Split(s, "x") {
			n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
			if err != nil || n < 0 || n > 1<<31 {
				return fmt.Errorf("dim %q is not a size", d)
			}
			dims = append(dims, n)
		}
		o.Shapes = append(o.Shapes, dims)
	}
	return nil
}

// parseBind reads the value of "bind".
func parseBind(o *Options, v string) error {
	for _, kv := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || name == "" {
			return fmt.Errorf("NAME=VALUE expected")
		}
		switch {
		case val == "True" || val == "true":
			o.Bind[name] = true
		case val == "False" || val == "false":
			o.Bind[name] = false
		default:
			if n, err := strconv.ParseInt(val, 10, 64); err == nil {
				o.Bind[name] = n
			} else if f, err := strconv.ParseFloat(val, 64); err == nil {
				o.Bind[name] = f
			} else {
				return fmt.Errorf("%q is not a number or bool", val)
			}
		}
	}
	return nil
}

var inputTypes = map[string]canonical.DataType{"float32": canonical.Float, "float": canonical.Float, "float64": canonical.Double,
	"float16": canonical.Float16, "int64": canonical.Int64, "int32": canonical.Int32, "int8": canonical.Int8, "uint8": canonical.Uint8, "bool": canonical.Bool}

func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	mp, warns, err := ImportFile(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &importers.Result{Model: mp, Warnings: warns}, nil
}

// ImportFile converts the archive at path to a canonical ONNX model.
func ImportFile(ctx context.Context, path string, o Options) (*canonical.Model, []string, error) {
	data, err := importers.ReadFile(path, MaxArchiveBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("torchscript import: %w", err)
	}
	a, err := fts.Open(path, data)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return Convert(a, o)
}

// Convert builds the ONNX model of method o.Method of the archive's root
// module.
//
// Module state: an attribute that the method assigns (self._state = …)
// is state carried from one call to the next. The method is walked once
// to find those attributes and their values after a call; then again with
// every tensor attribute among them lifted to a graph input named
// "state.<attribute path>" (state._state, state.decoder.h) of the shape it
// has after a call, whose new value is the output "state.<attribute
// path>.out"; number attributes keep the value they have after the first
// call. The caller feeds each output back into its input on the next
// call; zeros are the state of a module whose reset sets empty or zero
// tensors (Silero VAD's reset_states).
func Convert(a *fts.Archive, o Options) (*canonical.Model, []string, error) {
	if o.Method == "" {
		o.Method = "forward"
	}
	if len(o.Shapes) == 0 && o.Inputs != "" {
		_, _, def, err := rootMethod(a, o)
		if err != nil {
			return nil, nil, err
		}
		if err := samplesShapes(a.File, def, &o); err != nil {
			return nil, nil, err
		}
	}
	if o.DynamicBatch {
		return convertDynamicBatch(a, o)
	}
	return convertStatic(a, o)
}

func convertStatic(a *fts.Archive, o Options) (*canonical.Model, []string, error) {
	if o.Method == "" {
		o.Method = "forward"
	}
	first, err := walk(a, o, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(first.assigned) == 0 {
		return first.model(a, o, nil)
	}
	var st []stateAttr
	for _, as := range first.assigned {
		v := as.obj.attrs[as.name]
		sa := stateAttr{path: joinPath(as.obj.path, as.name), value: v}
		if t, ok := v.(*tensor); ok {
			sa.tensor = &tensor{name: "state." + sa.path, dt: t.dt, dims: t.dims}
		} else if !isNumber(v) {
			return nil, nil, &CodeError{File: a.File, Msg: fmt.Sprintf("%s assigns attribute %s the value %s, which is neither a tensor nor a number", o.Method, sa.path, describe(v))}
		}
		st = append(st, sa)
	}
	second, err := walk(a, o, st)
	if err != nil {
		return nil, nil, err
	}
	return second.model(a, o, st)
}

type stateAttr struct {
	path   string
	value  value   // after the first call
	tensor *tensor // the lifted input, nil for a number
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func isNumber(v value) bool {
	switch v.(type) {
	case nil, bool, int64, float64, string:
		return true
	}
	return false
}

// walked is one walk of the method.
type walked struct {
	c        *conv
	root     *object
	inputs   []build.Info
	ret      value
	assigned []assignment
	def      *fts.Def
}

// walk walks the method with the state attributes st preset (nil on the
// first walk).
func walk(a *fts.Archive, o Options, st []stateAttr) (w *walked, err error) {
	defer func() {
		// The walk checks what it reads; should a check be missing, hostile
		// source is still an error, not a crash.
		if r := recover(); r != nil {
			w, err = nil, &CodeError{File: a.File, Msg: fmt.Sprintf("the importer failed on this source (please report): %v", r)}
		}
	}()
	c, root, def, err := rootMethod(a, o)
	if err != nil {
		return nil, err
	}
	if err := c.checkParams(root, def, o); err != nil {
		return nil, err
	}
	w = &walked{c: c, root: root, def: def}
	var args []value
	k := 0
	for _, prm := range def.Params[1:] {
		typ := typeName(prm.Type)
		if v, ok := o.Bind[prm.Name]; ok {
			args = append(args, v)
			continue
		}
		switch {
		case typ == "Tensor":
			dt := canonical.Float
			if k < len(o.DTypes) && o.DTypes[k] != 0 {
				dt = o.DTypes[k]
			}
			t := &tensor{name: prm.Name, dt: dt, dims: o.Shapes[k]}
			k++
			c.b.Reserve(prm.Name)
			args = append(args, t)
			w.inputs = append(w.inputs, build.TensorInfo(t.name, t.dt, t.dims, false))
		default: // a default value (checkParams saw every other)
			v, err := c.eval(&frame{vars: map[string]value{}}, prm.Default)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
	}
	for _, s := range st {
		obj, name, err := c.objectAt(root, s.path)
		if err != nil {
			return nil, err
		}
		if s.tensor != nil {
			c.b.Reserve(s.tensor.name)
			obj.attrs[name] = s.tensor
			w.inputs = append(w.inputs, build.TensorInfo(s.tensor.name, s.tensor.dt, s.tensor.dims, false))
		} else {
			obj.attrs[name] = s.value
		}
	}
	c.track = true
	w.ret, err = c.invoke(def.P, def, root, args, nil)
	if err != nil {
		return nil, err
	}
	if err := c.unsup.Err(); err != nil {
		return nil, err
	}
	w.assigned = c.assigned
	return w, nil
}

// rootMethod reads the root module of data.pkl and finds its method
// o.Method, with a fresh conversion state.
func rootMethod(a *fts.Archive, o Options) (*conv, *object, *fts.Def, error) {
	c := &conv{file: a.File, a: a, b: build.New(17), unsup: &importers.UnsupportedOpsError{Format: Name, File: a.File}, aten: atenOps(), py: pyOps(),
		inits: map[*fts.TensorRef]*tensor{}, warned: map[string]bool{}}
	rootV, err := c.fromPickle(fts.Pos{}, a.Data, "")
	if err != nil {
		return nil, nil, nil, err
	}
	root, ok := rootV.(*object)
	if !ok {
		return nil, nil, nil, &fts.FormatError{File: a.File, Detail: "data.pkl does not hold a TorchScript module (found " + pickle.Describe(a.Data) + ")"}
	}
	cls, err := c.classOf(fts.Pos{}, root)
	if err != nil {
		return nil, nil, nil, err
	}
	var methods []string
	for _, m := range cls.Methods {
		methods = append(methods, m.Name)
		if m.Name == o.Method {
			if len(m.Params) == 0 {
				return nil, nil, nil, &CodeError{File: a.File, Pos: m.P, Msg: fmt.Sprintf("method %s has no self parameter", m.Name)}
			}
			return c, root, m, nil
		}
	}
	return nil, nil, nil, &importers.OptionError{Importer: Name, Key: "method", Value: o.Method, Known: methods,
		Err: fmt.Errorf("%s has no method %s (it has %s)", root.qual, o.Method, strings.Join(methods, ", "))}
}

// objectAt finds the object holding the attribute at path (a.b.name)
// below root.
func (c *conv) objectAt(root *object, path string) (*object, string, error) {
	parts := strings.Split(path, ".")
	obj := root
	for _, p := range parts[:len(parts)-1] {
		v, err := c.attr(fts.Pos{}, obj, p)
		if err != nil {
			return nil, "", err
		}
		o, ok := v.(*object)
		if !ok {
			return nil, "", &CodeError{File: c.file, Msg: fmt.Sprintf("state attribute %s: %s is not a module", path, p)}
		}
		obj = o
	}
	return obj, parts[len(parts)-1], nil
}

// model makes the ModelProto of a walk: the method's outputs, then the new
// value of each lifted state attribute.
func (w *walked) model(a *fts.Archive, o Options, st []stateAttr) (*canonical.Model, []string, error) {
	c := w.c
	var outs []*tensor
	if err := flatten(w.ret, &outs); err != nil {
		return nil, nil, &CodeError{File: a.File, Pos: w.def.P, Msg: fmt.Sprintf("%s returns %s: %v", o.Method, describe(w.ret), err)}
	}
	names := make([]string, len(outs))
	for i := range outs {
		names[i] = fmt.Sprintf("output_%d", i)
	}
	for _, s := range st {
		if s.tensor == nil {
			continue
		}
		obj, name, err := c.objectAt(w.root, s.path)
		if err != nil {
			return nil, nil, err
		}
		t, ok := obj.attrs[name].(*tensor)
		if !ok || t.dt != s.tensor.dt || !equalDims(t.dims, s.tensor.dims) {
			return nil, nil, &CodeError{File: a.File, Msg: fmt.Sprintf("state attribute %s is %s after the call and %s after two: its shape does not settle", s.path, describe(s.tensor), describe(obj.attrs[name]))}
		}
		outs = append(outs, t)
		names = append(names, s.tensor.name+".out")
	}
	var outputs []build.Info
	for i, t := range outs {
		c.b.Reserve(names[i])
		c.b.OpTo("Identity", names[i], []string{t.name})
		outputs = append(outputs, build.TensorInfo(names[i], t.dt, t.dims, false))
	}
	mp, err := c.b.Model(filepath.Base(a.File), w.inputs, outputs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", a.File, err)
	}
	mp.Graph.DocString = fmt.Sprintf("TorchScript %s.%s", w.root.qual, o.Method)
	if err := canonical.SetSourceTensors(mp, computed(mp, c.sources)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", a.File, err)
	}
	mp.MetadataProps = append(mp.MetadataProps, runMetadata(w.def, o, st)...)
	return mp, c.warns, nil
}

func flatten(v value, out *[]*tensor) error {
	switch v := v.(type) {
	case *tensor:
		*out = append(*out, v)
		return nil
	case *tuple:
		for _, x := range v.items {
			if err := flatten(x, out); err != nil {
				return err
			}
		}
		return nil
	case *list:
		for _, x := range v.items {
			if err := flatten(x, out); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("an output that is not a tensor (%s)", describe(v))
}

// typeName is the outer name of a type annotation: "Tensor", "int",
// "Optional", "List", "Tuple", or a class's dotted name.
func typeName(e fts.Expr) string {
	switch e := e.(type) {
	case nil:
		return ""
	case *fts.Subscript:
		return typeName(e.X)
	}
	return dotted(e)
}

// computed keeps the source tensors of the values a node of mp computes
// (not graph inputs, initializers or values the builder dropped).
func computed(mp *canonical.Model, src map[string]canonical.SourceTensor) map[string]canonical.SourceTensor {
	out := map[string]canonical.SourceTensor{}
	for name, s := range src {
		if v := mp.Graph.Lookup(name); v != nil {
			if p, _ := v.Producer(); p != nil {
				out[name] = s
			}
		}
	}
	return out
}
