package tflite

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/onnxconv/onnxconv/importers/custom"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// layout of an ONNX value relative to its TFLite tensor.
type layout int

const (
	native layout = iota // as in TFLite (NHWC for 4-D activations)
	nchw                 // 4-D tensor transposed with perm [0,3,1,2]
)

type layoutKey struct {
	idx int
	lay layout
}

type converter struct {
	opts Options
	m    *model
	g    *subgraph
	// b builds this graph (a Sub builder in a subgraph): initializers go
	// to the main graph, names come from names.
	b     *build.Builder
	names *canonical.Namer
	base  []string             // unique ONNX base name per tensor
	raw   map[layoutKey]string // value holding the tensor (quantized if it is) in a layout
	flt   map[layoutKey]string // dequantized value in a layout
	qp    map[int][2]string    // scale and zero-point initializers per tensor
	isIn  map[int]bool
	isOut map[int]bool
	// consumers counts the ops reading each tensor (for layout choices).
	consumers map[int][]*operator
	// sub is the index of g in the model; depth counts the subgraphs
	// being converted (main = 1), bounded by maxSubgraphDepth.
	sub, depth int
	// root is the converter of the main graph (c itself there): subgraph
	// converters put their initializers in its graph (outer scope).
	root *converter
	// parent is the converter of the graph holding this one (nil in main).
	parent *converter
	// inBody is true in an If branch or Loop body, where resource
	// variables cannot be assigned.
	inBody bool
	// handles maps resource tensors (VAR_HANDLE outputs) to variable keys.
	handles map[int]string
	st      *state
}

// state is what all subgraph converters of one Import share.
type state struct {
	// vars holds the current ONNX value of each resource variable.
	vars     map[string]string
	assigned []string
	// tables holds the hash tables HASHTABLE creates, by table id.
	tables map[int32]*hashTable
	// subgraphs counts the subgraph conversions (bounded); ops the
	// operators they hold together (bounded by opBudget).
	subgraphs int
	ops       int
	// custom is the user's functions for custom operators
	// (Options.Custom).
	custom *custom.Set
	// inputValues are the values graph inputs must hold for the
	// interpreter to compute what the graph computes (by ONNX input
	// name; verify.InputValuesKey).
	inputValues map[string][]int64
}

// newConverter prepares the conversion of subgraph g: tensor names kept,
// made unique and non-empty within names (shared by all subgraphs, as ONNX
// names are unique across nested graphs).
func newConverter(m *model, g *subgraph, opts Options, names *canonical.Namer, st *state) *converter {
	c := &converter{
		opts: opts, m: m, g: g,
		names:     names,
		raw:       map[layoutKey]string{},
		flt:       map[layoutKey]string{},
		qp:        map[int][2]string{},
		isIn:      map[int]bool{},
		isOut:     map[int]bool{},
		consumers: map[int][]*operator{},
		handles:   map[int]string{},
		st:        st,
	}
	c.root = c
	for _, i := range g.inputs {
		c.isIn[int(i)] = true
	}
	for _, i := range g.outputs {
		c.isOut[int(i)] = true
	}
	for _, o := range g.ops {
		for _, i := range o.inputs {
			if i >= 0 {
				c.consumers[int(i)] = append(c.consumers[int(i)], o)
			}
		}
	}
	c.base = make([]string, len(g.tensors))
	raw := make([]string, len(g.tensors))
	for i, t := range g.tensors {
		raw[i] = t.name
	}
	// formats/tflite's naming rule, which the TFLite runtime applies too;
	// a subgraph's names are made unique against its parents'.
	names0 := formats.TensorNames(raw)
	if len(m.subgraphs) > 0 && g == m.subgraphs[0] {
		names0 = formats.IONames(raw, g.inputs, g.outputs, m.sigIO)
	}
	for i, name := range names0 {
		if c.names.Used(name) {
			name = c.unique(name)
		}
		c.names.Reserve(name)
		c.base[i] = name
	}
	return c
}

func convertModel(m *model, opts Options) (*canonical.Model, error) {
	g := m.subgraphs[opts.Subgraph]
	st := &state{vars: map[string]string{}, inputValues: map[string][]int64{}, tables: map[int32]*hashTable{}}
	if opts.Custom != "" {
		var err error
		if st.custom, err = custom.Load(opts.Custom); err != nil {
			return nil, err
		}
	}
	c := newConverter(m, g, opts, canonical.NewNamer(nil), st)
	c.sub = opts.Subgraph
	c.depth = 1
	c.b = build.WithNamer(opts.Opset, c.names)

	graphName := g.name
	if graphName == "" {
		graphName = "main"
	}
	var inputs, outputs []build.Info
	produced := map[int]bool{}
	var runtimeDims []string
	for _, i := range g.inputs {
		t := g.tensors[i]
		if t.data != nil {
			continue // constant fed as input: an initializer
		}
		vi, err := c.valueInfo(c.base[i], t, true)
		if err != nil {
			return nil, fmt.Errorf("tflite: graph input %q: %w", t.name, err)
		}
		inputs = append(inputs, vi)
		c.raw[layoutKey{int(i), native}] = c.base[i]
		produced[int(i)] = true
		// The interpreter runs a dynamic dim at its static placeholder
		// size (it cannot resize inputs): verification generates that.
		for k, d := range vi.Type.GetTensorType().GetShape().GetDim() {
			if p := d.GetDimParam(); p != "" && k < len(t.static) && t.static[k] > 0 {
				runtimeDims = append(runtimeDims, fmt.Sprintf("%s=%d", p, t.static[k]))
			}
		}
	}
	// Variable tensors (LSTM state) without data start at zero.
	for i, t := range g.tensors {
		if t.variable && t.data == nil && !produced[i] {
			produced[i] = true
		}
	}
	if err := c.unsupportedOps(); err != nil {
		return nil, err
	}
	for _, o := range g.ops {
		if err := c.convertOp(o); err != nil {
			return nil, fmt.Errorf("tflite: operator %d (%s, output %q): %w", o.index, opName(o), c.firstOutName(o), err)
		}
	}
	for _, i := range g.outputs {
		t := g.tensors[i]
		name, err := c.rawValue(int(i), native)
		if err != nil {
			return nil, fmt.Errorf("tflite: graph output %q: %w", t.name, err)
		}
		if name != c.base[i] {
			// A graph input or an alias: give the output its own name.
			out := c.unique(c.base[i] + "_output")
			c.node("Identity", []string{name}, []string{out})
			name = out
		}
		vi, err := c.valueInfo(name, t, true)
		if err != nil {
			return nil, fmt.Errorf("tflite: graph output %q: %w", t.name, err)
		}
		outputs = append(outputs, vi)
	}
	mp, err := c.b.Model(graphName, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("tflite: %w", err)
	}
	if err := st.custom.Attach(mp); err != nil {
		return nil, err
	}
	if err := canonical.SetSourceTensors(mp, c.sourceTensors(mp)); err != nil {
		return nil, fmt.Errorf("tflite: %w", err)
	}
	graph := mp.Graph
	if len(c.st.assigned) > 0 {
		// Resource variables written by the main graph keep their value
		// across invocations in TFLite; the ONNX graph computes one
		// invocation (the first) and cannot carry state out.
		graph.DocString = strings.TrimSpace(graph.DocString + "\nresource variables written (state not carried across runs): " + strings.Join(c.st.assigned, ", "))
	}
	mp.ModelVersion = int64(m.version)
	if m.description != "" {
		mp.DocString = m.description
		graph.DocString = m.description
	}
	meta := func(k, v string) {
		mp.MetadataProps = append(mp.MetadataProps, canonical.StringPair{Key: k, Value: v})
	}
	meta("source_format", "tflite")
	if len(runtimeDims) > 0 {
		// verify.RuntimeDimsKey: the sizes the TFLite interpreter runs
		// the dynamic dims of the inputs at.
		meta("onnxconv.runtime_dims", strings.Join(runtimeDims, ","))
	}
	if len(c.st.inputValues) > 0 {
		// verify.InputValuesKey: a TRANSPOSE_CONV's output_shape fed
		// as a graph input.
		b, err := json.Marshal(c.st.inputValues)
		if err != nil {
			return nil, fmt.Errorf("tflite: %w", err)
		}
		meta("onnxconv.input_values", string(b))
	}
	meta("tflite.schema_version", strconv.FormatUint(uint64(m.version), 10))
	if m.description != "" {
		meta("tflite.description", m.description)
	}
	if len(m.subgraphs) > 1 || g.name != "" {
		meta("tflite.subgraph", fmt.Sprintf("%d:%s", c.opts.Subgraph, g.name))
	}
	for _, s := range m.signatures {
		meta("tflite.signature", s)
	}
	for _, k := range m.metaOrder {
		v := m.metadata[k]
		s := strings.TrimRight(string(v), "\x00")
		if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			meta("tflite.metadata."+k, s)
		} else {
			meta("tflite.metadata."+k, "base64:"+base64.StdEncoding.EncodeToString(v))
		}
	}
	return mp, nil
}

// unique returns s, or s_N when s is taken (canonical's namer).
func (c *converter) unique(s string) string { return c.names.Fresh(s) }

func (c *converter) firstOutName(o *operator) string {
	if len(o.outputs) > 0 {
		return c.g.tensors[o.outputs[0]].name
	}
	return ""
}

// ---- ONNX building helpers -------------------------------------------------

func (c *converter) node(op string, in, out []string, attrs ...*canonical.Attribute) {
	c.b.Node(op, in, out, attrs...)
}

func (c *converter) addInit(name string, dt canonical.DataType, dims []int64, raw []byte) string {
	return c.b.Init(name, dt, dims, raw)
}

func (c *converter) constI64(name string, v []int64) string { return c.b.Ints(name, v...) }

func (c *converter) constF32(name string, dims []int64, v []float32) string {
	return c.b.F32(name, dims, v)
}

func (c *converter) scalarF32(name string, v float32) string {
	return c.constF32(name, nil, []float32{v})
}

func onnxType(t fb.TensorType) (canonical.DataType, error) {
	switch t {
	case fb.TensorTypeFLOAT32:
		return canonical.Float, nil
	case fb.TensorTypeFLOAT16:
		return canonical.Float16, nil
	case fb.TensorTypeBFLOAT16:
		return canonical.BFloat16, nil
	case fb.TensorTypeFLOAT64:
		return canonical.Double, nil
	case fb.TensorTypeINT32:
		return canonical.Int32, nil
	case fb.TensorTypeUINT32:
		return canonical.Uint32, nil
	case fb.TensorTypeINT64:
		return canonical.Int64, nil
	case fb.TensorTypeUINT64:
		return canonical.Uint64, nil
	case fb.TensorTypeINT16:
		return canonical.Int16, nil
	case fb.TensorTypeUINT16:
		return canonical.Uint16, nil
	case fb.TensorTypeINT8:
		return canonical.Int8, nil
	case fb.TensorTypeUINT8:
		return canonical.Uint8, nil
	case fb.TensorTypeBOOL:
		return canonical.Bool, nil
	case fb.TensorTypeSTRING:
		return canonical.String, nil
	case fb.TensorTypeINT4:
		return canonical.Int4, nil
	}
	return 0, fmt.Errorf("tensor type %s has no ONNX equivalent", t)
}

func (c *converter) valueInfo(name string, t *tensor, static bool) (build.Info, error) {
	dt, err := onnxType(t.typ)
	if err != nil {
		return build.Info{}, err
	}
	dims := make([]canonical.Dim, len(t.shape))
	for i, d := range t.shape {
		if t.sig != nil && t.sig[i] < 0 || d < 0 {
			dims[i] = canonical.Dim{Param: fmt.Sprintf("%s_dim%d", name, i)}
			if i == 0 {
				dims[i] = canonical.Dim{Param: "batch"}
			}
		} else {
			dims[i] = canonical.Dim{Value: d, Known: true}
		}
	}
	return build.Info{Name: name, Type: canonical.TensorTypeDims(dt, dims)}, nil
}

// ---- tensors, layouts and quantization ------------------------------------

func (c *converter) tensor(idx int32) *tensor { return c.g.tensors[idx] }

// isQuant reports whether a tensor holds quantized integers that the QDQ
// graph dequantizes.
func isQuant(t *tensor) bool {
	if t.q == nil {
		return false
	}
	switch t.typ {
	case fb.TensorTypeINT8, fb.TensorTypeUINT8, fb.TensorTypeINT16, fb.TensorTypeUINT16,
		fb.TensorTypeINT32, fb.TensorTypeINT64, fb.TensorTypeINT4:
		return true
	}
	return false
}

func rank4(t *tensor) bool { return len(t.shape) == 4 }

// available reports which layouts of a tensor already exist.
func (c *converter) available(idx int32) (nat, ch bool) {
	_, nat = c.raw[layoutKey{int(idx), native}]
	_, ch = c.raw[layoutKey{int(idx), nchw}]
	return
}

// prefers picks the layout a layout-agnostic op should read a tensor in.
func (c *converter) prefers(idx int32) layout {
	if c.opts.KeepNHWC || !rank4(c.tensor(idx)) || c.tensor(idx).data != nil {
		return native
	}
	nat, ch := c.available(idx)
	if ch || !nat {
		return nchw
	}
	return native
}

// chooseLayout picks the layout for an elementwise op over several inputs of
// the output's rank: the layout that needs the fewest transposes, NCHW on a
// tie when any input is already NCHW.
func (c *converter) chooseLayout(inputs []int32, outRank int) layout {
	if c.opts.KeepNHWC || outRank != 4 {
		return native
	}
	costN, costC, anyC := 0, 0, false
	for _, i := range inputs {
		if i < 0 {
			continue
		}
		t := c.tensor(i)
		if t.data != nil {
			continue
		}
		if len(t.shape) != 4 {
			return native // a non-constant broadcast operand of lower rank
		}
		nat, ch := c.available(i)
		if !nat {
			costN++
		}
		if !ch {
			costC++
		}
		if ch {
			anyC = true
		}
	}
	if costC < costN || (costC == costN && anyC) {
		return nchw
	}
	return native
}

// layoutName is the ONNX name of a tensor in a layout: the TFLite name for
// the value that carries it (the native one for graph inputs and outputs,
// else the one produced first).
func (c *converter) layoutName(idx int, lay layout) string {
	if c.opts.KeepNHWC {
		if lay == native {
			return c.base[idx]
		}
		return c.unique(c.base[idx] + "_nchw")
	}
	if lay == native {
		if c.isIn[idx] || c.isOut[idx] {
			return c.base[idx]
		}
		if _, ok := c.raw[layoutKey{idx, nchw}]; ok {
			return c.unique(c.base[idx] + "_nhwc")
		}
		return c.base[idx]
	}
	if c.isIn[idx] || c.isOut[idx] {
		return c.unique(c.base[idx] + "_nchw")
	}
	if _, ok := c.raw[layoutKey{idx, native}]; ok {
		return c.unique(c.base[idx] + "_nchw")
	}
	return c.base[idx]
}

// rawValue returns the value holding tensor idx in layout lay, creating an
// initializer or a Transpose as needed.
func (c *converter) rawValue(idx int, lay layout) (string, error) {
	t := c.g.tensors[idx]
	if lay == nchw && len(t.shape) != 4 && t.data == nil {
		return "", fmt.Errorf("tensor %q of rank %d has no NCHW layout", t.name, len(t.shape))
	}
	if n, ok := c.raw[layoutKey{idx, lay}]; ok {
		return n, nil
	}
	if t.data != nil {
		return c.constant(idx, lay)
	}
	if t.variable {
		// Variable tensor without data: zeros of its shape.
		for _, d := range t.shape {
			if d < 0 {
				return "", fmt.Errorf("variable tensor %q has unknown shape %v", t.name, t.shape)
			}
		}
		dt, err := onnxType(t.typ)
		if err != nil {
			return "", err
		}
		n := numel(t.shape)
		es := elemSize(t.typ)
		if n > maxStateElements || es == 0 {
			return "", fmt.Errorf("variable tensor %q: %s%v is not a supported state tensor", t.name, t.typ, t.shape)
		}
		name := c.addInit(c.base[idx]+"_init", dt, t.shape, make([]byte, int(n)*es))
		c.raw[layoutKey{idx, native}] = name
		if lay == native {
			return name, nil
		}
	}
	other := native
	if lay == native {
		other = nchw
	}
	src, ok := c.raw[layoutKey{idx, other}]
	if !ok {
		return "", fmt.Errorf("tensor %q is read before any operator produces it", t.name)
	}
	perm := clayout.ToFirst(4)
	if lay == native {
		perm = clayout.ToLast(4)
	}
	name := c.layoutName(idx, lay)
	c.node("Transpose", []string{src}, []string{name}, canonical.IntsAttr("perm", clayout.Int64s(perm)...))
	c.raw[layoutKey{idx, lay}] = name
	return name, nil
}

// constant makes the initializer of a constant tensor in a layout. In NCHW
// a constant of lower rank is first aligned to rank 4 the way broadcasting
// aligns it (leading ones).
func (c *converter) constant(idx int, lay layout) (string, error) {
	t := c.g.tensors[idx]
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", fmt.Errorf("constant %q: %w", t.name, err)
	}
	if lay == native {
		name := c.base[idx]
		if t.typ == fb.TensorTypeSTRING {
			// TFLite's string buffer (count, offsets, bytes) as ONNX strings.
			ss, err := tfliteStrings(t.data)
			if err != nil {
				return "", fmt.Errorf("constant %q: %w", t.name, err)
			}
			if int64(len(ss)) != numel(t.shape) {
				return "", fmt.Errorf("constant %q: %d strings for shape %v", t.name, len(ss), t.shape)
			}
			bs := make([][]byte, len(ss))
			for i, s := range ss {
				bs[i] = []byte(s)
			}
			c.b.ConstNamed(canonical.NewStringTensor(name, append([]int64(nil), t.shape...), bs))
			c.raw[layoutKey{idx, native}] = name
			return name, nil
		}
		c.b.ConstNamed(canonical.NewTensor(name, dt, append([]int64(nil), t.shape...), t.data))
		c.raw[layoutKey{idx, native}] = name
		return name, nil
	}
	if t.typ == fb.TensorTypeINT4 || t.typ == fb.TensorTypeSTRING {
		return "", fmt.Errorf("constant %q of type %s cannot be permuted", t.name, t.typ)
	}
	data, dims, err := clayout.ConstToFirst(t.data, elemSize(t.typ), t.shape, 4)
	if err != nil {
		return "", fmt.Errorf("constant %q: %w", t.name, err)
	}
	name := c.addInit(c.base[idx]+"_nchw", dt, dims, data)
	c.raw[layoutKey{idx, nchw}] = name
	return name, nil
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// floatValue returns tensor idx in layout lay in the float domain: the
// tensor itself if it is not quantized, else a DequantizeLinear of it.
func (c *converter) floatValue(idx int32, lay layout) (string, error) {
	if idx < 0 {
		return "", nil
	}
	t := c.tensor(idx)
	if !isQuant(t) {
		return c.rawValue(int(idx), lay)
	}
	key := layoutKey{int(idx), lay}
	if n, ok := c.flt[key]; ok {
		return n, nil
	}
	axis := int64(t.q.dim)
	if lay == nchw {
		axis += int64(4 - len(t.shape))
		axis = int64(clayout.Axis(clayout.ToFirst(4), int(axis)))
	}
	if _, written := c.raw[layoutKey{int(idx), native}]; t.variable && t.data == nil && !written && lay == native &&
		len(t.q.scale) == 1 && staticShape(t.shape) && numel(t.shape) <= maxStateElements {
		// Initial value of a state tensor: quantized zeros, dequantized now.
		v := make([]float32, numel(t.shape))
		for i := range v {
			v[i] = float32(float64(-t.q.zp[0]) * float64(t.q.scale[0]))
		}
		name := c.constF32(c.base[idx]+"_init_dq", t.shape, v)
		c.flt[key] = name
		return name, nil
	}
	if t.typ == fb.TensorTypeINT64 {
		// DequantizeLinear has no int64 input (int16 models carry int64
		// biases): dequantize the constant now.
		if t.data == nil || lay != native {
			return "", fmt.Errorf("int64 quantized tensor %q must be a 1-D constant", t.name)
		}
		vals, err := dequantInt64(t)
		if err != nil {
			return "", err
		}
		name := c.constF32(c.base[idx]+"_dq", t.shape, vals)
		c.flt[key] = name
		return name, nil
	}
	src, err := c.rawValue(int(idx), lay)
	if err != nil {
		return "", err
	}
	scale, zp, err := c.qparams(t)
	if err != nil {
		return "", err
	}
	name := c.unique(c.base[idx] + "_dq")
	var attrs []*canonical.Attribute
	if len(t.q.scale) > 1 {
		attrs = append(attrs, canonical.IntAttr("axis", axis))
	}
	c.node("DequantizeLinear", []string{src, scale, zp}, []string{name}, attrs...)
	c.flt[key] = name
	return name, nil
}

func dequantInt64(t *tensor) ([]float32, error) {
	n := len(t.data) / 8
	out := make([]float32, n)
	inner := 1
	if len(t.q.scale) > 1 {
		for _, d := range t.shape[t.q.dim+1:] {
			inner *= int(d)
		}
	}
	for i := 0; i < n; i++ {
		v := int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		ch := 0
		if len(t.q.scale) > 1 {
			ch = (i / inner) % len(t.q.scale)
		}
		out[i] = float32(float64(v-t.q.zp[ch]) * float64(t.q.scale[ch]))
	}
	return out, nil
}

// qparams makes (once per tensor) the scale and zero-point initializers of a
// quantized tensor.
func (c *converter) qparams(t *tensor) (string, string, error) {
	if p, ok := c.qp[t.index]; ok {
		return p[0], p[1], nil
	}
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", "", err
	}
	switch t.typ {
	case fb.TensorTypeINT16, fb.TensorTypeUINT16, fb.TensorTypeINT4:
		if c.opts.Opset < 21 {
			return "", "", fmt.Errorf("tensor %q is %s-quantized: QuantizeLinear/DequantizeLinear for it need opset 21 or newer (have %d)", t.name, t.typ, c.opts.Opset)
		}
	case fb.TensorTypeINT8, fb.TensorTypeUINT8, fb.TensorTypeINT32:
	default:
		return "", "", fmt.Errorf("tensor %q: quantized type %s is not supported", t.name, t.typ)
	}
	var dims []int64
	if len(t.q.scale) > 1 {
		dims = []int64{int64(len(t.q.scale))}
	}
	scale := c.constF32(c.base[t.index]+"_scale", dims, t.q.scale)
	es := elemSize(t.typ)
	zb := make([]byte, es*len(t.q.zp))
	for i, z := range t.q.zp {
		switch es {
		case 1:
			if t.typ == fb.TensorTypeUINT8 && (z < 0 || z > 255) || t.typ != fb.TensorTypeUINT8 && (z < -128 || z > 127) {
				return "", "", fmt.Errorf("tensor %q: zero point %d out of range for %s", t.name, z, t.typ)
			}
			zb[i] = byte(z)
		case 2:
			binary.LittleEndian.PutUint16(zb[2*i:], uint16(z))
		case 4:
			binary.LittleEndian.PutUint32(zb[4*i:], uint32(z))
		}
	}
	if t.typ == fb.TensorTypeINT4 {
		return "", "", fmt.Errorf("tensor %q: int4 quantization is not supported", t.name)
	}
	zp := c.addInit(c.base[t.index]+"_zero_point", dt, dims, zb)
	c.qp[t.index] = [2]string{scale, zp}
	return scale, zp, nil
}

// output is the float-domain value an op writes for its output tensor idx
// in layout lay; finish turns it into the tensor (quantizing it if the
// tensor is quantized).
func (c *converter) output(idx int32, lay layout) string {
	t := c.tensor(idx)
	if isQuant(t) {
		return c.unique(c.base[idx] + "_float")
	}
	return c.layoutName(int(idx), lay)
}

func (c *converter) finish(idx int32, lay layout, val string) error {
	return c.finishAs(idx, lay, val, false)
}

// finishAs stores the value of output tensor idx; raw says val already
// holds the tensor's own (quantized) values.
func (c *converter) finishAs(idx int32, lay layout, val string, raw bool) error {
	t := c.tensor(idx)
	key := layoutKey{int(idx), lay}
	if _, dup := c.raw[key]; dup {
		return fmt.Errorf("tensor %q is written twice", t.name)
	}
	if isQuant(t) && !raw {
		if t.typ == fb.TensorTypeINT64 || t.typ == fb.TensorTypeINT32 && len(t.q.scale) > 1 {
			return fmt.Errorf("cannot quantize activation %q to %s", t.name, t.typ)
		}
		if t.typ == fb.TensorTypeINT32 {
			// QuantizeLinear has no int32 output in ONNX Runtime (it
			// refuses an int32 zero point): round, shift and cast instead.
			c.raw[key] = c.quantizeInt32(idx, lay, val)
		} else if err := c.quantizeLinear(idx, lay, val); err != nil {
			return err
		}
	} else {
		c.raw[key] = val
	}
	if c.opts.KeepNHWC && lay == nchw {
		// Back to NHWC at once; readers that need NCHW transpose again.
		if _, err := c.rawValue(int(idx), native); err != nil {
			return err
		}
		delete(c.raw, key)
	}
	return nil
}

// quantizeLinear stores val quantized as tensor idx in layout lay.
func (c *converter) quantizeLinear(idx int32, lay layout, val string) error {
	t := c.tensor(idx)
	scale, zp, err := c.qparams(t)
	if err != nil {
		return err
	}
	name := c.layoutName(int(idx), lay)
	var attrs []*canonical.Attribute
	if len(t.q.scale) > 1 {
		axis := int64(t.q.dim)
		if lay == nchw {
			axis = int64(clayout.Axis(clayout.ToFirst(4), int(axis)))
		}
		attrs = append(attrs, canonical.IntAttr("axis", axis))
	}
	c.node("QuantizeLinear", []string{val, scale, zp}, []string{name}, attrs...)
	c.raw[layoutKey{int(idx), lay}] = name
	return nil
}

// activation applies a fused activation from in to out.
func (c *converter) activation(act fb.ActivationFunctionType, in, out string) error {
	switch act {
	case fb.ActivationFunctionTypeRELU:
		c.node("Relu", []string{in}, []string{out})
	case fb.ActivationFunctionTypeRELU6:
		c.node("Clip", []string{in, c.scalarF32(out+"_min", 0), c.scalarF32(out+"_max", 6)}, []string{out})
	case fb.ActivationFunctionTypeRELU_N1_TO_1:
		c.node("Clip", []string{in, c.scalarF32(out+"_min", -1), c.scalarF32(out+"_max", 1)}, []string{out})
	case fb.ActivationFunctionTypeTANH, fb.ActivationFunctionTypeSIGN_BIT:
		// TFLite's kernels ignore these as fused activations: they clamp
		// for RELU, RELU6 and RELU_N1_TO_1 only (CalculateActivationRange
		// leaves the range unbounded otherwise). Checked against the TFLite
		// runtime (runtimes/tflite) on fixtures/tflite/ops.tflite.
		c.node("Identity", []string{in}, []string{out})
	default:
		return fmt.Errorf("fused activation %s is not supported", act)
	}
	return nil
}

// sameQuant reports whether two tensors hold per-tensor quantized values of
// the same type, scale and zero point, so that an op that only moves values
// can work on the integers themselves.
func sameQuant(a, b *tensor) bool {
	return isQuant(a) && isQuant(b) && a.typ == b.typ && len(a.q.scale) == 1 && len(b.q.scale) == 1 &&
		a.q.scale[0] == b.q.scale[0] && a.q.zp[0] == b.q.zp[0] && a.typ != fb.TensorTypeINT64
}

// moveInput returns the input of a data-movement op (reshape, transpose,
// slicing, ...): the quantized tensor itself when the output is quantized
// alike (no DequantizeLinear/QuantizeLinear pair around the op), else its
// float value. raw tells which.
func (c *converter) moveInput(in, out int32, lay layout) (v string, raw bool, err error) {
	if sameQuant(c.tensor(in), c.tensor(out)) {
		v, err = c.rawValue(int(in), lay)
		return v, true, err
	}
	v, err = c.floatValue(in, lay)
	return v, false, err
}

// emitMove is emit for data-movement ops, after moveInput.
func (c *converter) emitMove(out int32, lay layout, raw bool, build func(y string) error) error {
	if !raw {
		return c.emit(out, lay, fb.ActivationFunctionTypeNONE, build)
	}
	y := c.layoutName(int(out), lay)
	if err := build(y); err != nil {
		return err
	}
	return c.finishAs(out, lay, y, true)
}

// emit runs build with the name the op's main node must write, adds the
// fused activation and finishes the output tensor.
func (c *converter) emit(out int32, lay layout, act fb.ActivationFunctionType, build func(y string) error) error {
	y := c.output(out, lay)
	pre := y
	if act != fb.ActivationFunctionTypeNONE {
		pre = c.unique(y + "_preact")
	}
	if err := build(pre); err != nil {
		return err
	}
	if act != fb.ActivationFunctionTypeNONE {
		if err := c.activation(act, pre, y); err != nil {
			return err
		}
	}
	return c.finish(out, lay, y)
}

// quantizeInt32 returns an int32-quantized activation: Round(val / scale) + zp,
// clamped to int32 and cast (TFLite's quantize rule, without a
// QuantizeLinear to int32).
func (c *converter) quantizeInt32(idx int32, lay layout, val string) string {
	t := c.tensor(idx)
	y := c.layoutName(int(idx), lay)
	n := c.unique(y + "_q32")
	d := n + "_scaled"
	c.node("Div", []string{val, c.constF32(n+"_scale", nil, []float32{t.q.scale[0]})}, []string{d})
	r := n + "_rounded"
	c.node("Round", []string{d}, []string{r})
	z := n + "_shifted"
	c.node("Add", []string{r, c.constF32(n+"_zero_point", nil, []float32{float32(t.q.zp[0])})}, []string{z})
	cl := n + "_clamped"
	c.node("Clip", []string{z, c.constF32(n+"_min", nil, []float32{math.MinInt32}), c.constF32(n+"_max", nil, []float32{2147483520})}, []string{cl})
	c.node("Cast", []string{cl}, []string{y}, canonical.IntAttr("to", int64(canonical.Int32)))
	return y
}
