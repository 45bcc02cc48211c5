package convert

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// expandExtra expands more function operators below their introduction.
// It reports whether it handled sc.n's op type.
func expandExtra(sc *stepCtx, to int) (bool, error) {
	switch sc.n.OpType {
	case "Range":
		return true, expandRange(sc, to)
	case "HannWindow", "HammingWindow", "BlackmanWindow":
		return true, expandWindow(sc, to)
	case "CenterCropPad":
		return true, expandCenterCropPad(sc, to)
	case "Shrink":
		return true, expandShrink(sc, to)
	case "MeanVarianceNormalization":
		return true, expandMVN(sc, to)
	case "AffineGrid":
		return true, expandAffineGrid(sc, to)
	case "DynamicQuantizeLinear":
		return true, expandDQL(sc, to)
	}
	return false, nil
}

// knownValue returns the tensor v always holds: a constant, or a value
// inference folded from static shapes.
func knownValue(sc *stepCtx, v *canonical.Value) *canonical.Tensor {
	if t := constValue(v); t != nil {
		return t
	}
	if v == nil || sc.c.folded == nil {
		return nil
	}
	return sc.c.folded[v]
}

func isFloatDT(dt canonical.DataType) bool {
	return dt == canonical.Float || dt == canonical.Double || dt == canonical.Float16 || dt == canonical.BFloat16
}

// scalarNumber reads a one-element numeric tensor as float64 (and int64
// when it is an integer tensor).
func scalarNumber(t *canonical.Tensor) (float64, int64, bool, bool) {
	if t == nil {
		return 0, 0, false, false
	}
	if is, err := tensorInts(t); err == nil {
		if len(is) != 1 {
			return 0, 0, false, false
		}
		return float64(is[0]), is[0], true, true
	}
	fs, err := tensorFloats(t)
	if err != nil || len(fs) != 1 {
		return 0, 0, false, false
	}
	return fs[0], 0, false, true
}

// finishConst makes the node's single output the constant t.
func finishConst(sc *stepCtx, to int, t *canonical.Tensor) error {
	b := newBuilder(sc, to)
	v, err := sc.constant("value", t)
	if err != nil {
		return err
	}
	return b.finish(b.op("Identity", []*canonical.Value{v}))
}

const maxConstElems = 1 << 24

// expandRange replaces Range with a constant of its values when start,
// limit and delta are known.
func expandRange(sc *stepCtx, to int) error {
	n := sc.n
	var f [3]float64
	var iv [3]int64
	isInt := true
	for i := 0; i < 3; i++ {
		fv, ii, isI, ok := scalarNumber(knownValue(sc, n.Input(i)))
		if !ok {
			return expandRangeLoop(sc, to)
		}
		f[i], iv[i] = fv, ii
		isInt = isInt && isI
	}
	dt := elemType(n.Input(0))
	if dt == canonical.Undefined {
		if t := knownValue(sc, n.Input(0)); t != nil {
			dt = t.DataType
		}
	}
	if isInt {
		start, limit, delta := iv[0], iv[1], iv[2]
		if delta == 0 {
			return blocked("", "Range with delta 0")
		}
		cnt := int64(math.Ceil(float64(limit-start) / float64(delta)))
		if cnt < 0 {
			cnt = 0
		}
		if cnt > maxConstElems {
			return blocked("keep opset >= 11", "Range of %d elements is too large to store as a constant", cnt)
		}
		vals := make([]int64, cnt)
		x := start
		for i := range vals {
			vals[i] = x
			x += delta
		}
		var t *canonical.Tensor
		if dt == canonical.Int64 {
			t = canonical.Int64Tensor("", []int64{cnt}, vals)
		} else {
			fv := make([]float64, cnt)
			for i, v := range vals {
				fv[i] = float64(v)
			}
			t = canonical.NumberTensor("", dt, []int64{cnt}, fv)
		}
		return finishConst(sc, to, t)
	}
	if !isFloatDT(dt) {
		return blocked("", "Range: unexpected element type %v", dt)
	}
	start, limit, delta := f[0], f[1], f[2]
	if delta == 0 || math.IsNaN(start) || math.IsNaN(limit) || math.IsNaN(delta) || math.IsInf(start, 0) || math.IsInf(limit, 0) || math.IsInf(delta, 0) {
		return blocked("", "Range with delta 0 or non-finite bounds")
	}
	cf := math.Ceil((limit - start) / delta)
	if cf < 0 {
		cf = 0
	}
	if cf > maxConstElems {
		return blocked("keep opset >= 11", "Range of %v elements is too large to store as a constant", cf)
	}
	cnt := int64(cf)
	vals := make([]float64, cnt)
	if dt == canonical.Float {
		x, d := float32(start), float32(delta)
		for i := range vals {
			vals[i] = float64(x)
			x += d
		}
	} else {
		x := start
		for i := range vals {
			vals[i] = x
			x += delta
		}
	}
	return finishConst(sc, to, canonical.NumberTensor("", dt, []int64{cnt}, vals))
}

// expandWindow replaces a window function with a constant of the window
// when its size is known.
func expandWindow(sc *stepCtx, to int) error {
	n := sc.n
	_, size, isI, ok := scalarNumber(knownValue(sc, n.Input(0)))
	if !ok || !isI {
		return expandWindowDynamic(sc, to)
	}
	if size < 0 || size > maxConstElems {
		return blocked("", "%s size %d is out of range", n.OpType, size)
	}
	dt := canonical.DataType(n.AttrInt("output_datatype", int64(canonical.Float)))
	switch dt {
	case canonical.Float, canonical.Double, canonical.Float16, canonical.BFloat16,
		canonical.Int8, canonical.Int16, canonical.Int32, canonical.Int64,
		canonical.Uint8, canonical.Uint16, canonical.Uint32, canonical.Uint64:
	default:
		return blocked("", "%s output_datatype %d is not supported by the expansion", n.OpType, int64(dt))
	}
	periodic := n.AttrInt("periodic", 1) != 0
	N := float64(size)
	if !periodic {
		N = float64(size - 1)
	}
	vals := make([]float64, size)
	for i := range vals {
		x := 2 * math.Pi * float64(i) / N
		switch n.OpType {
		case "HannWindow":
			vals[i] = 0.5 - 0.5*math.Cos(x)
		case "HammingWindow":
			vals[i] = 25.0/46 - 21.0/46*math.Cos(x)
		default:
			vals[i] = 0.42 - 0.5*math.Cos(x) + 0.08*math.Cos(2*x)
		}
	}
	if dt == canonical.Int64 {
		iv := make([]int64, size)
		for i, v := range vals {
			iv[i] = int64(v)
		}
		return finishConst(sc, to, canonical.Int64Tensor("", []int64{size}, iv))
	}
	return finishConst(sc, to, canonical.NumberTensor("", dt, []int64{size}, vals))
}

// expandCenterCropPad pads then slices, per the operator's definition,
// when the input's shape and the target shape are known.
func expandCenterCropPad(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	dims, ok := shapeOf(x)
	st := knownValue(sc, n.Input(1))
	if !ok || st == nil {
		if to >= 11 {
			return expandCenterCropPadDynamic(sc, to)
		}
		if !ok {
			return needShapes("the input's shape is known", "CenterCropPad needs the input's shape to expand before opset 11")
		}
		return blocked("target opset 11 or later, or make the shape input a constant", "CenterCropPad's shape input must be constant to expand before opset 11 (Pad takes its pads as an attribute)")
	}
	target, err := tensorInts(st)
	if err != nil {
		return blocked("", "CenterCropPad's shape input: %v", err)
	}
	r := int64(len(dims))
	var axes []int64
	if a := n.Attr("axes"); a != nil {
		axes = append(axes, a.Ints...)
	} else {
		for i := int64(0); i < r; i++ {
			axes = append(axes, i)
		}
	}
	if len(axes) != len(target) {
		return blocked("", "CenterCropPad: %d axes but %d target dims", len(axes), len(target))
	}
	pads := make([]int64, 2*r)
	starts := make([]int64, 0, r)
	ends := make([]int64, 0, r)
	sliceAxes := make([]int64, 0, r)
	needPad := false
	for i, a := range axes {
		if a < 0 {
			a += r
		}
		if a < 0 || a >= r || target[i] < 0 {
			return blocked("", "CenterCropPad: axis %d or target %d out of range", axes[i], target[i])
		}
		d, t := dims[a], target[i]
		switch {
		case t > d:
			pads[a] = (t - d) / 2
			pads[a+r] = t - d - pads[a]
			needPad = true
		case t < d:
			s := (d - t) / 2
			starts = append(starts, s)
			ends = append(ends, s+t)
			sliceAxes = append(sliceAxes, a)
		}
	}
	b := newBuilder(sc, to)
	y := x
	if needPad {
		if to < 11 {
			if !isFloatDT(elemType(x)) || elemType(x) == canonical.BFloat16 {
				return blocked("target opset 11 or later", "Pad before opset 11 takes only float types")
			}
			y = b.op("Pad", []*canonical.Value{y}, canonical.IntsAttr("pads", pads...))
		} else {
			y = b.op("Pad", []*canonical.Value{y, b.constI([]int64{2 * r}, pads...)})
		}
	}
	if len(sliceAxes) > 0 {
		k := int64(len(sliceAxes))
		if to < 10 {
			y = b.op("Slice", []*canonical.Value{y}, canonical.IntsAttr("starts", starts...),
				canonical.IntsAttr("ends", ends...), canonical.IntsAttr("axes", sliceAxes...))
		} else {
			y = b.op("Slice", []*canonical.Value{y, b.constI([]int64{k}, starts...), b.constI([]int64{k}, ends...), b.constI([]int64{k}, sliceAxes...)})
		}
	}
	if y == x {
		y = b.op("Identity", []*canonical.Value{x})
	}
	return b.finish(y)
}

// expandShrink: y = m*x + (mLow - mHigh)*bias with mLow = x < -lambd,
// mHigh = x > lambd and m = mLow + mHigh.
func expandShrink(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	dt := elemType(x)
	if to < 7 || !isFloatDT(dt) || dt == canonical.BFloat16 {
		return blocked("target opset 9 or later", "the expansion of Shrink needs Greater/Less on its type (float types from opset 7)")
	}
	lambd := float64(n.AttrFloat("lambd", 0.5))
	bias := float64(n.AttrFloat("bias", 0))
	b := newBuilder(sc, to)
	cast := func(v *canonical.Value) *canonical.Value {
		return b.op("Cast", []*canonical.Value{v}, canonical.IntAttr("to", int64(dt)))
	}
	lo := cast(b.op("Less", []*canonical.Value{x, b.scalar(-lambd)}))
	hi := cast(b.op("Greater", []*canonical.Value{x, b.scalar(lambd)}))
	m := b.op("Add", []*canonical.Value{lo, hi})
	y := b.op("Mul", []*canonical.Value{m, x})
	if bias != 0 {
		s := b.op("Sub", []*canonical.Value{lo, hi})
		y = b.op("Add", []*canonical.Value{y, b.op("Mul", []*canonical.Value{s, b.scalar(bias)})})
	}
	return b.finish(y)
}

// expandMVN follows MeanVarianceNormalization's function body.
func expandMVN(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	axes := []int64{0, 2, 3}
	if a := n.Attr("axes"); a != nil {
		axes = a.Ints
	}
	for _, a := range axes {
		if a < 0 && to < 11 {
			r, ok := rankOf(x)
			if !ok {
				return needShapes("the input's rank is known", "MeanVarianceNormalization: negative axes need the rank before opset 11")
			}
			norm := make([]int64, len(axes))
			for i, b := range axes {
				if b < 0 {
					b += int64(r)
				}
				norm[i] = b
			}
			axes = norm
			break
		}
	}
	b := newBuilder(sc, to)
	mean := b.reduce("ReduceMean", x, axes, true)
	exSq := b.op("Mul", []*canonical.Value{mean, mean})
	eXsq := b.reduce("ReduceMean", b.op("Mul", []*canonical.Value{x, x}), axes, true)
	std := b.op("Sqrt", []*canonical.Value{b.op("Sub", []*canonical.Value{eXsq, exSq})})
	d := b.op("Sub", []*canonical.Value{x, mean})
	y := b.op("Div", []*canonical.Value{d, b.op("Add", []*canonical.Value{std, b.scalar(1e-9)})})
	return b.finish(y)
}

// expandWindowDynamic follows the window functions' function body (Range
// from opset 11, a Loop before).
func expandWindowDynamic(sc *stepCtx, to int) error {
	n := sc.n
	dt := canonical.DataType(n.AttrInt("output_datatype", int64(canonical.Float)))
	switch dt {
	case canonical.Float, canonical.Double, canonical.Float16,
		canonical.Int8, canonical.Int16, canonical.Int32, canonical.Int64,
		canonical.Uint8, canonical.Uint16, canonical.Uint32, canonical.Uint64:
	case canonical.BFloat16:
		if to < 13 {
			return blocked("target opset 13 or later", "%s output_datatype bfloat16 needs Cast to bfloat16 (opset 13)", n.OpType)
		}
	default:
		return blocked("", "%s output_datatype %d is not supported by the expansion", n.OpType, int64(dt))
	}
	var a0, a1, a2 float64
	switch n.OpType {
	case "HannWindow":
		a0, a1 = 0.5, 0.5
	case "HammingWindow":
		a0, a1 = 25.0/46, 21.0/46
	default:
		a0, a1, a2 = 0.42, 0.5, 0.08
	}
	b := newBuilder(sc, to)
	b.dt = canonical.Float
	f := func(v float64) *canonical.Value { return b.typed(canonical.Float, v) }
	size := b.op("Cast", []*canonical.Value{n.Input(0)}, canonical.IntAttr("to", int64(canonical.Float)))
	denom := size
	if n.AttrInt("periodic", 1) == 0 {
		denom = b.op("Sub", []*canonical.Value{size, f(1)})
	}
	inc := b.op("Div", []*canonical.Value{f(float64(float32(2 * math.Pi))), denom})
	var rng *canonical.Value
	if to >= 11 {
		rng = b.op("Range", []*canonical.Value{f(0), size, f(1)})
	} else {
		var err error
		if rng, err = rangeLoop(sc, b, f(0), size, f(1), canonical.Float); err != nil {
			return err
		}
	}
	ang := b.op("Mul", []*canonical.Value{rng, inc})
	y := b.op("Sub", []*canonical.Value{f(a0), b.op("Mul", []*canonical.Value{f(a1), b.op("Cos", []*canonical.Value{ang})})})
	if a2 != 0 {
		two := b.op("Mul", []*canonical.Value{ang, f(2)})
		y = b.op("Add", []*canonical.Value{y, b.op("Mul", []*canonical.Value{f(a2), b.op("Cos", []*canonical.Value{two})})})
	}
	if dt != canonical.Float {
		y = b.op("Cast", []*canonical.Value{y}, canonical.IntAttr("to", int64(dt)))
	}
	return b.finish(y)
}

// expandCenterCropPadDynamic follows CenterCropPad's function body (Pad
// with a pads input, from opset 11); axes go through ScatterElements.
func expandCenterCropPadDynamic(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	b := newBuilder(sc, to)
	target := n.Input(1)
	if elemType(target) != canonical.Int64 {
		target = b.op("Cast", []*canonical.Value{target}, canonical.IntAttr("to", int64(canonical.Int64)))
	}
	xs := b.op("Shape", []*canonical.Value{x})
	if a := n.Attr("axes"); a != nil {
		axes := a.Ints
		target = b.op("ScatterElements", []*canonical.Value{xs, b.constI([]int64{int64(len(axes))}, axes...), target}, canonical.IntAttr("axis", 0))
	}
	var padded *canonical.Value
	if to >= 12 {
		padded = b.op("Max", []*canonical.Value{xs, target})
	} else {
		padded = b.op("Where", []*canonical.Value{b.op("Greater", []*canonical.Value{xs, target}), xs, target})
	}
	two := b.constI([]int64{1}, 2)
	amount := b.op("Sub", []*canonical.Value{padded, xs})
	left := b.op("Div", []*canonical.Value{amount, two})
	right := b.op("Sub", []*canonical.Value{amount, left})
	pads := b.op("Concat", []*canonical.Value{left, right}, canonical.IntAttr("axis", 0))
	p := b.op("Pad", []*canonical.Value{x, pads})
	start := b.op("Div", []*canonical.Value{b.op("Sub", []*canonical.Value{padded, target}), two})
	end := b.op("Add", []*canonical.Value{start, target})
	return b.finish(b.op("Slice", []*canonical.Value{p, start, end}))
}

// expandAffineGrid builds the base grid [M, k+1] (rows x, y[, z], 1; a
// constant when size is known, else from Range from opset 11) and
// multiplies it by theta transposed: [N, M, k], reshaped to [N, ..., k].
func expandAffineGrid(sc *stepCtx, to int) error {
	n := sc.n
	theta, size := n.Input(0), n.Input(1)
	dt := elemType(theta)
	if dt != canonical.Float && dt != canonical.Double && dt != canonical.Float16 {
		return needShapes("theta's type is known", "AffineGrid's expansion needs theta to be float, double or float16 (got %v)", dt)
	}
	k := 0
	if ts, ok := shapeOf(theta); ok && len(ts) == 3 {
		k = int(ts[1])
	} else if ss, ok := shapeOf(size); ok && len(ss) == 1 {
		k = int(ss[0]) - 2
	}
	if k != 2 && k != 3 {
		return needShapes("theta's shape is known", "AffineGrid needs to know whether it is 2D or 3D to expand")
	}
	align := n.AttrInt("align_corners", 0) != 0
	b := newBuilder(sc, to)
	b.dt = dt
	thetaT := b.op("Transpose", []*canonical.Value{theta}, canonical.IntsAttr("perm", 0, 2, 1))
	if t := knownValue(sc, size); t != nil {
		sz, err := tensorInts(t)
		if err != nil || len(sz) != k+2 {
			return blocked("", "AffineGrid: size must hold %d integers", k+2)
		}
		m := int64(1)
		for _, d := range sz[2:] {
			if d <= 0 || d > maxConstElems {
				return blocked("", "AffineGrid: size %v out of range", sz)
			}
			m *= d
			if m > maxConstElems {
				return blocked("keep opset >= 20", "AffineGrid: grid too large to store as a constant")
			}
		}
		// coords[j] for spatial dim j in x, y, z order (last dim first).
		coords := make([][]float64, k)
		for j := 0; j < k; j++ {
			cnt := sz[2+k-1-j]
			c := make([]float64, cnt)
			for i := range c {
				if align {
					if cnt > 1 {
						c[i] = -1 + float64(i)*2/float64(cnt-1)
					} else {
						c[i] = -1
					}
				} else {
					c[i] = (2*float64(i)+1)/float64(cnt) - 1
				}
			}
			coords[j] = c
		}
		base := make([]float64, 0, m*int64(k+1))
		for idx := int64(0); idx < m; idx++ {
			rem := idx
			row := make([]float64, k+1)
			for j := 0; j < k; j++ {
				cnt := sz[2+k-1-j]
				row[j] = coords[j][rem%cnt]
				rem /= cnt
			}
			row[k] = 1
			base = append(base, row...)
		}
		bv := b.constF([]int64{m, int64(k + 1)}, base...)
		g := b.op("MatMul", []*canonical.Value{bv, thetaT})
		shape := append([]int64{sz[0]}, sz[2:]...)
		shape = append(shape, int64(k))
		return b.finish(b.op("Reshape", []*canonical.Value{g, b.constI([]int64{int64(len(shape))}, shape...)}))
	}
	if to < 9 {
		return blocked("target opset 9 or later (ConstantOfShape, Where), or make the size input a constant",
			"AffineGrid does not exist before opset 20; before opset 9 it expands only when size is constant")
	}
	if elemType(size) != canonical.Int64 {
		return needShapes("size's type is known", "AffineGrid's size input must be int64")
	}
	slice1 := func(v *canonical.Value, from, until int64) *canonical.Value {
		if to < 10 {
			return b.op("Slice", []*canonical.Value{v}, canonical.IntsAttr("starts", from), canonical.IntsAttr("ends", until), canonical.IntsAttr("axes", 0))
		}
		return b.op("Slice", []*canonical.Value{v, b.constI([]int64{1}, from), b.constI([]int64{1}, until), b.constI([]int64{1}, 0)})
	}
	spatial := slice1(size, 2, int64(2+k))
	zi := b.op("ConstantOfShape", []*canonical.Value{spatial})
	zeros := b.op("Cast", []*canonical.Value{zi}, canonical.IntAttr("to", int64(dt)))
	parts := make([]*canonical.Value, 0, k+1)
	for j := 0; j < k; j++ {
		dim := int64(2 + k - 1 - j) // size index of x, y, z
		cnt := b.op("Gather", []*canonical.Value{size, b.constI(nil, dim)}, canonical.IntAttr("axis", 0))
		cntF := b.op("Cast", []*canonical.Value{cnt}, canonical.IntAttr("to", int64(dt)))
		var ri *canonical.Value
		if to >= 11 {
			ri = b.op("Range", []*canonical.Value{b.constI(nil, 0), cnt, b.constI(nil, 1)})
		} else {
			var err error
			if ri, err = rangeLoop(sc, b, b.constI(nil, 0), cnt, b.constI(nil, 1), canonical.Int64); err != nil {
				return err
			}
		}
		iF := b.op("Cast", []*canonical.Value{ri}, canonical.IntAttr("to", int64(dt)))
		var c *canonical.Value
		if !align {
			step := b.op("Div", []*canonical.Value{b.scalar(2), cntF})
			start := b.op("Add", []*canonical.Value{b.scalar(-1), b.op("Div", []*canonical.Value{step, b.scalar(2)})})
			c = b.op("Add", []*canonical.Value{start, b.op("Mul", []*canonical.Value{iF, step})})
		} else {
			step := b.op("Div", []*canonical.Value{b.scalar(2), b.op("Sub", []*canonical.Value{cntF, b.scalar(1)})})
			if j == 2 {
				step = b.op("Where", []*canonical.Value{b.op("Equal", []*canonical.Value{cnt, b.constI(nil, 1)}), b.scalar(0), step})
			}
			c = b.op("Add", []*canonical.Value{b.scalar(-1), b.op("Mul", []*canonical.Value{iF, step})})
		}
		// Broadcast along the spatial dims: x is the last one.
		if j > 0 {
			axes := make([]int64, j)
			for a := range axes {
				axes[a] = int64(a + 1)
			}
			c = b.unsqueeze(c, axes...)
		}
		parts = append(parts, b.unsqueeze(b.op("Add", []*canonical.Value{zeros, c}), int64(k)))
	}
	parts = append(parts, b.unsqueeze(b.op("Add", []*canonical.Value{zeros, b.scalar(1)}), int64(k)))
	grid := b.op("Concat", parts, canonical.IntAttr("axis", int64(k)))
	base := b.op("Reshape", []*canonical.Value{grid, b.constI([]int64{2}, -1, int64(k+1))})
	g := b.op("MatMul", []*canonical.Value{base, thetaT})
	nDim := slice1(size, 0, 1)
	shape := b.op("Concat", []*canonical.Value{nDim, spatial, b.constI([]int64{1}, int64(k))}, canonical.IntAttr("axis", 0))
	return b.finish(b.op("Reshape", []*canonical.Value{g, shape}))
}

// expandRangeLoop follows Range's function body: a Loop whose scan output
// collects start, start+delta, ... (trip count ceil((limit-start)/delta),
// computed in double as ONNX Runtime does).
func expandRangeLoop(sc *stepCtx, to int) error {
	n := sc.n
	dt := elemType(n.Input(0))
	switch dt {
	case canonical.Float, canonical.Double, canonical.Int32, canonical.Int64:
	default:
		return blocked("keep opset >= 11, or make start, limit and delta constants",
			"Range does not exist before opset 11; its Loop expansion needs start of type float, double, int32 or int64 (got %v)", dt)
	}
	b := newBuilder(sc, to)
	y, err := rangeLoop(sc, b, n.Input(0), n.Input(1), n.Input(2), dt)
	if err != nil {
		return err
	}
	return b.finish(y)
}

// rangeLoop emits Range(start, limit, delta) of element type dt as a Loop
// (valid from opset 1).
func rangeLoop(sc *stepCtx, b *builder, start, limit, delta *canonical.Value, dt canonical.DataType) (*canonical.Value, error) {
	n := sc.n
	base := n.Name
	if base == "" {
		base = n.OpType
	}
	body := canonical.NewGraph(sc.c.names.Fresh(base + "_loop_body"))
	body.Parent = sc.g
	var err error
	add := func(name string, d canonical.DataType) *canonical.Value {
		if err != nil {
			return nil
		}
		var v *canonical.Value
		v, err = body.AddInput(sc.c.names.Fresh(base+"_"+name), canonical.TensorType(d, []int64{}))
		return v
	}
	_ = add("iter", canonical.Int64)
	condIn := add("cond_in", canonical.Bool)
	prev := add("prev", dt)
	d := add("delta", dt)
	if err != nil {
		return nil, err
	}
	be := build.On(body, sc.c.names, base+"_loop")
	node := func(op string, ins ...*canonical.Value) *canonical.Value { return be.Op(op, ins) }
	condOut := node("Identity", condIn)
	next := node("Add", prev, d)
	dOut := node("Identity", d)
	scan := node("Identity", prev)
	if err := be.Err(); err != nil {
		return nil, err
	}
	body.Outputs = []*canonical.Value{condOut, next, dOut, scan}
	toD := func(v *canonical.Value) *canonical.Value {
		return b.op("Cast", []*canonical.Value{v}, canonical.IntAttr("to", int64(canonical.Double)))
	}
	cnt := b.op("Ceil", []*canonical.Value{b.op("Div", []*canonical.Value{toD(b.op("Sub", []*canonical.Value{limit, start})), toD(delta)})})
	cnt = b.op("Relu", []*canonical.Value{cnt})
	trip := b.op("Cast", []*canonical.Value{cnt}, canonical.IntAttr("to", int64(canonical.Int64)))
	outs := b.opN("Loop", []*canonical.Value{trip, nil, start, delta}, 3, canonical.GraphAttr("body", body))
	if outs == nil {
		return nil, b.Err()
	}
	body.Owner = b.Added[len(b.Added)-1]
	return outs[2], nil
}

// roundEven rounds half to even without Round (opset 11): r = Floor(v+0.5),
// minus 1 when v was a tie and r is odd.
func roundEven(b *builder, v *canonical.Value) *canonical.Value {
	f := func(x float64) *canonical.Value { return b.typed(canonical.Float, x) }
	r := b.op("Floor", []*canonical.Value{b.op("Add", []*canonical.Value{v, f(0.5)})})
	d := b.op("Sub", []*canonical.Value{r, v})
	tie := b.op("Cast", []*canonical.Value{b.op("Not", []*canonical.Value{b.op("Less", []*canonical.Value{d, f(0.5)})})}, canonical.IntAttr("to", int64(canonical.Float)))
	half := b.op("Floor", []*canonical.Value{b.op("Mul", []*canonical.Value{r, f(0.5)})})
	parity := b.op("Sub", []*canonical.Value{r, b.op("Mul", []*canonical.Value{half, f(2)})})
	odd := b.op("Cast", []*canonical.Value{b.op("Greater", []*canonical.Value{parity, f(0.5)})}, canonical.IntAttr("to", int64(canonical.Float)))
	return b.op("Sub", []*canonical.Value{r, b.op("Mul", []*canonical.Value{tie, odd})})
}

// expandDQL follows DynamicQuantizeLinear's function body, with Round
// emulated by Floor (and QuantizeLinear emulated before opset 10).
func expandDQL(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	if elemType(x) != canonical.Float {
		return needShapes("the input's type is known", "DynamicQuantizeLinear's expansion needs a float input")
	}
	b := newBuilder(sc, to)
	b.dt = canonical.Float
	zero, qmax := b.scalar(0), b.scalar(255)
	minA := b.op("Min", []*canonical.Value{b.reduceAll("ReduceMin", x), zero})
	maxA := b.op("Max", []*canonical.Value{b.reduceAll("ReduceMax", x), zero})
	scale := b.op("Div", []*canonical.Value{b.op("Sub", []*canonical.Value{maxA, minA}), qmax})
	zpF := b.op("Sub", []*canonical.Value{zero, b.op("Div", []*canonical.Value{minA, scale})})
	zpF = b.op("Clip", []*canonical.Value{zpF}, canonical.FloatAttr("min", 0), canonical.FloatAttr("max", 255))
	zpF = roundEven(b, zpF)
	toU8 := func(v *canonical.Value) *canonical.Value {
		return b.op("Cast", []*canonical.Value{v}, canonical.IntAttr("to", int64(canonical.Uint8)))
	}
	zp := toU8(zpF)
	var y *canonical.Value
	if to >= 10 {
		y = b.op("QuantizeLinear", []*canonical.Value{x, scale, zp})
	} else {
		q := b.op("Add", []*canonical.Value{roundEven(b, b.op("Div", []*canonical.Value{x, scale})), zpF})
		y = toU8(b.op("Clip", []*canonical.Value{q}, canonical.FloatAttr("min", 0), canonical.FloatAttr("max", 255)))
	}
	scaleOut := b.op("Identity", []*canonical.Value{scale})
	return b.finish(y, scaleOut, zp)
}
