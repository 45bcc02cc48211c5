package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

type opFunc func(c *converter, n *Node) error

func opTable() map[string]opFunc {
	un := func(op string, attrs ...*canonical.Attribute) opFunc {
		return func(c *converter, n *Node) error { return c.unary(n, op, attrs...) }
	}
	bin := func(op string) opFunc { return func(c *converter, n *Node) error { return c.binary(n, op) } }
	red := func(op string) opFunc { return func(c *converter, n *Node) error { return c.reduce(n, op) } }
	t := map[string]opFunc{
		"Const":                      (*converter).constNode,
		"Placeholder":                (*converter).placeholder,
		"Identity":                   (*converter).identity,
		"StopGradient":               (*converter).identity,
		"Snapshot":                   (*converter).identity,
		"PreventGradient":            (*converter).identity,
		"NoOp":                       func(*converter, *Node) error { return nil },
		"Conv2D":                     (*converter).conv2D,
		"_FusedConv2D":               (*converter).conv2D,
		"DepthwiseConv2dNative":      (*converter).conv2D,
		"FusedDepthwiseConv2dNative": (*converter).conv2D,
		"MaxPool":                    (*converter).pool,
		"AvgPool":                    (*converter).pool,
		"BiasAdd":                    bin("Add"),
		"Add":                        bin("Add"),
		"AddV2":                      bin("Add"),
		"Sub":                        bin("Sub"),
		"Mul":                        bin("Mul"),
		"RealDiv":                    bin("Div"),
		"Div":                        bin("Div"),
		"Maximum":                    bin("Max"),
		"Minimum":                    bin("Min"),
		"Pow":                        bin("Pow"),
		"Prelu":                      bin("PRelu"),
		"SquaredDifference":          (*converter).squaredDifference,
		"Relu":                       un("Relu"),
		"Sigmoid":                    un("Sigmoid"),
		"Tanh":                       un("Tanh"),
		"Elu":                        un("Elu"),
		"Selu":                       un("Selu", canonical.FloatAttr("alpha", 1.6732632423543772), canonical.FloatAttr("gamma", 1.0507009873554805)),
		"Exp":                        un("Exp"),
		"Log":                        un("Log"),
		"Sqrt":                       un("Sqrt"),
		"Neg":                        un("Neg"),
		"Abs":                        un("Abs"),
		"Floor":                      un("Floor"),
		"Ceil":                       un("Ceil"),
		"Softplus":                   un("Softplus"),
		"Reciprocal":                 un("Reciprocal"),
		"Relu6":                      (*converter).relu6,
		"Rsqrt":                      (*converter).rsqrt,
		"Square":                     (*converter).square,
		"LeakyRelu":                  (*converter).leakyRelu,
		"Mean":                       red("ReduceMean"),
		"Sum":                        red("ReduceSum"),
		"Max":                        red("ReduceMax"),
		"Min":                        red("ReduceMin"),
		"Prod":                       red("ReduceProd"),
		"Softmax":                    (*converter).softmax,
		"LogSoftmax":                 (*converter).softmax,
		"Pad":                        (*converter).pad,
		"PadV2":                      (*converter).pad,
		"MirrorPad":                  (*converter).pad,
		"Reshape":                    (*converter).reshape,
		"ConcatV2":                   (*converter).concat,
		"MatMul":                     (*converter).matmul,
		"BatchMatMul":                (*converter).matmul,
		"BatchMatMulV2":              (*converter).matmul,
		"_FusedMatMul":               (*converter).matmul,
		"FusedBatchNorm":             (*converter).batchNorm,
		"FusedBatchNormV3":           (*converter).batchNorm,
		"Squeeze":                    (*converter).squeeze,
		"ExpandDims":                 (*converter).expandDims,
		"Transpose":                  (*converter).transpose,
		"Cast":                       (*converter).cast,
	}
	for k, f := range moreOps() {
		t[k] = f
	}
	for k, f := range raggedOps() {
		t[k] = f
	}
	for k, f := range tableOps() {
		t[k] = f
	}
	for k, f := range sparseOps() {
		t[k] = f
	}
	for k, f := range condOps() {
		t[k] = f
	}
	for k, f := range listOps() {
		t[k] = f
	}
	for k, f := range randomOps() {
		t[k] = f
	}
	for k, f := range convOps() {
		t[k] = f
	}
	for k, f := range shapeOps() {
		if _, ok := t[k]; !ok {
			t[k] = f
		}
	}
	for k, f := range mathOps() {
		if _, ok := t[k]; !ok {
			t[k] = f
		}
	}
	for k, f := range controlOps() {
		t[k] = f
	}
	return t
}

func (c *converter) constNode(n *Node) error {
	t := c.g.Consts[n.Name]
	for p := c.parent; t == nil && p != nil; p = p.parent {
		t = p.g.Consts[n.Name]
	}
	if t == nil {
		if a, ok := n.Attrs["value"]; ok && a.Tensor != nil {
			t = a.Tensor
		}
	}
	if t == nil {
		return errors.New("the constant has no value (not in the weights manifest, no value attr)")
	}
	if _, err := t.ByteSize(); err != nil {
		return err
	}
	cp := *t
	cp.Name = n.Name
	c.set(n, 0, &value{konst: &cp, rank: len(t.Dims), dt: t.DataType})
	return nil
}

func (c *converter) placeholder(n *Node) error {
	return errors.New("a Placeholder that is not a graph input (name it in the signature inputs)")
}

func (c *converter) identity(n *Node) error {
	for i := 0; i < dataInputs(n) && (i == 0 || n.Op == "IdentityN"); i++ {
		v, err := c.in(n, i)
		if err != nil {
			return err
		}
		c.set(n, i, v)
	}
	return nil
}

func (c *converter) str(n *Node, name, def string) string {
	if a, ok := n.Attrs[name]; ok && a.S != nil {
		return string(a.S)
	}
	return def
}

func (c *converter) ints(n *Node, name string) []int64 {
	if a, ok := n.Attrs[name]; ok && a.List != nil {
		return a.List.I
	}
	return nil
}

func constInts(v *value, what string) ([]int64, error) {
	if v.konst == nil {
		return nil, fmt.Errorf("%s must be a constant", what)
	}
	return v.konst.Int64s()
}

func checkNHWC(c *converter, n *Node) error {
	if f := c.str(n, "data_format", "NHWC"); f != "NHWC" {
		return fmt.Errorf("data_format %s is not supported (NHWC only)", f)
	}
	return nil
}

// spatial returns the H and W entries of an NHWC attr list (strides,
// dilations, ksize), def when absent.
func spatial(l []int64, def int64) ([]int64, error) {
	if len(l) == 0 {
		return []int64{def, def}, nil
	}
	if len(l) != 4 {
		return nil, fmt.Errorf("an NHWC list of 4 was expected, got %v", l)
	}
	if l[1] <= 0 || l[2] <= 0 || l[1] > 1<<16 || l[2] > 1<<16 {
		return nil, fmt.Errorf("bad spatial values %v", l)
	}
	return []int64{l[1], l[2]}, nil
}

func (c *converter) padAttrs(n *Node) ([]*canonical.Attribute, error) {
	switch p := c.str(n, "padding", "VALID"); p {
	case "SAME":
		return []*canonical.Attribute{canonical.StringAttr("auto_pad", "SAME_UPPER")}, nil
	case "VALID":
		return []*canonical.Attribute{canonical.StringAttr("auto_pad", "VALID")}, nil
	case "EXPLICIT":
		ep := c.ints(n, "explicit_paddings")
		if len(ep) != 8 {
			return nil, fmt.Errorf("explicit_paddings %v: want 8 values", ep)
		}
		return []*canonical.Attribute{canonical.IntsAttr("pads", []int64{ep[2], ep[4], ep[3], ep[5]}...)}, nil
	default:
		return nil, fmt.Errorf("padding %q is not supported", p)
	}
}

// conv2D maps Conv2D, DepthwiseConv2dNative and their fused forms.
func (c *converter) conv2D(n *Node) error {
	if err := checkNHWC(c, n); err != nil {
		return err
	}
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	w, err := c.in(n, 1)
	if err != nil {
		return err
	}
	if w.konst == nil || len(w.konst.Dims) != 4 {
		return errors.New("the filter must be a constant of rank 4")
	}
	xin, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	depthwise := n.Op == "DepthwiseConv2dNative" || n.Op == "FusedDepthwiseConv2dNative" || n.Op == "DepthwiseConv2d"
	kd := w.konst.Dims // [kh, kw, in, out] or [kh, kw, in, mult]
	dims := kd
	if depthwise {
		if dims, err = layout.DepthwiseHWIO(kd); err != nil {
			return fmt.Errorf("filter: %w", err)
		}
	}
	wname, err := c.filterInit(w, dims, layout.FromHWIO(4), "_oihw")
	if err != nil {
		return err
	}
	strides, err := spatial(c.ints(n, "strides"), 1)
	if err != nil {
		return fmt.Errorf("strides: %w", err)
	}
	dil, err := spatial(c.ints(n, "dilations"), 1)
	if err != nil {
		return fmt.Errorf("dilations: %w", err)
	}
	attrs, err := c.padAttrs(n)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("strides", strides...), canonical.IntsAttr("dilations", dil...),
		canonical.IntsAttr("kernel_shape", []int64{kd[0], kd[1]}...))
	if depthwise {
		attrs = append(attrs, canonical.IntAttr("group", kd[2]))
	}
	ins := []string{xin, wname}
	fused := fusedOps(n)
	args := dataInputs(n) - 2
	if len(fused) > 0 && fused[0] == "BiasAdd" {
		if args < 1 {
			return errors.New("fused BiasAdd without its bias input")
		}
		bv, err := c.in(n, 2)
		if err != nil {
			return err
		}
		bn, err := c.asNHWC(bv)
		if err != nil {
			return err
		}
		ins = append(ins, bn)
		fused = fused[1:]
	}
	y := c.b.Op("Conv", n.Name, ins, attrs...)
	out := &value{nchw: y, rank: 4, dt: x.dt}
	out, err = c.fusedActivation(n, fused, out, 3)
	if err != nil {
		return err
	}
	c.set(n, 0, out)
	return nil
}

func fusedOps(n *Node) []string {
	a, ok := n.Attrs["fused_ops"]
	if !ok || a.List == nil {
		return nil
	}
	out := make([]string, len(a.List.S))
	for i, s := range a.List.S {
		out[i] = string(s)
	}
	return out
}

// fusedActivation applies what remains of fused_ops after BiasAdd; argIdx
// is the data input index of an activation argument (Prelu's alpha).
func (c *converter) fusedActivation(n *Node, fused []string, x *value, argIdx int) (*value, error) {
	if len(fused) == 0 {
		return x, nil
	}
	if len(fused) > 1 {
		return nil, fmt.Errorf("fused_ops %v are not supported", fusedOps(n))
	}
	nchw := x.nhwc == ""
	xn := x.nhwc
	if nchw {
		xn = x.nchw
	}
	var y string
	switch fused[0] {
	case "Relu":
		y = c.b.Op("Relu", n.Name+"_relu", []string{xn})
	case "Relu6":
		y = c.b.Op("Clip", n.Name+"_relu6", []string{xn, c.b.Scalar("zero", 0), c.b.Scalar("six", 6)})
	case "Elu":
		y = c.b.Op("Elu", n.Name+"_elu", []string{xn})
	case "Sigmoid":
		y = c.b.Op("Sigmoid", n.Name+"_sigmoid", []string{xn})
	case "Tanh":
		y = c.b.Op("Tanh", n.Name+"_tanh", []string{xn})
	case "LeakyRelu":
		alpha := float32(0.2)
		if a, ok := n.Attrs["leakyrelu_alpha"]; ok {
			alpha = a.F
		}
		y = c.b.Op("LeakyRelu", n.Name+"_leakyrelu", []string{xn}, canonical.FloatAttr("alpha", alpha))
	case "Prelu":
		av, err := c.in(n, argIdx)
		if err != nil {
			return nil, err
		}
		var an string
		if nchw && av.konst != nil {
			an, err = c.constant(&value{konst: av.konst, rank: av.rank, dt: av.dt}, true)
		} else if nchw {
			an, err = c.asNCHW(av)
		} else {
			an, err = c.asNHWC(av)
		}
		if err != nil {
			return nil, err
		}
		y = c.b.Op("PRelu", n.Name+"_prelu", []string{xn, an})
	default:
		return nil, fmt.Errorf("fused op %s is not supported", fused[0])
	}
	if nchw {
		return &value{nchw: y, rank: x.rank, dt: x.dt}, nil
	}
	return &value{nhwc: y, rank: x.rank, dt: x.dt}, nil
}

func (c *converter) pool(n *Node) error {
	if err := checkNHWC(c, n); err != nil {
		return err
	}
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xin, attrs, err := c.poolInput(n, x)
	if err != nil {
		return err
	}
	op := "MaxPool"
	if n.Op == "AvgPool" {
		op = "AveragePool"
	}
	c.set(n, 0, &value{nchw: c.b.Op(op, n.Name, []string{xin}, attrs...), rank: 4, dt: x.dt})
	return nil
}

// layoutFor decides whether an elementwise op over vs runs in NCHW: when
// a 4-D non-constant operand is held in NCHW and every non-constant
// operand is 4-D (or a scalar) and every constant broadcasts (rank <= 4).
func layoutFor(vs []*value) bool {
	any := false
	for _, v := range vs {
		if v.konst != nil {
			if len(v.konst.Dims) > 4 {
				return false
			}
			continue
		}
		if v.rank != 4 && v.rank != 0 {
			return false
		}
		if v.rank == 4 && v.nchw != "" {
			any = true
		}
	}
	return any
}

func (c *converter) operands(vs []*value, nchw bool) ([]string, error) {
	out := make([]string, len(vs))
	for i, v := range vs {
		var err error
		switch {
		case nchw && v.konst != nil && v.rank == 0:
			out[i], err = c.asNHWC(v)
		case nchw && v.rank == 0:
			out[i], err = c.asNHWC(v)
		case nchw:
			if v.konst != nil && v.nchw == "" {
				out[i], err = c.constant(v, true)
			} else {
				out[i], err = c.asNCHW(v)
			}
		default:
			out[i], err = c.asNHWC(v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *converter) emitElementwise(n *Node, vs []*value, build func(ins []string) string) error {
	nchw := layoutFor(vs)
	ins, err := c.operands(vs, nchw)
	if err != nil {
		return err
	}
	rank := 0
	for _, v := range vs {
		if v.rank < 0 {
			rank = -1
			break
		}
		rank = max(rank, v.rank)
	}
	y := build(ins)
	out := &value{rank: rank, dt: vs[0].dt}
	if nchw {
		out.nchw = y
	} else {
		out.nhwc = y
	}
	c.set(n, 0, out)
	return nil
}

func (c *converter) inputs(n *Node, k int) ([]*value, error) {
	vs := make([]*value, k)
	for i := range vs {
		v, err := c.in(n, i)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func (c *converter) unary(n *Node, op string, attrs ...*canonical.Attribute) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string { return c.b.Op(op, n.Name, ins, attrs...) })
}

func (c *converter) binary(n *Node, op string) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string { return c.b.Op(op, n.Name, ins) })
}

func (c *converter) relu6(n *Node) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		return c.b.Op("Clip", n.Name, []string{ins[0], c.b.Scalar("zero", 0), c.b.Scalar("six", 6)})
	})
}

func (c *converter) rsqrt(n *Node) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		return c.b.Op("Reciprocal", n.Name, []string{c.b.Op("Sqrt", n.Name+"_sqrt", ins)})
	})
}

func (c *converter) square(n *Node) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string { return c.b.Op("Mul", n.Name, []string{ins[0], ins[0]}) })
}

func (c *converter) squaredDifference(n *Node) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		d := c.b.Op("Sub", n.Name+"_diff", ins)
		return c.b.Op("Mul", n.Name, []string{d, d})
	})
}

func (c *converter) leakyRelu(n *Node) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	alpha := float32(0.2)
	if a, ok := n.Attrs["alpha"]; ok {
		alpha = a.F
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		return c.b.Op("LeakyRelu", n.Name, ins, canonical.FloatAttr("alpha", alpha))
	})
}

// nchwAxis is where axis a of an NHWC value stands once it is held NCHW.
func nchwAxis(a int64) int64 { return int64(layout.Axis(layout.ToFirst(4), int(a))) }

func normAxes(axes []int64, rank int) ([]int64, error) {
	out := make([]int64, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a >= int64(rank) {
			return nil, fmt.Errorf("axis %d is out of range for rank %d", axes[i], rank)
		}
		out[i] = a
	}
	return out, nil
}

func (c *converter) reduceOp(op, name, x string, axes []int64, keep bool) string {
	k := int64(0)
	if keep {
		k = 1
	}
	if op == "ReduceSum" || c.b.Opset >= 18 {
		return c.b.Op(op, name, []string{x, c.b.Ints("axes", axes...)}, canonical.IntAttr("keepdims", k))
	}
	return c.b.Op(op, name, []string{x}, canonical.IntsAttr("axes", axes...), canonical.IntAttr("keepdims", k))
}

func (c *converter) reduce(n *Node, op string) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	av, err := c.in(n, 1)
	if err != nil {
		return err
	}
	axes, err := constInts(av, "the reduction axes")
	if err != nil {
		return err
	}
	keep := false
	if a, ok := n.Attrs["keep_dims"]; ok {
		keep = a.B
	}
	if x.rank < 0 {
		if len(axes) == 0 {
			return errors.New("reduction over no axes of a tensor of unknown rank")
		}
		for _, a := range axes {
			if a < 0 {
				return errors.New("negative reduction axes need a known rank")
			}
		}
		xn, err := c.asNHWC(x)
		if err != nil {
			return err
		}
		c.set(n, 0, &value{nhwc: c.reduceOp(op, n.Name, xn, axes, keep), rank: -1, dt: x.dt})
		return nil
	}
	axes, err = normAxes(axes, x.rank)
	if err != nil {
		return err
	}
	if len(axes) == 0 {
		c.set(n, 0, x)
		return nil
	}
	outRank := x.rank
	if !keep {
		outRank -= len(axes)
	}
	if x.rank == 4 && x.nhwc == "" {
		red := map[int64]bool{}
		mapped := make([]int64, len(axes))
		for i, a := range axes {
			red[a] = true
			mapped[i] = nchwAxis(a)
		}
		ordered := true
		last := int64(-1)
		for a := int64(0); a < 4; a++ {
			if !red[a] {
				if nchwAxis(a) < last {
					ordered = false
				}
				last = nchwAxis(a)
			}
		}
		if keep || ordered {
			y := c.reduceOp(op, n.Name, x.nchw, mapped, keep)
			if keep {
				c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
			} else {
				c.set(n, 0, &value{nhwc: y, rank: outRank, dt: x.dt})
			}
			return nil
		}
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	c.set(n, 0, &value{nhwc: c.reduceOp(op, n.Name, xn, axes, keep), rank: outRank, dt: x.dt})
	return nil
}

func (c *converter) softmax(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	op := "Softmax"
	if n.Op == "LogSoftmax" {
		op = "LogSoftmax"
	}
	if x.rank == 4 && x.nhwc == "" {
		c.set(n, 0, &value{nchw: c.b.Op(op, n.Name, []string{x.nchw}, canonical.IntAttr("axis", 1)), rank: 4, dt: x.dt})
		return nil
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	c.set(n, 0, &value{nhwc: c.b.Op(op, n.Name, []string{xn}, canonical.IntAttr("axis", -1)), rank: x.rank, dt: x.dt})
	return nil
}

func (c *converter) pad(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	pv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	if pv.konst == nil {
		return c.padComputed(n, x, pv)
	}
	p, err := constInts(pv, "the paddings")
	if err != nil {
		return err
	}
	r := len(p) / 2
	if len(p)%2 != 0 || (x.rank >= 0 && r != x.rank) {
		return fmt.Errorf("paddings of %d values for a tensor of rank %d", len(p), x.rank)
	}
	mode := "constant"
	symmetric := false
	if n.Op == "MirrorPad" {
		switch m := c.str(n, "mode", "REFLECT"); m {
		case "REFLECT":
			mode = "reflect"
		case "SYMMETRIC":
			symmetric = true
		default:
			return fmt.Errorf("MirrorPad mode %s is not supported (REFLECT, SYMMETRIC)", m)
		}
	}
	nchw := r == 4 && x.nhwc == ""
	pads := make([]int64, 2*r)
	for i := 0; i < r; i++ {
		j := int64(i)
		if nchw {
			j = nchwAxis(int64(i))
		}
		pads[j], pads[int64(r)+j] = p[2*i], p[2*i+1]
	}
	var xn string
	if nchw {
		xn = x.nchw
	} else if xn, err = c.asNHWC(x); err != nil {
		return err
	}
	if symmetric {
		y := c.mirrorSymmetric(n.Name, xn, pads)
		if nchw {
			c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
		} else {
			c.set(n, 0, &value{nhwc: y, rank: x.rank, dt: x.dt})
		}
		return nil
	}
	ins := []string{xn, c.b.Ints("pads", pads...)}
	if n.Op == "PadV2" {
		cv, err := c.in(n, 2)
		if err != nil {
			return err
		}
		cn, err := c.asNHWC(cv)
		if err != nil {
			return err
		}
		ins = append(ins, cn)
	}
	y := c.b.Op("Pad", n.Name, ins, canonical.StringAttr("mode", mode))
	if nchw {
		c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	} else {
		c.set(n, 0, &value{nhwc: y, rank: x.rank, dt: x.dt})
	}
	return nil
}

func (c *converter) reshape(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	sv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	if sv.konst != nil {
		s, err := sv.konst.Int64s()
		if err != nil {
			return err
		}
		c.set(n, 0, &value{nhwc: c.b.Op("Reshape", n.Name, []string{xn, c.b.Ints("shape", s...)}), rank: len(s), dt: x.dt})
		return nil
	}
	sn, err := c.asNHWC(sv)
	if err != nil {
		return err
	}
	s64 := c.b.Op("Cast", n.Name+"_shape", []string{sn}, canonical.IntAttr("to", int64(canonical.Int64)))
	c.set(n, 0, &value{nhwc: c.b.Op("Reshape", n.Name, []string{xn, s64}), rank: c.vectorLen(n, 1), dt: x.dt})
	return nil
}

// vectorLen is the length of data input i of n, a 1-D tensor computed in
// the graph, when the graph determines it: a Pack of scalars (as
// tf.reshape(x, [tf.shape(x)[0], -1, 3]) writes a shape), or the Shape
// of a tensor of known rank; -1 otherwise.
func (c *converter) vectorLen(n *Node, i int) int {
	j := 0
	for _, in := range n.Inputs {
		k, ok := tensorKey(in)
		if !ok {
			continue
		}
		if j < i {
			j++
			continue
		}
		nm, idx := splitKey(k)
		p := c.nodes[nm]
		if p == nil || idx != 0 || c.cut[k] {
			return -1
		}
		switch p.Op {
		case "Pack":
			if c.attrInt(p, "axis", 0) != 0 {
				return -1
			}
			for e := 0; e < dataInputs(p); e++ {
				if v, err := c.in(p, e); err != nil || v.rank != 0 {
					return -1
				}
			}
			return dataInputs(p)
		case "Shape":
			if v, err := c.in(p, 0); err == nil {
				return v.rank
			}
		}
		return -1
	}
	return -1
}

func (c *converter) concat(n *Node) error {
	k := dataInputs(n) - 1
	if k < 1 {
		return errors.New("ConcatV2 needs at least one value and the axis")
	}
	vs, err := c.inputs(n, k)
	if err != nil {
		return err
	}
	av, err := c.in(n, k)
	if err != nil {
		return err
	}
	a, err := constInts(av, "the axis")
	if err != nil {
		return err
	}
	if len(a) != 1 {
		return errors.New("the axis must be a scalar")
	}
	rank := vs[0].rank
	axis := a[0]
	if axis < 0 {
		if rank < 0 {
			return errors.New("a negative axis needs a known rank")
		}
		axis += int64(rank)
	}
	nchw := rank == 4
	anyNCHW := false
	for _, v := range vs {
		if v.rank != rank {
			nchw = false
		}
		if v.nhwc == "" && v.konst == nil {
			anyNCHW = true
		}
	}
	nchw = nchw && anyNCHW
	ins, err := c.operands(vs, nchw)
	if err != nil {
		return err
	}
	if nchw {
		if axis < 0 || axis > 3 {
			return fmt.Errorf("axis %d for rank 4", a[0])
		}
		c.set(n, 0, &value{nchw: c.b.Op("Concat", n.Name, ins, canonical.IntAttr("axis", nchwAxis(axis))), rank: 4, dt: vs[0].dt})
		return nil
	}
	c.set(n, 0, &value{nhwc: c.b.Op("Concat", n.Name, ins, canonical.IntAttr("axis", axis)), rank: rank, dt: vs[0].dt})
	return nil
}

// operandT returns v in NHWC, transposed on its last two axes when t.
func (c *converter) operandT(v *value, t bool, name string) (string, error) {
	if !t {
		return c.asNHWC(v)
	}
	if v.rank < 2 {
		return "", errors.New("a transposed operand needs a known rank of at least 2")
	}
	if v.konst != nil {
		perm := layout.Identity(v.rank)
		perm[v.rank-1], perm[v.rank-2] = v.rank-2, v.rank-1
		t, err := v.konst.Transpose(perm)
		if err != nil {
			return "", err
		}
		return c.b.Const(v.konst.Name+"_T", t), nil
	}
	x, err := c.asNHWC(v)
	if err != nil {
		return "", err
	}
	perm := make([]int64, v.rank)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[v.rank-1], perm[v.rank-2] = int64(v.rank-2), int64(v.rank-1)
	return c.b.Transpose(x, perm, name), nil
}

func (c *converter) matmul(n *Node) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	ta, tb := false, false
	for _, k := range []string{"transpose_a", "adj_x"} {
		if a, ok := n.Attrs[k]; ok && a.B {
			ta = true
		}
	}
	for _, k := range []string{"transpose_b", "adj_y"} {
		if a, ok := n.Attrs[k]; ok && a.B {
			tb = true
		}
	}
	an, err := c.operandT(vs[0], ta, n.Name+"_a")
	if err != nil {
		return err
	}
	bn, err := c.operandT(vs[1], tb, n.Name+"_b")
	if err != nil {
		return err
	}
	rank := max(vs[0].rank, vs[1].rank)
	if vs[0].rank < 0 || vs[1].rank < 0 {
		rank = -1
	}
	fused := fusedOps(n)
	y := c.b.Op("MatMul", n.Name+"_matmul", []string{an, bn})
	if len(fused) > 0 && fused[0] == "BiasAdd" {
		bv, err := c.in(n, 2)
		if err != nil {
			return err
		}
		bias, err := c.asNHWC(bv)
		if err != nil {
			return err
		}
		y = c.b.Op("Add", n.Name+"_bias", []string{y, bias})
		fused = fused[1:]
	} else if len(fused) > 0 {
		return fmt.Errorf("fused_ops %v are not supported", fused)
	}
	out, err := c.fusedActivation(n, fused, &value{nhwc: y, rank: rank, dt: vs[0].dt}, 3)
	if err != nil {
		return err
	}
	c.set(n, 0, out)
	return nil
}

func (c *converter) batchNorm(n *Node) error {
	if a, ok := n.Attrs["is_training"]; ok && a.B {
		return errors.New("is_training=true: only inference batch normalization is supported")
	}
	if err := checkNHWC(c, n); err != nil {
		return err
	}
	vs, err := c.inputs(n, 5)
	if err != nil {
		return err
	}
	if vs[0].rank != 4 {
		return fmt.Errorf("rank %d input: rank 4 only", vs[0].rank)
	}
	x, err := c.asNCHW(vs[0])
	if err != nil {
		return err
	}
	ins := []string{x}
	for _, v := range vs[1:] {
		s, err := c.asNHWC(v)
		if err != nil {
			return err
		}
		ins = append(ins, s)
	}
	eps := float32(1e-4)
	if a, ok := n.Attrs["epsilon"]; ok {
		eps = a.F
	}
	c.set(n, 0, &value{nchw: c.b.Op("BatchNormalization", n.Name, ins, canonical.FloatAttr("epsilon", eps)), rank: 4, dt: vs[0].dt})
	return nil
}

func (c *converter) squeeze(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	axes := c.ints(n, "squeeze_dims")
	if len(axes) == 0 {
		axes = c.ints(n, "axis")
	}
	if len(axes) == 0 {
		c.set(n, 0, &value{nhwc: c.b.Op("Squeeze", n.Name, []string{xn}), rank: -1, dt: x.dt})
		return nil
	}
	rank := -1
	if x.rank >= 0 {
		rank = x.rank - len(axes)
	}
	c.set(n, 0, &value{nhwc: c.b.Op("Squeeze", n.Name, []string{xn, c.b.Ints("axes", axes...)}), rank: rank, dt: x.dt})
	return nil
}

func (c *converter) expandDims(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	av, err := c.in(n, 1)
	if err != nil {
		return err
	}
	a, err := constInts(av, "the axis")
	if err != nil {
		return err
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	rank := -1
	if x.rank >= 0 {
		rank = x.rank + 1
	}
	c.set(n, 0, &value{nhwc: c.b.Op("Unsqueeze", n.Name, []string{xn, c.b.Ints("axes", a...)}), rank: rank, dt: x.dt})
	return nil
}

func (c *converter) transpose(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	pv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	p, err := constInts(pv, "the permutation")
	if err != nil {
		return err
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	c.set(n, 0, &value{nhwc: c.b.Transpose(xn, p, n.Name), rank: len(p), dt: x.dt})
	return nil
}

func (c *converter) cast(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	dt, ok := DataType(n.Attrs["DstT"].Type)
	if !ok {
		return fmt.Errorf("cast to %q is not supported", n.Attrs["DstT"].Type)
	}
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	c.set(n, 0, &value{nhwc: c.b.Op("Cast", n.Name, []string{xn}, canonical.IntAttr("to", int64(dt))), rank: x.rank, dt: dt})
	return nil
}

// poolInput is what a TF pool node (MaxPool, AvgPool, MaxPoolWithArgmax)
// gives its ONNX pool: x in NCHW, and the kernel_shape, strides and
// padding attributes from ksize, strides and padding.
func (c *converter) poolInput(n *Node, x *value) (string, []*canonical.Attribute, error) {
	xin, err := c.asNCHW(x)
	if err != nil {
		return "", nil, err
	}
	k, err := spatial(c.ints(n, "ksize"), 1)
	if err != nil {
		return "", nil, fmt.Errorf("ksize: %w", err)
	}
	s, err := spatial(c.ints(n, "strides"), 1)
	if err != nil {
		return "", nil, fmt.Errorf("strides: %w", err)
	}
	attrs, err := c.padAttrs(n)
	if err != nil {
		return "", nil, err
	}
	return xin, append(attrs, canonical.IntsAttr("kernel_shape", k...), canonical.IntsAttr("strides", s...)), nil
}
