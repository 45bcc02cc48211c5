package keraslayers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// Limits on hostile configs.
const (
	maxLayers = 100000
	maxDepth  = 32 // nested models
	maxDim    = 1 << 31
)

// kval is a Keras tensor as ONNX sees it: its value channels-last (cl,
// Keras's layout) and/or channels-first (cf); at least one is set.
type kval struct {
	cl, cf string
	rank   int // -1 unknown
	dt     canonical.DataType
}

type layerSpec struct {
	class, name string
	cfg         map[string]any
	inbound     []any
}

type converter struct {
	b      *build.Builder
	w      Weights
	opts   Options
	keras3 bool
	inits  map[string]string
	// kerasVersion is the topology's keras_version ("tfjs-layers 4.22.0").
	kerasVersion string
	depth        int
	nl           int
	// clIn names the graph inputs kept channels-last under LayoutNCHW;
	// cfIn records those made channels-first.
	clIn, cfIn map[string]bool
	// sources records the Keras tensor each ONNX value holds, for the
	// top-level layers (canonical.MetaSourceTensors).
	sources map[string]canonical.SourceTensor
}

// recordSource records that o is output index of call node of layer l
// ("layer:node:index", as TF.js's getOutputAt reads it).
func (c *converter) recordSource(l *layerSpec, node, index int, o *kval) {
	if c.sources == nil {
		c.sources = map[string]canonical.SourceTensor{}
	}
	t := fmt.Sprintf("%s:%d:%d", l.name, node, index)
	if o.cl != "" {
		c.sources[o.cl] = canonical.SourceTensor{Tensor: t, Op: l.class}
	}
	if o.cf != "" && o.rank >= 3 {
		c.sources[o.cf] = canonical.SourceTensor{Tensor: t, Op: l.class, Perm: layout.ToLast(o.rank)}
	}
}

// clOnlyInputs returns the channels-first graph inputs gin whose only
// readers among the main graph's nodes (readers: name -> op types) are
// Transposes back to channels-last.
func clOnlyInputs(readers map[string][]string, gin []build.Info) map[string]bool {
	out := map[string]bool{}
	for _, v := range gin {
		r := 0
		if _, dims, hasShape, ok := canonical.TensorTypeOf(v.Type); ok && hasShape {
			r = len(dims)
		}
		rs := readers[v.Name]
		if !channelsFirstIO(LayoutNCHW, r) || len(rs) == 0 {
			continue
		}
		all := true
		for _, op := range rs {
			all = all && op == "Transpose"
		}
		if all {
			out[v.Name] = true
		}
	}
	return out
}

// Convert maps a Keras model config to ONNX (see the package doc).
func Convert(config []byte, w Weights, opts Options) (*canonical.Model, error) {
	var top map[string]any
	if err := json.Unmarshal(config, &top); err != nil {
		return nil, fmt.Errorf("%s: the Keras model config is not a JSON object: %w", opts.File, err)
	}
	return ConvertConfig(top, w, opts)
}

// ConvertConfig is Convert on an already decoded config object.
func ConvertConfig(top map[string]any, w Weights, opts Options) (*canonical.Model, error) {
	if opts.Opset != 0 && opts.Opset < 14 {
		return nil, fmt.Errorf("keraslayers: opset %d: use 14 or later", opts.Opset)
	}
	switch opts.Layout {
	case "", LayoutNHWC, LayoutNCHW:
	default:
		return nil, &LayoutError{Layout: opts.Layout}
	}
	kv, _ := top["keras_version"].(string)
	if mc, ok := top["model_config"].(map[string]any); ok {
		top = mc
	}
	if w == nil {
		w = WeightMap{}
	}
	convert := func(clIn map[string]bool) (*converter, *layerSpec, []*kval, []build.Info, error) {
		c := &converter{b: build.New(opts.Opset), w: w, opts: opts, keras3: opts.Keras3, inits: map[string]string{},
			kerasVersion: kv, clIn: clIn}
		if m, _ := top["module"].(string); strings.HasPrefix(m, "keras") {
			c.keras3 = true
		}
		spec, err := c.spec(top)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		c.nl = 0
		// The graph outputs are named after the output layers: keep
		// those names free.
		c.b.Reserve(outputNames(spec, max(1, len(refList(spec.cfg["output_layers"]))))...)
		_, outs, gin, err := c.topModel(spec)
		return c, spec, outs, gin, err
	}
	c, spec, outs, gin, err := convert(nil)
	if err != nil {
		return nil, err
	}
	if opts.Layout == LayoutNCHW {
		// An input the layers read only channels-last (a sequence into an
		// LSTM or a Dense) is not image-like: convert again with it
		// channels-last, saving the Transpose that read it.
		if clIn := clOnlyInputs(c.b.Readers(), gin); len(clIn) > 0 {
			if c, spec, outs, gin, err = convert(clIn); err != nil {
				return nil, err
			}
		}
	}
	names := outputNames(spec, max(1, len(refList(spec.cfg["output_layers"]))))
	var gout []build.Info
	if len(names) != len(outs) {
		names = outputNames(spec, len(outs))
		c.b.Reserve(names...)
	}
	var cfIO []string
	for _, v := range gin {
		if c.cfIn[v.Name] {
			cfIO = append(cfIO, v.Name)
		}
	}
	for i, o := range outs {
		get := c.cl
		// An output is channels-first when it is image-like: computed
		// channels-first by the layer that makes it.
		if channelsFirstIO(opts.Layout, o.rank) && o.cf != "" {
			get = c.cf
			cfIO = append(cfIO, names[i])
		}
		x, err := get(o)
		if err != nil {
			return nil, err
		}
		name := names[i]
		c.b.OpTo("Identity", name, []string{x})
		gout = append(gout, build.RankInfo(name, o.dt, o.rank))
	}
	mp, err := c.b.Model(spec.name, gin, gout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	mp.Graph.DocString = "converted from a Keras " + spec.class + " model by onnxconv"
	src := map[string]canonical.SourceTensor{}
	for name, t := range c.sources {
		if v := mp.Graph.Lookup(name); v != nil {
			if p, _ := v.Producer(); p != nil {
				src[name] = t
			}
		}
	}
	if err := canonical.SetSourceTensors(mp, src); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	if err := c.opts.Custom.Attach(mp); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	if opts.Layout == LayoutNCHW {
		mp.MetadataProps = append(mp.MetadataProps,
			canonical.StringPair{Key: MetaLayout, Value: LayoutNCHW},
			canonical.StringPair{Key: MetaChannelsFirst, Value: strings.Join(cfIO, ",")})
	}
	return mp, nil
}

func outputNames(spec *layerSpec, n int) []string {
	out := make([]string, n)
	ols := refList(spec.cfg["output_layers"])
	for i := range out {
		out[i] = "output_" + strconv.Itoa(i)
		if i < len(ols) && ols[i].layer != "" {
			out[i] = ols[i].layer
		}
	}
	if spec.class == "Sequential" && n == 1 {
		if ls := layerList(spec.cfg); len(ls) > 0 {
			if m, ok := ls[len(ls)-1].(map[string]any); ok {
				if cfg, ok := m["config"].(map[string]any); ok {
					if s, ok := cfg["name"].(string); ok && s != "" {
						out[0] = s
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, n := range out {
		if seen[n] {
			out[i] = fmt.Sprintf("%s_%d", n, i)
		}
		seen[out[i]] = true
	}
	return out
}

func (c *converter) errf(l *layerSpec, format string, args ...any) error {
	return &LayerError{File: c.opts.File, Layer: l.name, Class: l.class, Err: fmt.Errorf(format, args...)}
}

func (c *converter) spec(m map[string]any) (*layerSpec, error) {
	c.nl++
	if c.nl > maxLayers {
		return nil, fmt.Errorf("%s: more than %d layers", c.opts.File, maxLayers)
	}
	cls, _ := m["class_name"].(string)
	if cls == "" {
		return nil, fmt.Errorf("%s: a layer has no class_name", c.opts.File)
	}
	s := &layerSpec{class: cls}
	switch cfg := m["config"].(type) {
	case map[string]any:
		s.cfg = cfg
	case []any: // old Keras Sequential: the config is the layer list
		s.cfg = map[string]any{"layers": cfg}
	default:
		s.cfg = map[string]any{}
	}
	s.name, _ = s.cfg["name"].(string)
	if n, ok := m["name"].(string); ok && n != "" {
		s.name = n
	}
	if ib, ok := m["inbound_nodes"].([]any); ok {
		s.inbound = ib
	}
	return s, nil
}

func layerList(cfg map[string]any) []any {
	ls, _ := cfg["layers"].([]any)
	return ls
}

type tref struct {
	layer       string
	node, index int
}

// refList reads input_layers / output_layers: [[name, node, index], ...]
// or one [name, node, index].
func refList(v any) []tref {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil
	}
	if _, one := l[0].(string); one {
		l = []any{l}
	}
	var out []tref
	for _, e := range l {
		if r, ok := parseRef(e); ok {
			out = append(out, r)
		}
	}
	return out
}

func parseRef(e any) (tref, bool) {
	a, ok := e.([]any)
	if !ok || len(a) < 1 {
		return tref{}, false
	}
	name, ok := a[0].(string)
	if !ok {
		return tref{}, false
	}
	r := tref{layer: name}
	if len(a) > 1 {
		r.node = toInt(a[1])
	}
	if len(a) > 2 {
		r.index = toInt(a[2])
	}
	return r, true
}

func toInt(v any) int {
	switch x := v.(type) {
	case float64:
		if x >= 0 && x < 1<<30 {
			return int(x)
		}
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

// nodeRefs reads one inbound node: Keras 2 [[name, node, index, kw], ...]
// or Keras 3 {"args": [...], "kwargs": {...}}.
func nodeRefs(node any) []tref {
	var out []tref
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 16 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if cn, _ := x["class_name"].(string); cn == "__keras_tensor__" {
				if cfg, ok := x["config"].(map[string]any); ok {
					if r, ok := parseRef(cfg["keras_history"]); ok {
						out = append(out, r)
					}
				}
				return
			}
			walk(x["args"], depth+1)
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	if l, ok := node.([]any); ok {
		for _, e := range l {
			if r, ok := parseRef(e); ok {
				out = append(out, r)
			} else {
				walk(e, 0)
			}
		}
		return out
	}
	walk(node, 0)
	return out
}

func key(r tref) string { return fmt.Sprintf("%s:%d:%d", r.layer, r.node, r.index) }

// inputShape reads a layer's batch input shape (batch_input_shape,
// batch_shape, or input_shape without the batch).
func inputShape(cfg map[string]any) ([]int64, bool) {
	for _, k := range []string{"batch_input_shape", "batch_shape"} {
		if l, ok := cfg[k].([]any); ok {
			return dims(l), true
		}
	}
	if l, ok := cfg["input_shape"].([]any); ok {
		return append([]int64{-1}, dims(l)...), true
	}
	return nil, false
}

func dims(l []any) []int64 {
	out := make([]int64, len(l))
	for i, v := range l {
		out[i] = -1
		if f, ok := v.(float64); ok && f >= 0 && f < maxDim {
			out[i] = int64(f)
		}
	}
	return out
}

func dtypeOf(cfg map[string]any, def canonical.DataType) canonical.DataType {
	s, _ := cfg["dtype"].(string)
	if m, ok := cfg["dtype"].(map[string]any); ok { // Keras 3 DTypePolicy
		if mc, ok := m["config"].(map[string]any); ok {
			s, _ = mc["name"].(string)
		}
	}
	switch s {
	case "int32":
		return canonical.Int32
	case "int64":
		return canonical.Int64
	case "float16":
		return canonical.Float16
	case "float64":
		return canonical.Double
	case "bool":
		return canonical.Bool
	}
	return def
}

// topModel converts the top model, making graph inputs.
func (c *converter) topModel(spec *layerSpec) ([]*kval, []*kval, []build.Info, error) {
	def := c.opts.InputDType
	if def == 0 {
		def = canonical.Float
	}
	var gin []build.Info
	mk := func(name string, shape []int64, dt canonical.DataType) *kval {
		n := c.b.Fresh(name)
		if r := len(shape); channelsFirstIO(c.opts.Layout, r) && !c.clIn[n] {
			if c.cfIn == nil {
				c.cfIn = map[string]bool{}
			}
			c.cfIn[n] = true
			// Channels-first at the edge: N, C, then the spatial dims.
			cf := append([]int64{shape[0], shape[r-1]}, shape[1:r-1]...)
			gin = append(gin, build.TensorInfo(n, dt, cf, false))
			return &kval{cf: n, rank: r, dt: dt}
		}
		gin = append(gin, build.TensorInfo(n, dt, shape, false))
		return &kval{cl: n, rank: len(shape), dt: dt}
	}
	switch spec.class {
	case "Sequential":
		ls := layerList(spec.cfg)
		if len(ls) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: Sequential model %q has no layers", c.opts.File, spec.name)
		}
		first, ok := ls[0].(map[string]any)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%s: Sequential model %q: a layer is not an object", c.opts.File, spec.name)
		}
		fs, err := c.spec(first)
		if err != nil {
			return nil, nil, nil, err
		}
		shape, ok := inputShape(fs.cfg)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%s: Sequential model %q: its first layer %q gives no input shape (batch_input_shape)", c.opts.File, spec.name, fs.name)
		}
		name := fs.name
		if fs.class != "InputLayer" {
			name += "_input"
		}
		in := mk(name, shape, dtypeOf(fs.cfg, def))
		outs, err := c.sequential(spec, nil, []*kval{in})
		return []*kval{in}, outs, gin, err
	case "Functional", "Model":
		var ins []*kval
		feeds := map[string]*kval{}
		for _, r := range refList(spec.cfg["input_layers"]) {
			var il map[string]any
			for _, e := range layerList(spec.cfg) {
				m, _ := e.(map[string]any)
				if m == nil {
					continue
				}
				s, err := c.spec(m)
				if err != nil {
					return nil, nil, nil, err
				}
				if s.name == r.layer {
					il = s.cfg
				}
			}
			if il == nil {
				return nil, nil, nil, fmt.Errorf("%s: model %q: input layer %q is not among its layers", c.opts.File, spec.name, r.layer)
			}
			shape, ok := inputShape(il)
			if !ok {
				return nil, nil, nil, fmt.Errorf("%s: model %q: input layer %q has no batch_input_shape", c.opts.File, spec.name, r.layer)
			}
			v := mk(r.layer, shape, dtypeOf(il, def))
			ins = append(ins, v)
			feeds[key(r)] = v
		}
		outs, err := c.functional(spec, nil, feeds)
		return ins, outs, gin, err
	}
	return nil, nil, nil, fmt.Errorf("%s: the top model is a %q, not a Sequential or Functional model", c.opts.File, spec.class)
}

func (c *converter) sequential(spec *layerSpec, path []string, in []*kval) ([]*kval, error) {
	leave, err := c.enter()
	defer leave()
	if err != nil {
		return nil, err
	}
	cur := in
	err = c.eachLayer(spec, func(l *layerSpec) error {
		if l.class == "InputLayer" {
			return nil
		}
		var err error
		if cur, err = c.call(l, path, cur); err != nil {
			return err
		}
		if len(path) == 0 {
			for j, o := range cur {
				c.recordSource(l, 0, j, o)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cur, nil
}

// enter counts one more level of models nested in models, refused past
// maxDepth; the caller defers leave (also on an error).
func (c *converter) enter() (leave func(), err error) {
	c.depth++
	leave = func() { c.depth-- }
	if c.depth > maxDepth {
		return leave, fmt.Errorf("%s: models nested more than %d deep", c.opts.File, maxDepth)
	}
	return leave, nil
}

// eachLayer reads the layers of model spec in order, calling f on each.
func (c *converter) eachLayer(spec *layerSpec, f func(*layerSpec) error) error {
	for _, e := range layerList(spec.cfg) {
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: model %q: a layer is not an object", c.opts.File, spec.name)
		}
		l, err := c.spec(m)
		if err != nil {
			return err
		}
		if err := f(l); err != nil {
			return err
		}
	}
	return nil
}

// functional converts a functional model whose input tensors are feeds
// (keyed "layer:node:index" of its input layers).
func (c *converter) functional(spec *layerSpec, path []string, feeds map[string]*kval) ([]*kval, error) {
	leave, err := c.enter()
	defer leave()
	if err != nil {
		return nil, err
	}
	vals := map[string]*kval{}
	for k, v := range feeds {
		vals[k] = v
	}
	var layers []*layerSpec
	if err := c.eachLayer(spec, func(l *layerSpec) error {
		layers = append(layers, l)
		return nil
	}); err != nil {
		return nil, err
	}
	type pending struct {
		l    *layerSpec
		node int
		refs []tref
	}
	var work []pending
	for _, l := range layers {
		if l.class == "InputLayer" {
			continue
		}
		for i, nd := range l.inbound {
			work = append(work, pending{l: l, node: i, refs: nodeRefs(nd)})
		}
	}
	// TF.js counts the node a nested model makes when it is built, so its
	// first call is node 1 there (Keras renumbers): try that first.
	models := map[string]bool{}
	for _, l := range layers {
		if l.class == "Sequential" || l.class == "Functional" || l.class == "Model" {
			models[l.name] = true
		}
	}
	tfjsNumbering := strings.HasPrefix(c.kerasVersion, "tfjs")
	lookup := func(r tref) (*kval, bool) {
		if tfjsNumbering && models[r.layer] && r.node > 0 {
			if v, ok := vals[key(tref{layer: r.layer, node: r.node - 1, index: r.index})]; ok {
				return v, true
			}
		}
		v, ok := vals[key(r)]
		return v, ok
	}
	// A worklist: a call waits on the first call whose output it lacks and
	// is queued again when that call is done (linear in the calls, whatever
	// the order of the layers in the file).
	callKey := func(layer string, node int) string { return fmt.Sprintf("%s:%d", layer, node) }
	waiting := map[string][]int{}
	done := make([]bool, len(work))
	queue := make([]int, len(work))
	for i := range queue {
		queue[i] = i
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		p := work[i]
		if done[i] {
			continue
		}
		ins := make([]*kval, 0, len(p.refs))
		var missing *tref
		for _, r := range p.refs {
			v, ok := lookup(r)
			if !ok {
				missing = &r
				break
			}
			ins = append(ins, v)
		}
		if missing != nil {
			waiting[callKey(missing.layer, missing.node)] = append(waiting[callKey(missing.layer, missing.node)], i)
			if missing.node > 0 {
				k := callKey(missing.layer, missing.node-1)
				waiting[k] = append(waiting[k], i)
			}
			continue
		}
		if len(ins) == 0 {
			return nil, c.errf(p.l, "call %d has no inputs", p.node)
		}
		outs, err := c.call(p.l, path, ins)
		if err != nil {
			return nil, err
		}
		done[i] = true
		for j, o := range outs {
			vals[key(tref{layer: p.l.name, node: p.node, index: j})] = o
			if len(path) == 0 {
				c.recordSource(p.l, p.node, j, o)
			}
		}
		k := callKey(p.l.name, p.node)
		queue = append(queue, waiting[k]...)
		delete(waiting, k)
	}
	for i, d := range done {
		if !d {
			return nil, c.errf(work[i].l, "its inputs %v are never computed (a cycle, or a missing layer)", work[i].refs)
		}
	}
	var outs []*kval
	for _, r := range refList(spec.cfg["output_layers"]) {
		v, ok := lookup(r)
		if !ok {
			return nil, fmt.Errorf("%s: model %q: output %s[%d][%d] is not computed", c.opts.File, spec.name, r.layer, r.node, r.index)
		}
		outs = append(outs, v)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%s: model %q has no output_layers", c.opts.File, spec.name)
	}
	return outs, nil
}

// call applies layer l (inside the nested models path) to ins.
func (c *converter) call(l *layerSpec, path []string, ins []*kval) ([]*kval, error) {
	lp := append(append([]string{}, path...), l.name)
	switch l.class {
	case "Sequential":
		return c.sequential(l, lp, ins)
	case "Functional", "Model":
		feeds := map[string]*kval{}
		refs := refList(l.cfg["input_layers"])
		if len(refs) != len(ins) {
			return nil, c.errf(l, "the nested model takes %d inputs, is given %d", len(refs), len(ins))
		}
		for i, r := range refs {
			feeds[key(r)] = ins[i]
		}
		return c.functional(l, lp, feeds)
	}
	fn, ok := layerTable()[l.class]
	if !ok && c.opts.Custom.Lookup(l.class) == nil {
		return nil, &LayerError{File: c.opts.File, Layer: l.name, Class: l.class, Unsupported: true}
	}
	lw, err := c.w.LayerWeights(lp)
	if err != nil {
		return nil, &LayerError{File: c.opts.File, Layer: l.name, Class: l.class, Err: fmt.Errorf("reading its weights: %w", err)}
	}
	if !ok {
		fn = (*layerCtx).customLayer
	}
	ctx := &layerCtx{c: c, l: l, path: lp, w: lw}
	outs, err := fn(ctx, ins)
	if err != nil {
		var le *LayerError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, &LayerError{File: c.opts.File, Layer: l.name, Class: l.class, Err: err}
	}
	return outs, nil
}

// cl returns v channels-last.
func (c *converter) cl(v *kval) (string, error) {
	if v.cl != "" {
		return v.cl, nil
	}
	v.cl = c.b.Transpose(v.cf, layout.Int64s(layout.ToLast(v.rank)), v.cf+"_cl")
	return v.cl, nil
}

// cf returns v channels-first (rank >= 3).
func (c *converter) cf(v *kval) (string, error) {
	if v.cf != "" {
		return v.cf, nil
	}
	if v.rank < 3 {
		return "", fmt.Errorf("a tensor of rank >= 3 was expected, got rank %d", v.rank)
	}
	v.cf = c.b.Transpose(v.cl, layout.Int64s(layout.ToFirst(v.rank)), v.cl+"_cf")
	return v.cf, nil
}
