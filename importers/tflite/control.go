package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Control flow: IF and WHILE become ONNX If and Loop with their subgraphs
// converted into the branch and body graphs; CALL_ONCE inlines its init
// subgraph; VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE (the resource
// variables such init subgraphs set) are resolved at conversion time, as
// values in SSA form.

// maxSubgraphDepth bounds the nesting of subgraphs (IF in WHILE in ...);
// a file whose subgraphs call each other in a cycle hits it.
const maxSubgraphDepth = 16

// maxSubgraphConversions bounds the subgraphs converted in all (WHILE
// converts its cond subgraph twice, so nesting multiplies).
const maxSubgraphConversions = 4096

// child prepares the converter of subgraph gi nested in c.
func (c *converter) child(gi int32, what string) (*converter, error) {
	if gi < 0 || int(gi) >= len(c.m.subgraphs) {
		return nil, fmt.Errorf("%s subgraph %d out of range (%d subgraphs)", what, gi, len(c.m.subgraphs))
	}
	if c.depth >= maxSubgraphDepth {
		return nil, fmt.Errorf("%s subgraph %d: subgraphs nested deeper than %d (a cycle?)", what, gi, maxSubgraphDepth)
	}
	for p := c; p != nil; p = p.parent {
		if p.sub == int(gi) {
			return nil, fmt.Errorf("%s subgraph %d calls itself (through subgraph %d)", what, gi, c.sub)
		}
	}
	if c.st.subgraphs++; c.st.subgraphs > maxSubgraphConversions {
		return nil, fmt.Errorf("%s subgraph %d: more than %d subgraph conversions", what, gi, maxSubgraphConversions)
	}
	if err := c.chargeOps(gi, what); err != nil {
		return nil, err
	}
	k := newConverter(c.m, c.m.subgraphs[gi], c.opts, c.names, c.st)
	k.root, k.parent, k.sub, k.depth, k.inBody = c.root, c, int(gi), c.depth+1, c.inBody
	k.b = c.b.Sub()
	return k, nil
}

// inline converts the subgraph's ops with its inputs bound to vals (values
// in the native layout) and returns its outputs (native layout). The nodes
// are in k.b.
func (k *converter) inline(vals []string) ([]string, error) {
	if len(vals) != len(k.g.inputs) {
		return nil, fmt.Errorf("subgraph %d (%q) takes %d inputs, given %d", k.sub, k.g.name, len(k.g.inputs), len(vals))
	}
	for i, idx := range k.g.inputs {
		k.raw[layoutKey{int(idx), native}] = vals[i]
	}
	for _, o := range k.g.ops {
		if err := k.convertOp(o); err != nil {
			return nil, fmt.Errorf("subgraph %d (%q) operator %d (%s, output %q): %w", k.sub, k.g.name, o.index, opName(o), k.firstOutName(o), err)
		}
	}
	outs := make([]string, len(k.g.outputs))
	for i, idx := range k.g.outputs {
		v, err := k.rawValue(int(idx), native)
		if err != nil {
			return nil, fmt.Errorf("subgraph %d (%q) output %d: %w", k.sub, k.g.name, i, err)
		}
		outs[i] = v
	}
	return outs, nil
}

// typeInfo is a value's element type without a shape (loop-carried values
// and branch outputs may change shape).
func typeInfo(name string, t *tensor) (build.Info, error) {
	dt, err := onnxType(t.typ)
	if err != nil {
		return build.Info{}, fmt.Errorf("%q: %w", t.name, err)
	}
	return build.Info{Name: name, Type: canonical.TensorTypeNoShape(dt)}, nil
}

func scalarBoolInfo(name string) build.Info {
	return build.TensorInfo(name, canonical.Bool, nil, false)
}

// condition reshapes a one-element boolean TFLite condition to the scalar
// If and Loop take.
func (c *converter) condition(v string, t *tensor) (string, error) {
	if t.typ != fb.TensorTypeBOOL {
		return "", fmt.Errorf("condition %q is %s, want BOOL", t.name, t.typ)
	}
	if n := numel(t.shape); staticShape(t.shape) && n != 1 {
		return "", fmt.Errorf("condition %q has %d elements, want 1", t.name, n)
	}
	y := c.unique(v + "_scalar")
	c.node("Reshape", []string{v, c.constI64(y+"_shape", nil)}, []string{y})
	return y, nil
}

// args returns the native values of inputs (none omitted).
func (c *converter) args(ins []int32) ([]string, error) {
	vals := make([]string, len(ins))
	for i, idx := range ins {
		if idx < 0 {
			return nil, fmt.Errorf("input %d is omitted", i)
		}
		v, err := c.rawValue(int(idx), native)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

func (c *converter) ifOp(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.IfOptions](o, fb.BuiltinOptionsIfOptions)
	if err != nil {
		return err
	}
	cv, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return err
	}
	cond, err := c.condition(cv, c.tensor(o.inputs[0]))
	if err != nil {
		return err
	}
	vals, err := c.args(o.inputs[1:])
	if err != nil {
		return err
	}
	outNames := c.outputNames(o)
	var attrs []*canonical.Attribute
	for _, br := range []struct {
		attr string
		gi   int32
	}{{"then_branch", opt.ThenSubgraphIndex()}, {"else_branch", opt.ElseSubgraphIndex()}} {
		k, err := c.child(br.gi, br.attr)
		if err != nil {
			return err
		}
		k.inBody = true
		outs, err := k.inline(vals)
		if err != nil {
			return fmt.Errorf("%s: %w", br.attr, err)
		}
		if len(outs) != len(o.outputs) {
			return fmt.Errorf("%s subgraph %d has %d outputs, IF has %d", br.attr, br.gi, len(outs), len(o.outputs))
		}
		gname := c.unique(outNames[0] + "_" + br.attr)
		var gout []build.Info
		for i, v := range outs {
			y := k.unique(outNames[i] + "_" + br.attr)
			k.node("Identity", []string{v}, []string{y})
			vi, err := typeInfo(y, c.tensor(o.outputs[i]))
			if err != nil {
				return err
			}
			gout = append(gout, vi)
		}
		attrs = append(attrs, canonical.GraphAttr(br.attr, k.b.Graph(gname, nil, gout)))
	}
	c.node("If", []string{cond}, outNames, attrs...)
	return c.finishOutputs(o, outNames)
}

func (c *converter) whileOp(o *operator) error {
	opt, err := options[fb.WhileOptions](o, fb.BuiltinOptionsWhileOptions)
	if err != nil {
		return err
	}
	if len(o.outputs) != len(o.inputs) {
		return fmt.Errorf("%d inputs but %d outputs", len(o.inputs), len(o.outputs))
	}
	init, err := c.args(o.inputs)
	if err != nil {
		return err
	}
	// The first test, before the loop: the cond subgraph inlined here.
	kc, err := c.child(opt.CondSubgraphIndex(), "cond")
	if err != nil {
		return err
	}
	co, err := kc.inline(init)
	if err != nil {
		return fmt.Errorf("cond: %w", err)
	}
	if len(co) != 1 {
		return fmt.Errorf("cond subgraph %d has %d outputs, want 1", opt.CondSubgraphIndex(), len(co))
	}
	c.b.Splice(kc.b)
	condTensor := kc.tensor(kc.g.outputs[0])
	cond0, err := c.condition(co[0], condTensor)
	if err != nil {
		return err
	}

	// The Loop body: the body subgraph, then the cond subgraph on its
	// results.
	outNames := c.outputNames(o)
	bodyName := c.unique(outNames[0] + "_body")
	iter, condIn := c.unique(outNames[0]+"_iteration"), c.unique(outNames[0]+"_cond_in")
	bodyIn := []build.Info{build.TensorInfo(iter, canonical.Int64, nil, false), scalarBoolInfo(condIn)}
	var bodyOut []build.Info
	formals := make([]string, len(o.inputs))
	for i, idx := range o.inputs {
		formals[i] = c.unique(outNames[i] + "_in")
		vi, err := typeInfo(formals[i], c.tensor(idx))
		if err != nil {
			return err
		}
		bodyIn = append(bodyIn, vi)
	}
	kb, err := c.child(opt.BodySubgraphIndex(), "body")
	if err != nil {
		return err
	}
	kb.inBody = true
	bo, err := kb.inline(formals)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if len(bo) != len(o.inputs) {
		return fmt.Errorf("body subgraph %d has %d outputs, WHILE has %d loop values", opt.BodySubgraphIndex(), len(bo), len(o.inputs))
	}
	kc2, err := kb.child(opt.CondSubgraphIndex(), "cond")
	if err != nil {
		return err
	}
	kc2.inBody = true
	co2, err := kc2.inline(bo)
	if err != nil {
		return fmt.Errorf("cond: %w", err)
	}
	kb.b.Splice(kc2.b)
	condOut, err := kb.condition(co2[0], condTensor)
	if err != nil {
		return err
	}
	bodyOut = append(bodyOut, scalarBoolInfo(condOut))
	for i, v := range bo {
		y := kb.unique(outNames[i] + "_out")
		kb.node("Identity", []string{v}, []string{y})
		vi, err := typeInfo(y, c.tensor(o.outputs[i]))
		if err != nil {
			return err
		}
		bodyOut = append(bodyOut, vi)
	}
	c.node("Loop", append([]string{"", cond0}, init...), outNames, canonical.GraphAttr("body", kb.b.Graph(bodyName, bodyIn, bodyOut)))
	return c.finishOutputs(o, outNames)
}

// callOnce inlines the init subgraph: the ONNX graph computes one
// invocation, the first, which is the one that runs it.
func (c *converter) callOnce(o *operator) error {
	opt, err := options[fb.CallOnceOptions](o, fb.BuiltinOptionsCallOnceOptions)
	if err != nil {
		return err
	}
	k, err := c.child(opt.InitSubgraphIndex(), "init")
	if err != nil {
		return err
	}
	if len(k.g.inputs) != 0 || len(k.g.outputs) != 0 {
		return fmt.Errorf("init subgraph %d has %d inputs and %d outputs, want none", opt.InitSubgraphIndex(), len(k.g.inputs), len(k.g.outputs))
	}
	if _, err := k.inline(nil); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	c.b.Splice(k.b)
	return nil
}

func (c *converter) varHandle(o *operator) error {
	if len(o.outputs) != 1 {
		return fmt.Errorf("%d outputs, want 1", len(o.outputs))
	}
	opt, err := options[fb.VarHandleOptions](o, fb.BuiltinOptionsVarHandleOptions)
	if err != nil {
		return err
	}
	c.handles[int(o.outputs[0])] = string(opt.Container()) + "/" + string(opt.SharedName())
	return nil
}

func (c *converter) handle(idx int32) (string, error) {
	if idx < 0 {
		return "", fmt.Errorf("resource input is omitted")
	}
	k, ok := c.handles[int(idx)]
	if !ok {
		return "", fmt.Errorf("resource %q does not come from a VAR_HANDLE of this subgraph", c.tensor(idx).name)
	}
	return k, nil
}

func (c *converter) readVariable(o *operator) error {
	if len(o.inputs) != 1 || len(o.outputs) != 1 {
		return fmt.Errorf("%d inputs and %d outputs, want 1 and 1", len(o.inputs), len(o.outputs))
	}
	key, err := c.handle(o.inputs[0])
	if err != nil {
		return err
	}
	v, ok := c.st.vars[key]
	if !ok {
		return fmt.Errorf("variable %q is read before it is assigned", key)
	}
	return c.identityOutputs(o, []string{v})
}

func (c *converter) assignVariable(o *operator) error {
	if len(o.inputs) != 2 {
		return fmt.Errorf("%d inputs, want 2", len(o.inputs))
	}
	if c.inBody {
		return fmt.Errorf("assigning a resource variable inside an IF branch or WHILE body is not supported")
	}
	key, err := c.handle(o.inputs[0])
	if err != nil {
		return err
	}
	if o.inputs[1] < 0 {
		return fmt.Errorf("value input is omitted")
	}
	v, err := c.rawValue(int(o.inputs[1]), native)
	if err != nil {
		return err
	}
	c.st.vars[key] = v
	if c.root == c {
		c.st.assigned = append(c.st.assigned, key)
	}
	return nil
}

// outputNames are the names o's outputs take in the graph (native
// layout).
func (c *converter) outputNames(o *operator) []string {
	names := make([]string, len(o.outputs))
	for i, idx := range o.outputs {
		names[i] = c.layoutName(int(idx), native)
	}
	return names
}

// finishOutputs stores vals, which hold the tensors' own values (of
// outputNames), as o's outputs.
func (c *converter) finishOutputs(o *operator, vals []string) error {
	for i, idx := range o.outputs {
		if err := c.finishAs(idx, native, vals[i], true); err != nil {
			return err
		}
	}
	return nil
}

// identityOutputs makes o's outputs Identity copies of vals, values of
// another name computed in this graph.
func (c *converter) identityOutputs(o *operator, vals []string) error {
	names := c.outputNames(o)
	for i, y := range names {
		c.node("Identity", []string{vals[i]}, []string{y})
	}
	return c.finishOutputs(o, names)
}
