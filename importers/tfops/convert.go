package tfops

import (
	"errors"
	"github.com/onnxconv/onnxconv/importers/custom"
	"maps"
	"slices"

	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// maxNodes bounds the graphs Convert reads.
const maxNodes = 1 << 20

// value is one TF tensor as ONNX sees it: the ONNX value holding it in
// NHWC (TF's own layout) and, for 4-D tensors, in NCHW; at least one is
// set. konst is its value when it is a constant.
type value struct {
	nhwc, nchw string
	rank       int // -1 unknown
	dt         canonical.DataType
	konst      *canonical.Tensor
	// cplx marks a complex tensor, held (NHWC only) as float with a
	// last axis of 2 (real, imaginary) that rank does not count.
	cplx bool
	// seq marks a TensorList or TensorArray, held as an ONNX sequence of
	// tensors of type dt.
	seq bool
	// table names the hash table node a table handle refers to.
	table *Node
}

type converter struct {
	b     *build.Builder
	g     *Graph
	file  string
	nodes map[string]*Node
	vals  map[string]*value // "node:idx"
	inIdx map[string]bool
	// cut marks graph inputs that replace a computed tensor.
	cut map[string]bool
	// table is the op table, on the top converter.
	table  map[string]opFunc
	visits map[string]int // 0 new, 1 in progress, 2 done
	// lib is the top graph's function library; parent the converter of
	// the graph that calls this function (nil at the top), fname its
	// name, depth the nesting of function bodies.
	lib    map[string]*Graph
	parent *converter
	fname  string
	depth  int
	// work is the expansion budget shared by the whole conversion.
	work *work
	// custom, on the top converter, is the user's functions
	// (Options.Custom).
	custom *custom.Set
}

func tensorKey(in string) (string, bool) {
	if strings.HasPrefix(in, "^") {
		return "", false
	}
	if i := strings.LastIndexByte(in, ':'); i >= 0 {
		if _, err := strconv.Atoi(in[i+1:]); err == nil {
			return in, true
		}
	}
	return in + ":0", true
}

// splitKey splits tensor key k ("node:i", tensorKey) into the node's
// name and i; a string without ':' (the empty key tensorKey returns for
// a control input) is a name with output 0.
func splitKey(k string) (string, int) {
	i := strings.LastIndexByte(k, ':')
	if i < 0 {
		return k, 0
	}
	n, _ := strconv.Atoi(k[i+1:])
	return k[:i], n
}

// onnxName is the ONNX name of TF tensor key: "node" for output 0,
// "node:i" otherwise.
func onnxName(key string) string {
	return strings.TrimSuffix(key, ":0")
}

// Convert maps g to an ONNX model (see the package doc).
func Convert(g *Graph, opts Options) (*canonical.Model, error) {
	if g == nil {
		return nil, errors.New("tfops: no graph")
	}
	if len(g.Nodes) > maxNodes {
		return nil, fmt.Errorf("%s: %d nodes, more than the %d the TF-op mapping reads", opts.File, len(g.Nodes), maxNodes)
	}
	if opts.Opset != 0 && opts.Opset < 13 {
		return nil, fmt.Errorf("tfops: opset %d: use 13 or later", opts.Opset)
	}
	var nchwIO bool
	switch opts.Layout {
	case "", "nhwc":
	case "nchw":
		nchwIO = true
	default:
		return nil, fmt.Errorf("tfops: layout %q: use nhwc or nchw", opts.Layout)
	}
	// TF1 while frames become StatelessWhile nodes with cond and body
	// functions (tf1.go), in a copy of the graph.
	lib := make(map[string]*Graph, len(g.Functions))
	for k, f := range g.Functions {
		lib[k] = f
	}
	nodes, lib, err := recoverTF1(opts.File, g.Nodes, lib)
	if err != nil {
		return nil, err
	}
	// Default outputs are read off the graph before the dropout
	// rewrite, which leaves the mask's nodes unread.
	unrewritten := nodes
	nodes, dropouts := dropDropout(nodes)
	if opts.Warn != nil {
		for _, w := range leftoverWarnings(opts.File, nodes, dropouts) {
			opts.Warn(w)
		}
	}
	cp := *g
	cp.Nodes, cp.Functions = nodes, lib
	g = &cp
	c := &converter{b: build.New(opts.Opset), g: g, file: opts.File, nodes: map[string]*Node{},
		vals: map[string]*value{}, inIdx: map[string]bool{}, visits: map[string]int{}, lib: g.Functions, cut: map[string]bool{},
		work: newWork(g), custom: opts.Custom}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Name == "" {
			return nil, fmt.Errorf("%s: node %d (op %s) has no name", opts.File, i, n.Op)
		}
		if _, dup := c.nodes[n.Name]; dup {
			return nil, fmt.Errorf("%s: two nodes are named %q", opts.File, n.Name)
		}
		c.nodes[n.Name] = n
	}
	inputs := g.Inputs
	if inputs == nil {
		for _, n := range g.Nodes {
			if n.Op == "Placeholder" {
				inputs = append(inputs, IO{Name: n.Name, Tensor: n.Name + ":0"})
			}
		}
	}
	outputs := g.Outputs
	if outputs == nil {
		used := map[string]bool{}
		for _, n := range unrewritten {
			for _, in := range n.Inputs {
				if k, ok := tensorKey(in); ok {
					nm, _ := splitKey(k)
					used[nm] = true
				}
			}
		}
		for _, n := range unrewritten {
			if !used[n.Name] && n.Op != "Const" && n.Op != "Placeholder" && n.Op != "NoOp" && !debugOps[n.Op] {
				outputs = append(outputs, IO{Name: n.Name, Tensor: n.Name + ":0"})
			}
		}
	}
	if len(outputs) == 0 {
		return nil, fmt.Errorf("%s: the graph has no outputs", opts.File)
	}
	format := opts.Format
	if format == "" {
		format = "TensorFlow"
	}
	if ue := c.unsupportedOps(inputs, outputs, format); ue != nil {
		first := ue.Ops[0]
		return nil, &OpError{File: c.file, Node: first.Node, Op: first.Op, Unsupported: true, Err: ue}
	}
	for _, io := range inputs {
		c.b.Reserve(io.Name)
	}
	for _, io := range outputs {
		c.b.Reserve(io.Name)
	}
	var gin []build.Info
	for _, io := range inputs {
		k, ok := tensorKey(io.Tensor)
		if !ok {
			return nil, fmt.Errorf("%s: input %q is a control input (%q), not a tensor", opts.File, io.Name, io.Tensor)
		}
		nm, _ := splitKey(k)
		n := c.nodes[nm]
		if n == nil {
			return nil, fmt.Errorf("%s: input %q: no node %q in the graph", opts.File, io.Name, nm)
		}
		if n.Op != "Placeholder" {
			// A cut: the tensor is fed, what computes it is left out.
			c.cut[k] = true
		}
		dt := canonical.Float
		for _, t := range []string{"T", "DstT", "out_type", "dtype"} {
			if a, ok := n.Attrs[t]; ok && a.Type != "" {
				if d, ok := DataType(a.Type); ok {
					dt = d
				}
			}
		}
		if a, ok := n.Attrs["dtype"]; ok {
			d, ok := DataType(a.Type)
			if !ok {
				return nil, &OpError{File: c.file, Node: n.Name, Op: n.Op, Err: fmt.Errorf("input dtype %s is not supported", a.Type)}
			}
			dt = d
		}
		rank, dims, unknown := -1, []int64(nil), true
		if a, ok := n.Attrs["shape"]; ok && a.Shape != nil && !a.Shape.UnknownRank {
			dims, unknown, rank = a.Shape.Dims, false, len(a.Shape.Dims)
		}
		if nchwIO && rank == 4 {
			gin = append(gin, build.TensorInfo(io.Name, dt, []int64{dims[0], dims[3], dims[1], dims[2]}, false))
			c.vals[k] = &value{nchw: io.Name, rank: rank, dt: dt}
			if !c.cut[k] {
				c.visits[nm] = 2
			}
			continue
		}
		gin = append(gin, build.TensorInfo(io.Name, dt, dims, unknown))
		c.vals[k] = &value{nhwc: io.Name, rank: rank, dt: dt}
		if !c.cut[k] {
			c.visits[nm] = 2
		}
	}
	var gout []build.Info
	for _, io := range outputs {
		k, ok := tensorKey(io.Tensor)
		if !ok {
			return nil, fmt.Errorf("%s: output %q is a control input", opts.File, io.Tensor)
		}
		v, err := c.value(k)
		if err != nil {
			return nil, err
		}
		get := c.asNHWC
		if nchwIO && v.rank == 4 {
			get = c.asNCHW
		}
		x, err := get(v)
		if err != nil {
			return nil, err
		}
		c.b.OpTo("Identity", io.Name, []string{x})
		gout = append(gout, build.RankInfo(io.Name, v.dt, v.rank))
	}
	name := g.Name
	if name == "" {
		name = "tf_graph"
	}
	m, err := c.b.Model(name, gin, gout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	m.Graph.DocString = g.Doc
	if err := c.custom.Attach(m); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	markRandomOutputs(m)
	if err := canonical.SetSourceTensors(m, c.sourceTensors(m)); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	return m, nil
}

// sourceTensors says which TF tensor each node output of m holds, with
// the permutation back to TF's layout for the values made channels-first
// (canonical.MetaSourceTensors: the error map asks TF.js for them).
func (c *converter) sourceTensors(m *canonical.Model) map[string]canonical.SourceTensor {
	out := map[string]canonical.SourceTensor{}
	// In key order, the first TF tensor of an ONNX value kept (an Identity
	// aliases its input's value): the record is the same on every import.
	for _, k := range slices.Sorted(maps.Keys(c.vals)) {
		v := c.vals[k]
		if v.konst != nil || v.seq || v.cplx || v.table != nil {
			continue
		}
		nm, _ := splitKey(k)
		op := ""
		if n := c.nodes[nm]; n != nil {
			op = n.Op
		}
		tensor := onnxName(k)
		for _, x := range []struct {
			name string
			perm []int
		}{{v.nhwc, nil}, {v.nchw, layout.ToLast(max(v.rank, 0))}} {
			if x.name == "" {
				continue
			}
			if gv := m.Graph.Lookup(x.name); gv == nil {
				continue
			} else if p, _ := gv.Producer(); p == nil {
				continue
			}
			if _, seen := out[x.name]; !seen {
				out[x.name] = canonical.SourceTensor{Tensor: tensor, Op: op, Perm: x.perm}
			}
		}
	}
	return out
}

// value returns the ONNX value of TF tensor key, converting its node (and
// what it reads) first. The walk is iterative in depth to bound the stack.
func (c *converter) value(key string) (*value, error) {
	if v, ok := c.vals[key]; ok {
		return v, nil
	}
	nm, _ := splitKey(key)
	if err := c.convertFrom(nm); err != nil {
		return nil, err
	}
	v, ok := c.vals[key]
	if !ok {
		n := c.nodes[nm]
		op := ""
		if n != nil {
			op = n.Op
		}
		return nil, &OpError{File: c.file, Node: nm, Op: op, Err: fmt.Errorf("output %s is not produced", key)}
	}
	return v, nil
}

// convertFrom converts node nm after its inputs, with an explicit stack.
func (c *converter) convertFrom(root string) error {
	type frame struct {
		name string
		next int
	}
	stack := []frame{{name: root}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		n := c.nodes[f.name]
		if n == nil {
			return fmt.Errorf("%s: a node reads %q, which no node produces", c.file, f.name)
		}
		if f.next == 0 {
			if c.visits[f.name] == 2 {
				stack = stack[:len(stack)-1]
				continue
			}
			if c.visits[f.name] == 1 {
				return fmt.Errorf("%s: node %q is in a cycle (TF1 loops are not supported in TF.js graph models: re-export with control flow v2)", c.file, f.name)
			}
			c.visits[f.name] = 1
		}
		pushed := false
		for f.next < len(n.Inputs) {
			in := n.Inputs[f.next]
			f.next++
			k, ok := tensorKey(in)
			if !ok {
				continue
			}
			dep, _ := splitKey(k)
			if _, fed := c.vals[k]; fed && c.cut[k] {
				continue // a graph input cuts the graph here
			}
			if c.visits[dep] == 2 {
				continue
			}
			if c.visits[dep] == 1 {
				return fmt.Errorf("%s: node %q reads %q, which depends on it (a cycle)", c.file, n.Name, dep)
			}
			stack = append(stack, frame{name: dep})
			pushed = true
			break
		}
		if pushed {
			continue
		}
		if err := c.convertNode(n); err != nil {
			return err
		}
		c.visits[f.name] = 2
		stack = stack[:len(stack)-1]
	}
	return nil
}

// in returns data input i of n (control inputs skipped).
func (c *converter) in(n *Node, i int) (*value, error) {
	j := 0
	for _, s := range n.Inputs {
		k, ok := tensorKey(s)
		if !ok {
			continue
		}
		if j == i {
			return c.value(k)
		}
		j++
	}
	return nil, fmt.Errorf("input %d is missing (the node has %d)", i, j)
}

func dataInputs(n *Node) int {
	j := 0
	for _, s := range n.Inputs {
		if !strings.HasPrefix(s, "^") {
			j++
		}
	}
	return j
}

func (c *converter) set(n *Node, idx int, v *value) {
	k := n.Name + ":" + strconv.Itoa(idx)
	if c.cut[k] {
		return // a graph input replaces it
	}
	c.vals[k] = v
}

// asNHWC returns v's value in TF layout, adding a Transpose if needed.
func (c *converter) asNHWC(v *value) (string, error) {
	if v.nhwc != "" {
		return v.nhwc, nil
	}
	if v.konst != nil {
		return c.constant(v, false)
	}
	v.nhwc = c.b.Transpose(v.nchw, layout.Int64s(layout.ToLast(4)), v.nchw+"_nhwc")
	return v.nhwc, nil
}

// asNCHW returns 4-D v's value in NCHW, adding a Transpose if needed.
func (c *converter) asNCHW(v *value) (string, error) {
	if v.nchw != "" {
		return v.nchw, nil
	}
	if v.rank != 4 {
		return "", fmt.Errorf("a rank-4 NHWC tensor was expected, got rank %d", v.rank)
	}
	if v.konst != nil {
		return c.constant(v, true)
	}
	v.nchw = c.b.Transpose(v.nhwc, layout.Int64s(layout.ToFirst(4)), v.nhwc+"_nchw")
	return v.nchw, nil
}

// constant materializes a constant value as an initializer; nchw pads it
// to rank 4 and permutes it to NCHW (for broadcasting against NCHW
// activations).
func (c *converter) constant(v *value, nchw bool) (string, error) {
	t := v.konst
	if !nchw {
		name, err := c.b.Tensor(t.Name, t)
		if err != nil {
			return "", err
		}
		v.nhwc = name
		return name, nil
	}
	if len(t.Dims) > 4 {
		return "", fmt.Errorf("constant %q of rank %d cannot broadcast against an NHWC activation", t.Name, len(t.Dims))
	}
	raw, err := t.Bytes()
	if err != nil {
		return "", err
	}
	pr, pd, err := layout.ConstToFirst(raw, canonical.ElemBits(t.DataType)/8, t.Dims, 4)
	if err != nil {
		return "", fmt.Errorf("constant %q: %w", t.Name, err)
	}
	name := c.b.Init(t.Name+"_nchw", t.DataType, pd, pr)
	v.nchw = name
	return name, nil
}

func (c *converter) convertNode(n *Node) error {
	name := n.Name
	if c.fname != "" {
		name = c.fname + "/" + n.Name // a node of a library function
	}
	r := c.root()
	if r.table == nil {
		r.table = opTable() // built once per conversion
	}
	fn, ok := r.table[n.Op]
	if !ok && r.custom.Lookup(n.Op) != nil {
		fn, ok = (*converter).customOp, true
	}
	if !ok {
		return &OpError{File: c.file, Node: name, Op: n.Op, Unsupported: true}
	}
	if err := fn(c, n); err != nil {
		var oe *OpError
		if _, control := controlOps()[n.Op]; errors.As(err, &oe) && !control {
			return err
		}
		return &OpError{File: c.file, Node: name, Op: n.Op, Err: err}
	}
	return nil
}
