package tflite

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/tflite/flexbuf"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// MediaPipe's custom operators (mediapipe/util/tflite/operations), by
// their custom code. Their parameters are the raw C structs MediaPipe
// reads from custom_options.
func customHandlers() map[string]func(*converter, *operator) error {
	return map[string]func(*converter, *operator) error{
		"Convolution2DTransposeBias": (*converter).transposeConvBias,
		"MaxPoolingWithArgmax2D":     (*converter).maxPoolArgmax,
		"MaxUnpooling2D":             (*converter).maxUnpooling,
		"TransformLandmarks":         (*converter).transformLandmarks,
		"TransformTensorBilinear":    (*converter).transformTensorBilinear,
		"TransformTensor":            (*converter).transformTensor,
		"Landmarks2TransformMatrix":  (*converter).landmarksToTransformMatrix,
	}
}

// poolParams reads the TfLitePoolParams MediaPipe's pooling ops keep in
// custom_options: int32 padding (1 SAME, 2 VALID), stride_width,
// stride_height, filter_width, filter_height, activation.
type poolParams struct {
	padding        fb.Padding
	sW, sH, fW, fH int64
	act            fb.ActivationFunctionType
}

func readPoolParams(o *operator) (poolParams, error) {
	var p poolParams
	if o.raw == nil || len(o.raw.CustomOptionsBytes()) < 24 {
		return p, fmt.Errorf("custom_options: want a TfLitePoolParams (padding, stride_width, stride_height, filter_width, filter_height, activation: 24 bytes)")
	}
	b := o.raw.CustomOptionsBytes()
	v := func(i int) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }
	switch v(0) {
	case 1:
		p.padding = fb.PaddingSAME
	case 2:
		p.padding = fb.PaddingVALID
	default:
		return p, fmt.Errorf("padding %d: want 1 (SAME) or 2 (VALID)", v(0))
	}
	if err := positive("pool size/stride", v(1), v(2), v(3), v(4)); err != nil {
		return p, err
	}
	p.sW, p.sH, p.fW, p.fH = int64(v(1)), int64(v(2)), int64(v(3)), int64(v(4))
	// TfLiteFusedActivation: 0 none, 1 relu, 2 relu_n1_to_1, 3 relu6.
	switch v(5) {
	case 0:
		p.act = fb.ActivationFunctionTypeNONE
	case 1:
		p.act = fb.ActivationFunctionTypeRELU
	case 2:
		p.act = fb.ActivationFunctionTypeRELU_N1_TO_1
	case 3:
		p.act = fb.ActivationFunctionTypeRELU6
	default:
		return p, fmt.Errorf("activation %d is not supported", v(5))
	}
	return p, nil
}

// readers lists the operators of the subgraph reading tensor idx.
func (c *converter) readers(idx int32) []*operator {
	var out []*operator
	for _, op := range c.g.ops {
		if slices.Contains(op.inputs, idx) {
			out = append(out, op)
		}
	}
	return out
}

// maxPoolArgmax maps MaxPoolingWithArgmax2D (mediapipe
// max_pool_argmax.cc): max pooling of [N, H, W, C] with TfLitePoolParams,
// and the position of each maximum. That position has no one form: MediaPipe's kernel
// writes the float y·filter_width + x + 0.1, XNNPACK (which runs it in
// LiteRT.js) uint32 bit patterns of x·filter_height + y. It is kept as
// ONNX MaxPool's Indices inside the graph, so the indices output may only
// be read by MaxUnpooling2D (which reads it back the same way in either
// kernel) and may not be a model output.
func (c *converter) maxPoolArgmax(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs: want the pooled values and the argmax indices", len(o.outputs))
	}
	p, err := readPoolParams(o)
	if err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	idx := c.tensor(o.outputs[1])
	if slices.Contains(c.g.outputs, o.outputs[1]) {
		return fmt.Errorf("its argmax indices %q are a model output: MediaPipe's kernel and XNNPACK write them in different forms, neither of which ONNX has; only MaxUnpooling2D may read them", idx.name)
	}
	for _, r := range c.readers(o.outputs[1]) {
		if r.custom != "MaxUnpooling2D" || slices.Index(r.inputs, o.outputs[1]) != 1 {
			return fmt.Errorf("its argmax indices %q are read by operator %d (%s): MediaPipe's kernel and XNNPACK write them in different forms, neither of which ONNX has; only MaxUnpooling2D may read them", idx.name, r.index, opName(r))
		}
	}
	xt := c.tensor(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	attrs, err := padAttrs(p.padding, xt.shape[1], xt.shape[2], p.fH, p.fW, p.sH, p.sW, 1, 1)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("kernel_shape", p.fH, p.fW), canonical.IntsAttr("strides", p.sH, p.sW))
	indices := c.unique(idx.name + "_onnx_indices")
	if err := c.emit(o.outputs[0], nchw, p.act, func(y string) error {
		c.node("MaxPool", []string{x}, []string{y, indices}, attrs...)
		return nil
	}); err != nil {
		return err
	}
	return c.finishAs(o.outputs[1], nchw, indices, true)
}

// maxUnpooling maps MaxUnpooling2D (mediapipe max_unpooling.cc): each
// value of [N, H, W, C] is written at the position its argmax index
// names, zeros elsewhere, an output of the output tensor's shape. The
// indices must come from a MaxPoolingWithArgmax2D of the same window,
// strides and padding whose input has the output's shape: ONNX MaxUnpool
// then scatters at MaxPool's Indices.
func (c *converter) maxUnpooling(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	p, err := readPoolParams(o)
	if err != nil {
		return err
	}
	var pool *operator
	for _, op := range c.g.ops {
		if op.code == fb.BuiltinOperatorCUSTOM && op.custom == "MaxPoolingWithArgmax2D" && len(op.outputs) == 2 && op.outputs[1] == o.inputs[1] {
			pool = op
		}
	}
	if pool == nil {
		return fmt.Errorf("its indices %q are not the argmax output of a MaxPoolingWithArgmax2D (the only form this mapping reads)", c.tensor(o.inputs[1]).name)
	}
	pp, err := readPoolParams(pool)
	if err != nil {
		return fmt.Errorf("its MaxPoolingWithArgmax2D (operator %d): %w", pool.index, err)
	}
	if pp.padding != p.padding || pp.sW != p.sW || pp.sH != p.sH || pp.fW != p.fW || pp.fH != p.fH {
		return fmt.Errorf("its pooling parameters differ from those of the MaxPoolingWithArgmax2D (operator %d) whose indices it reads", pool.index)
	}
	out, err := c.staticShape(o.outputs[0], "output")
	if err != nil {
		return err
	}
	if in := c.tensor(pool.inputs[0]).shape; !slices.Equal(in, out) {
		return fmt.Errorf("output shape %v differs from the shape %v of the input its indices were taken from", out, in)
	}
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	ind, err := c.rawValue(int(o.inputs[1]), nchw)
	if err != nil {
		return err
	}
	shape := c.constI64(c.firstOutName(o)+"_shape", []int64{out[0], out[3], out[1], out[2]})
	return c.emit(o.outputs[0], nchw, p.act, func(y string) error {
		c.node("MaxUnpool", []string{x, ind, shape}, []string{y}, canonical.IntsAttr("kernel_shape", p.fH, p.fW), canonical.IntsAttr("strides", p.sH, p.sW))
		return nil
	})
}

// staticShape is tensor idx's shape, refused when a dimension is dynamic.
func (c *converter) staticShape(idx int32, what string) ([]int64, error) {
	t := c.tensor(idx)
	for _, d := range t.shape {
		if d < 0 {
			return nil, fmt.Errorf("the %s %q has a dynamic shape %v", what, t.name, t.shape)
		}
	}
	return t.shape, nil
}

// mediapipeInput is the preamble of the MediaPipe transform operators: o
// has inputs inputs and version 1 or 2 (MediaPipe's two CPU kernels of
// each), and its first input (the what) a static shape, which it
// returns.
func (c *converter) mediapipeInput(o *operator, inputs int, what string) ([]int64, error) {
	if err := needInputs(o, inputs); err != nil {
		return nil, err
	}
	if o.version != 1 && o.version != 2 {
		return nil, fmt.Errorf("version %d: MediaPipe's kernels of this operator are versions 1 and 2", o.version)
	}
	return c.staticShape(o.inputs[0], what)
}

// transformTensor maps TransformTensor, the custom code of
// TransformTensorBilinear's version 1 CPU kernel (MediaPipe registers
// version 1 of it under this name).
func (c *converter) transformTensor(o *operator) error {
	if o.version != 1 {
		return fmt.Errorf("version %d: MediaPipe's TransformTensor is version 1 (TransformTensorBilinear is its version 2)", o.version)
	}
	return c.transformTensorBilinear(o)
}

// bilinearV1 checks TransformTensorBilinear version 1's custom_options, a
// FlexBuffers map whose mode, when given, must be "bilinear" (MediaPipe's
// ParseTransformTensorBilinearV1Attributes refuses another); its
// output_size is the output tensor's shape, which the kernel reads.
func bilinearV1(o *operator) error {
	m, err := flexOptions(o)
	if err != nil {
		return err
	}
	if r, ok := m["mode"]; ok {
		mode, err := r.String()
		if err != nil {
			return fmt.Errorf("custom_options mode: %w", err)
		}
		if mode != "bilinear" {
			return fmt.Errorf("custom_options mode %q: only bilinear is defined", mode)
		}
	}
	return nil
}

// landmarksV1 reads TransformLandmarks version 1's custom_options, a
// FlexBuffers map of dimensions (int, default 3) and scale (float, default
// 1; the kernel refuses 0), as MediaPipe's
// ParseTransformLandmarksV1Attributes reads them.
func landmarksV1(o *operator) (int64, float32, error) {
	dims, scale := int64(3), float32(1)
	m, err := flexOptions(o)
	if err != nil {
		return 0, 0, err
	}
	if r, ok := m["dimensions"]; ok {
		if dims, err = r.Int(); err != nil {
			return 0, 0, fmt.Errorf("custom_options dimensions: %w", err)
		}
	}
	if r, ok := m["scale"]; ok {
		f, err := r.Float()
		if err != nil {
			return 0, 0, fmt.Errorf("custom_options scale: %w", err)
		}
		scale = float32(f)
	}
	if dims != 2 && dims != 3 || scale == 0 {
		return 0, 0, fmt.Errorf("custom_options dimensions %d, scale %g: want 2 or 3 and a scale not 0 (the kernel refuses them)", dims, scale)
	}
	return dims, scale, nil
}

// matrixRows returns the first two rows of a MediaPipe 4x4 transform
// matrix (any shape of 16 floats) as eight [1] values, m[0]..m[7].
func (c *converter) matrixRows(idx int32, n string) ([]string, error) {
	sh, err := c.staticShape(idx, "transform matrix")
	if err != nil {
		return nil, err
	}
	count := int64(1)
	for _, d := range sh {
		count *= d
	}
	if count != 16 {
		return nil, fmt.Errorf("the transform matrix has shape %v: want 16 values (a 4x4 matrix)", sh)
	}
	m, err := c.floatValue(idx, native)
	if err != nil {
		return nil, err
	}
	flat := c.b.Op("Reshape", n+"_m", []string{m, c.constI64(n+"_m16", []int64{16})})
	out := make([]string, 8)
	for i := range out {
		out[i] = c.b.Op("Slice", fmt.Sprintf("%s_m%d", n, i), []string{flat, c.constI64(n+"_s", []int64{int64(i)}), c.constI64(n+"_e", []int64{int64(i + 1)})})
	}
	return out, nil
}

// op2 adds a node op(a, b) and returns its output.
func (c *converter) op2(op, a, b, n string) string { return c.b.Op(op, n, []string{a, b}) }

// castValue adds a Cast of v to type to and returns its output.
func (c *converter) castValue(v string, to canonical.DataType) string {
	return c.b.Op("Cast", v+"_cast", []string{v}, canonical.IntAttr("to", int64(to)))
}

// transformLandmarks maps TransformLandmarks version 2 (mediapipe
// transform_landmarks.cc): landmarks [1, N, D] (D = 2 or 3) have x, y
// replaced by the first two rows of the 4x4 matrix applied to (x, y, 0,
// 1), summed left to right in float32 as the kernel does; z is kept. The
// kernel reads the first row of the batch only, so a larger one is
// refused. Version 1 (the same file's v1 kernel) reads landmarks [1, H, W,
// C] as C/D landmarks of D = custom_options dimensions values at each
// (y, x), and multiplies the matrix's translation by custom_options
// scale (in float32) first.
func (c *converter) transformLandmarks(o *operator) error {
	sh, err := c.mediapipeInput(o, 2, "landmarks input")
	if err != nil {
		return err
	}
	n := c.firstOutName(o)
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	dims, scale := int64(0), float32(1)
	if o.version == 1 {
		if len(sh) != 4 || sh[0] != 1 {
			return fmt.Errorf("version 1: landmarks of shape %v: want [1, H, W, C]", sh)
		}
		if dims, scale, err = landmarksV1(o); err != nil {
			return fmt.Errorf("version 1: %w", err)
		}
		if sh[3]%dims != 0 {
			return fmt.Errorf("version 1: landmarks of shape %v: want C a multiple of dimensions %d", sh, dims)
		}
		x = c.b.Op("Reshape", n+"_v1", []string{x, c.constI64(n+"_v1shape", []int64{1, sh[1] * sh[2] * sh[3] / dims, dims})})
	} else {
		if len(sh) != 3 || sh[0] != 1 || sh[2] != 2 && sh[2] != 3 {
			return fmt.Errorf("landmarks of shape %v: want [1, N, 2 or 3]", sh)
		}
		dims = sh[2]
	}
	m, err := c.matrixRows(o.inputs[1], n)
	if err != nil {
		return err
	}
	if o.version == 1 {
		s := c.b.Number(n+"_scale", canonical.Float, []int64{1}, float64(scale))
		m[3], m[7] = c.op2("Mul", m[3], s, n+"_tx"), c.op2("Mul", m[7], s, n+"_ty")
	}
	axis := c.constI64(n+"_axis", []int64{2})
	col := func(i int64) string {
		return c.b.Op("Slice", fmt.Sprintf("%s_c%d", n, i), []string{x, c.constI64(n+"_cs", []int64{i}), c.constI64(n+"_ce", []int64{i + 1}), axis})
	}
	px, py := col(0), col(1)
	// (m0, m1, m2, m3) · (x, y, 0, 1): the m2·0 term adds a zero.
	row := func(a, b, t, tag string) string {
		s := c.op2("Add", c.op2("Mul", a, px, n+"_ax"+tag), c.op2("Mul", b, py, n+"_by"+tag), n+"_sum"+tag)
		return c.op2("Add", s, t, n+"_"+tag)
	}
	cols := []string{row(m[0], m[1], m[3], "x"), row(m[4], m[5], m[7], "y")}
	if dims == 3 {
		cols = append(cols, col(2))
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		if o.version == 1 {
			cat := c.b.Op("Concat", n+"_cat", cols, canonical.IntAttr("axis", 2))
			c.node("Reshape", []string{cat, c.constI64(n+"_shape", sh)}, []string{y})
			return nil
		}
		c.node("Concat", cols, []string{y}, canonical.IntAttr("axis", 2))
		return nil
	})
}

// transformTensorBilinear maps TransformTensorBilinear version 2
// (mediapipe transform_tensor_bilinear.cc): output pixel (x, y) samples
// the input at the first two rows of the 4x4 matrix applied to (x, y, 0,
// 1), after the kernel's half-pixel shift of the translation (t +=
// 0.5·(a + b) - 0.5, in double), bilinearly from its four neighbours (a
// neighbour past the edge reads 0), and is 0 where the point falls
// outside [0, W-1] × [0, H-1]. Coordinates are float32, the blend double,
// as the kernel computes them. Input [1, H, W, C], output [1, OH, OW, C]
// (the output tensor's static shape; the kernel reads batch 0 only).
// Version 1 (the same file's v1 kernel) is the same without the
// half-pixel shift.
func (c *converter) transformTensorBilinear(o *operator) error {
	in, err := c.mediapipeInput(o, 2, "input")
	if err != nil {
		return err
	}
	if o.version == 1 {
		if err := bilinearV1(o); err != nil {
			return fmt.Errorf("version 1: %w", err)
		}
	}
	out, err := c.staticShape(o.outputs[0], "output")
	if err != nil {
		return err
	}
	if len(in) != 4 || in[0] != 1 || len(out) != 4 || out[0] != 1 || out[3] != in[3] {
		return fmt.Errorf("input %v and output %v: want [1, H, W, C] and [1, OH, OW, C]", in, out)
	}
	n := c.firstOutName(o)
	m, err := c.matrixRows(o.inputs[1], n)
	if err != nil {
		return err
	}
	cast := c.castValue
	half := c.b.Number(n+"_half", canonical.Double, nil, 0.5)
	shift := func(a, b, t, tag string) string {
		s := c.op2("Add", c.op2("Mul", cast(a, canonical.Double), half, n+"_ha"+tag), c.op2("Mul", cast(b, canonical.Double), half, n+"_hb"+tag), n+"_hs"+tag)
		s = c.op2("Sub", s, half, n+"_hc"+tag)
		return cast(c.op2("Add", cast(t, canonical.Double), s, n+"_ht"+tag), canonical.Float)
	}
	tx, ty := m[3], m[7] // version 1: no half-pixel shift
	if o.version != 1 {
		tx, ty = shift(m[0], m[1], m[3], "x"), shift(m[4], m[5], m[7], "y")
	}
	OH, OW, H, W, C := out[1], out[2], in[1], in[2], in[3]
	gx, gy := make([]float32, OH*OW), make([]float32, OH*OW)
	for i := range gx {
		gx[i], gy[i] = float32(int64(i)%OW), float32(int64(i)/OW)
	}
	ox, oy := c.constF32(n+"_ox", []int64{OH * OW}, gx), c.constF32(n+"_oy", []int64{OH * OW}, gy)
	coord := func(a, b, t, tag string) string {
		s := c.op2("Add", c.op2("Mul", a, ox, n+"_ax"+tag), c.op2("Mul", b, oy, n+"_by"+tag), n+"_s"+tag)
		return c.op2("Add", s, t, n+"_tc"+tag)
	}
	tcx, tcy := coord(m[0], m[1], tx, "x"), coord(m[4], m[5], ty, "y")
	zero := c.scalarF32(n+"_zero", 0)
	inside := func(v string, hi int64, tag string) string {
		bad := c.op2("Or", c.op2("Less", v, zero, n+"_lo"+tag), c.op2("Greater", v, c.scalarF32(n+"_max"+tag, float32(hi-1)), n+"_hi"+tag), n+"_out"+tag)
		return c.b.Op("Not", n+"_in"+tag, []string{bad})
	}
	valid := c.op2("And", inside(tcx, W, "x"), inside(tcy, H, "y"), n+"_valid")
	fx, fy := c.b.Op("Floor", n+"_fx", []string{tcx}), c.b.Op("Floor", n+"_fy", []string{tcy})
	one := c.constI64(n+"_one", []int64{1})
	col := func(v string) string { return c.b.Op("Unsqueeze", v+"_col", []string{v, one}) } // [P] -> [P, 1]
	rc := col(c.op2("Sub", tcx, fx, n+"_rc"))
	lc := col(c.op2("Sub", tcy, fy, n+"_lc"))
	// Corners index the input padded with a zero row and column (the
	// kernel reads 0 past the edge), clamped so that points outside
	// (masked below) still index it.
	index := func(f string, hi int64, tag string) string {
		cl := c.b.Op("Clip", n+"_cl"+tag, []string{f, zero, c.scalarF32(n+"_top"+tag, float32(hi-1))})
		return cast(cl, canonical.Int64)
	}
	ix, iy := index(fx, W, "x"), index(fy, H, "y")
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	padded := c.b.Op("Pad", n+"_padded", []string{x, c.constI64(n+"_pads", []int64{0, 0, 0, 0, 0, 1, 1, 0})})
	table := c.b.Op("Reshape", n+"_table", []string{padded, c.constI64(n+"_tshape", []int64{(H + 1) * (W + 1), C})})
	ix1, iy1 := c.op2("Add", ix, one, n+"_ix1"), c.op2("Add", iy, one, n+"_iy1")
	rowW := c.constI64(n+"_w1", []int64{W + 1})
	corner := func(iy, ix, tag string) string {
		at := c.op2("Add", c.op2("Mul", iy, rowW, n+"_r"+tag), ix, n+"_at"+tag)
		return c.b.Op("Gather", n+"_q"+tag, []string{table, at}, canonical.IntAttr("axis", 0))
	}
	q11, q21, q12, q22 := corner(iy, ix, "11"), corner(iy, ix1, "21"), corner(iy1, ix, "12"), corner(iy1, ix1, "22")
	oneD := c.b.Number(n+"_oned", canonical.Double, nil, 1)
	// The kernel's (1.0 - w) * a + w * b with w and a, b float: the
	// first product in double (1.0 is a double literal), the second in
	// float, their sum in double, stored as float.
	blend := func(w, a, b, tag string) string {
		left := c.op2("Mul", c.op2("Sub", oneD, cast(w, canonical.Double), n+"_1m"+tag), cast(a, canonical.Double), n+"_wa"+tag)
		right := cast(c.op2("Mul", w, b, n+"_wb"+tag), canonical.Double)
		return cast(c.op2("Add", left, right, n+"_"+tag), canonical.Float)
	}
	upper, lower := blend(rc, q11, q21, "upper"), blend(rc, q12, q22, "lower")
	// result = lc * lower + (1.0 - lc) * upper: the same form, terms
	// swapped.
	res := blend(lc, upper, lower, "blend")
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		masked := c.b.Op("Where", n+"_masked", []string{col(valid), res, zero})
		c.node("Reshape", []string{masked, c.constI64(n+"_oshape", slices.Clone(out))}, []string{y})
		return nil
	})
}

// transposeConvBias maps Convolution2DTransposeBias: inputs (input
// [N,H,W,I], filter [O,H,W,I], bias [O]), custom_options a
// TfLiteTransposeConvParams (int32 padding: 1 SAME, 2 VALID; int32
// stride_width; int32 stride_height); the output size is the output
// tensor's. It computes TRANSPOSE_CONV with that padding and strides
// plus the bias, which emitTransposeConv maps.
func (c *converter) transposeConvBias(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	if o.raw == nil {
		return fmt.Errorf("operator %d has no custom_options", o.index)
	}
	opts := o.raw.CustomOptionsBytes()
	if len(opts) < 12 {
		return fmt.Errorf("custom_options of %d bytes: want a TfLiteTransposeConvParams (padding, stride_width, stride_height: 12 bytes)", len(opts))
	}
	pad := int32(binary.LittleEndian.Uint32(opts[0:]))
	sW := int64(int32(binary.LittleEndian.Uint32(opts[4:])))
	sH := int64(int32(binary.LittleEndian.Uint32(opts[8:])))
	if pad != 1 && pad != 2 {
		return fmt.Errorf("padding %d: want 1 (SAME) or 2 (VALID)", pad)
	}
	return c.emitTransposeConv(o, o.inputs[0], o.inputs[1], o.inputs[2], c.tensor(o.outputs[0]).shape, pad == 1, sH, sW, fb.ActivationFunctionTypeNONE)
}

// flexOptions is the operator's custom_options read as a FlexBuffers map.
func flexOptions(o *operator) (map[string]flexbuf.Ref, error) {
	if o.raw == nil || len(o.raw.CustomOptionsBytes()) == 0 {
		return nil, fmt.Errorf("no custom_options (a FlexBuffers map)")
	}
	root, err := flexbuf.Root(o.raw.CustomOptionsBytes())
	if err != nil {
		return nil, fmt.Errorf("custom_options: %w", err)
	}
	m, err := root.Map()
	if err != nil {
		return nil, fmt.Errorf("custom_options: %w", err)
	}
	return m, nil
}

// flexInt, flexFloat and flexInts read key k of a custom_options map (see
// flexOptions), refused when it is missing or of another kind.
func flexInt(m map[string]flexbuf.Ref, k string) (int64, error) {
	r, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("custom_options: no %s", k)
	}
	v, err := r.Int()
	if err != nil {
		return 0, fmt.Errorf("custom_options %s: %w", k, err)
	}
	return v, nil
}

func flexFloat(m map[string]flexbuf.Ref, k string) (float32, error) {
	r, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("custom_options: no %s", k)
	}
	v, err := r.Float()
	if err != nil {
		return 0, fmt.Errorf("custom_options %s: %w", k, err)
	}
	return float32(v), nil
}

func flexInts(m map[string]flexbuf.Ref, k string) ([]int64, error) {
	r, ok := m[k]
	if !ok {
		return nil, fmt.Errorf("custom_options: no %s", k)
	}
	v, err := r.Ints()
	if err != nil {
		return nil, fmt.Errorf("custom_options %s: %w", k, err)
	}
	return v, nil
}

// landmarksMatrixParams are Landmarks2TransformMatrix's custom_options:
// the landmark pairs whose rotated bounding box is the crop, the two
// landmarks whose angle is the rotation, and the output size; version 2
// adds a target rotation and the scales, version 1 (LiteRT's
// ParseLandmarksToTransformMatrixV1Attributes) the range the landmarks
// are given in, the box's size multiplier and the input (image) size.
type landmarksMatrixParams struct {
	subset         []int64
	left, right    int64
	outH, outW     int64
	target, sx, sy float32 // version 2
	rng            int64   // version 1: landmarks_range
	mult           float32 // version 1: bbox_size_multiplier
	inH, inW       int64   // version 1: input_hw
}

// readLandmarksMatrixParams reads the custom_options of o's version for n
// landmarks: the keys MediaPipe's parser reads, refused when missing, and
// the values its kernel refuses (and indices past the n landmarks, which
// it would read past its input) refused with it.
func readLandmarksMatrixParams(o *operator, n int64) (landmarksMatrixParams, error) {
	var p landmarksMatrixParams
	m, err := flexOptions(o)
	if err != nil {
		return p, err
	}
	type intKey struct {
		k   string
		dst *int64
	}
	type floatKey struct {
		k   string
		dst *float32
	}
	ints := []intKey{{"left_rotation_idx", &p.left}, {"right_rotation_idx", &p.right}}
	var floats []floatKey
	subsetKey := "subset_idxs"
	if o.version == 1 {
		subsetKey = "subset"
		ints = append(ints, intKey{"landmarks_range", &p.rng})
		floats = append(floats, floatKey{"bbox_size_multiplier", &p.mult})
		dims, err := flexInt(m, "dimensions")
		if err != nil {
			return p, err
		}
		if dims != 3 {
			return p, fmt.Errorf("custom_options dimensions %d: the kernel reads 3", dims)
		}
		for _, hw := range []struct {
			k    string
			h, w *int64
		}{{"input_hw", &p.inH, &p.inW}, {"output_hw", &p.outH, &p.outW}} {
			v, err := flexInts(m, hw.k)
			if err != nil {
				return p, err
			}
			if len(v) < 2 {
				return p, fmt.Errorf("custom_options %s holds %d values: want (height, width)", hw.k, len(v))
			}
			*hw.h, *hw.w = v[0], v[1]
		}
	} else {
		ints = append(ints, intKey{"output_height", &p.outH}, intKey{"output_width", &p.outW})
		floats = append(floats, floatKey{"target_rotation_radians", &p.target}, floatKey{"scale_x", &p.sx}, floatKey{"scale_y", &p.sy})
	}
	for _, f := range ints {
		if *f.dst, err = flexInt(m, f.k); err != nil {
			return p, err
		}
	}
	for _, f := range floats {
		if *f.dst, err = flexFloat(m, f.k); err != nil {
			return p, err
		}
	}
	if p.subset, err = flexInts(m, subsetKey); err != nil {
		return p, err
	}
	if len(p.subset) == 0 {
		return p, fmt.Errorf("custom_options %s is empty", subsetKey)
	}
	for _, i := range append([]int64{p.left, p.right}, p.subset...) {
		if i < 0 || i >= n {
			return p, fmt.Errorf("custom_options: landmark index %d outside the %d landmarks", i, n)
		}
	}
	if p.outH <= 0 || p.outW <= 0 {
		return p, fmt.Errorf("custom_options: output size %dx%d must be positive", p.outW, p.outH)
	}
	if o.version == 1 {
		if p.inH <= 0 || p.inW <= 0 || p.rng <= 0 || p.mult == 0 {
			return p, fmt.Errorf("custom_options: input_hw %dx%d and landmarks_range %d must be positive, bbox_size_multiplier %g not 0 (the kernel refuses them)", p.inH, p.inW, p.rng, p.mult)
		}
	} else if !(p.sx > 0) || !(p.sy > 0) {
		return p, fmt.Errorf("custom_options: scales %g, %g must be positive", p.sx, p.sy)
	}
	return p, nil
}

// landmarksToTransformMatrix maps Landmarks2TransformMatrix (mediapipe
// landmarks_to_transform_matrix.cc): from landmarks (x, y, z triples,
// [1, N, 3] at version 2, [1, 1, 1, 3N] at version 1) it computes the 4x4
// matrix that maps an output crop to the input: the angle between the
// left and right rotation landmarks sets a rotation, the bounding box of
// the subset landmarks rotated by it (its centre rotated back) the
// crop, each version in its kernel's arithmetic
// (landmarksMatrixV1, landmarksMatrixV2). Only the first two rows of the
// matrix vary.
func (c *converter) landmarksToTransformMatrix(o *operator) error {
	sh, err := c.mediapipeInput(o, 1, "landmarks input")
	if err != nil {
		return err
	}
	total := int64(1)
	for _, d := range sh {
		total *= d
	}
	if o.version == 1 {
		if len(sh) != 4 || sh[0] != 1 || sh[1] != 1 || sh[2] != 1 || total%3 != 0 {
			return fmt.Errorf("version 1: landmarks of shape %v: want [1, 1, 1, 3N] holding (x, y, z) triples", sh)
		}
	} else if len(sh) != 3 || total%3 != 0 {
		return fmt.Errorf("version 2: landmarks of shape %v: want rank 3 holding (x, y, z) triples (version 1 reads [1, 1, 1, 3N])", sh)
	}
	p, err := readLandmarksMatrixParams(o, total/3)
	if err != nil {
		return fmt.Errorf("version %d: %w", o.version, err)
	}
	n := c.firstOutName(o)
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	pts := c.b.Op("Reshape", n+"_points", []string{x, c.constI64(n+"_pshape", []int64{-1, 3})})
	one := c.constI64(n+"_one", []int64{1})
	// column i of rows (a [K, 3] value) as [K].
	column := func(rows string, i int64, tag string) string {
		v := c.b.Op("Slice", n+"_c"+tag, []string{rows, c.constI64(n+"_cs", []int64{i}), c.constI64(n+"_ce", []int64{i + 1}), one})
		return c.b.Op("Reshape", n+"_v"+tag, []string{v, c.constI64(n+"_flat", []int64{-1})})
	}
	point := func(i int64, tag string) (string, string) {
		r := c.b.Op("Gather", n+"_p"+tag, []string{pts, c.constI64(n+"_i"+tag, []int64{i})}, canonical.IntAttr("axis", 0))
		return column(r, 0, tag+"x"), column(r, 1, tag+"y")
	}
	lx, ly := point(p.left, "l")
	rx, ry := point(p.right, "r")
	dy, dx := c.op2("Sub", ry, ly, n+"_dy"), c.op2("Sub", rx, lx, n+"_dx")
	// The kernels read each subset pair's two landmarks (an odd last one
	// twice): the box is the same over the indices as stored.
	sub := c.b.Op("Gather", n+"_subset", []string{pts, c.constI64(n+"_subset_idx", p.subset)}, canonical.IntAttr("axis", 0))
	sx, sy := column(sub, 0, "sx"), column(sub, 1, "sy")
	var m [6]string
	if o.version == 1 {
		m = c.landmarksMatrixV1(p, n, dy, dx, sx, sy)
	} else {
		m = c.landmarksMatrixV2(p, n, dy, dx, sx, sy)
	}
	k := func(v float32, tag string) string { return c.constF32(n+"_k"+tag, []int64{1}, []float32{v}) }
	zero, unit := k(0, "0"), k(1, "1")
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		flat := c.b.Op("Concat", n+"_matrix", []string{m[0], m[1], zero, m[2], m[3], m[4], zero, m[5], zero, zero, unit, zero, zero, zero, zero, unit}, canonical.IntAttr("axis", 0))
		c.node("Reshape", []string{flat, c.constI64(n+"_oshape", slices.Clone(c.tensor(o.outputs[0]).shape))}, []string{y})
		return nil
	})
}

// landmarksMatrixV2 is version 2's matrix (entries 00, 01, 03, 10, 11,
// 13) from the rotation landmarks' differences dy, dx and the subset's
// coordinates sx, sy: the rotation r = target_rotation_radians - atan2(dy,
// dx), the box of the subset rotated by r (its centre rotated back is the
// crop's centre, its size times scale_x, scale_y over the output size the
// scale), then shift · rotation(-r) · scale · shift(-output/2), each
// product in float32 as the kernel sums it (the zero terms dropped).
// atan2 is atan2To: fdlibm's atan2f, which glibc's is.
func (c *converter) landmarksMatrixV2(p landmarksMatrixParams, n, dy, dx, sx, sy string) [6]string {
	angle := c.unique(n + "_atan2")
	c.atan2To(dy, dx, canonical.Float, angle)
	rot := c.op2("Sub", c.scalarF32(n+"_target", p.target), angle, n+"_rotation")
	cos, sin := c.b.Op("Cos", n+"_cos", []string{rot}), c.b.Op("Sin", n+"_sin", []string{rot})
	// (cos r, -sin r; sin r, cos r) · (x, y), then the box.
	xr := c.op2("Sub", c.op2("Mul", cos, sx, n+"_cx"), c.op2("Mul", sin, sy, n+"_sy"), n+"_xr")
	yr := c.op2("Add", c.op2("Mul", sin, sx, n+"_sx"), c.op2("Mul", cos, sy, n+"_cy"), n+"_yr")
	reduce := func(op, v, tag string) string {
		r := c.b.Op(op, n+"_"+tag, []string{v}, canonical.IntAttr("keepdims", 1))
		return c.b.Op("Reshape", n+"_"+tag+"1", []string{r, c.constI64(n+"_flat1", []int64{1})})
	}
	maxX, minX, maxY, minY := reduce("ReduceMax", xr, "maxx"), reduce("ReduceMin", xr, "minx"), reduce("ReduceMax", yr, "maxy"), reduce("ReduceMin", yr, "miny")
	width, height := c.op2("Sub", maxX, minX, n+"_w"), c.op2("Sub", maxY, minY, n+"_h")
	two := c.scalarF32(n+"_two", 2)
	mx, my := c.op2("Div", c.op2("Add", minX, maxX, n+"_sumx"), two, n+"_midx"), c.op2("Div", c.op2("Add", minY, maxY, n+"_sumy"), two, n+"_midy")
	// The centre rotated back: (cos r, sin r; -sin r, cos r) · (mx, my).
	cx := c.op2("Add", c.op2("Mul", cos, mx, n+"_cmx"), c.op2("Mul", sin, my, n+"_smy"), n+"_cropx")
	cy := c.op2("Sub", c.op2("Mul", cos, my, n+"_cmy"), c.op2("Mul", sin, mx, n+"_smx"), n+"_cropy")
	scale := func(s float32, size string, out int64, tag string) string {
		return c.op2("Div", c.op2("Mul", c.scalarF32(n+"_scale"+tag, s), size, n+"_ss"+tag), c.scalarF32(n+"_out"+tag, float32(out)), n+"_scale"+tag)
	}
	scx, scy := scale(p.sx, width, p.outW, "x"), scale(p.sy, height, p.outH, "y")
	negSin := c.b.Op("Neg", n+"_nsin", []string{sin})
	m00, m01 := c.op2("Mul", cos, scx, n+"_m00"), c.op2("Mul", sin, scy, n+"_m01")
	m10, m11 := c.op2("Mul", negSin, scx, n+"_m10"), c.op2("Mul", cos, scy, n+"_m11")
	shx, shy := c.scalarF32(n+"_shx", float32(-float64(p.outW)/2)), c.scalarF32(n+"_shy", float32(-float64(p.outH)/2))
	last := func(a, b, t, tag string) string {
		return c.op2("Add", c.op2("Add", c.op2("Mul", a, shx, n+"_ax"+tag), c.op2("Mul", b, shy, n+"_by"+tag), n+"_ab"+tag), t, n+"_m"+tag)
	}
	return [6]string{m00, m01, last(m00, m01, cx, "03"), m10, m11, last(m10, m11, cy, "13")}
}

// landmarksMatrixV1 is version 1's matrix (entries 00, 01, 03, 10, 11,
// 13; the v1 namespace of the kernel): the angle alpha = -atan(dy / dx)
// in float32; the subset rotated by alpha, its box (started at ∓100000
// as the kernel starts it) times bbox_size_multiplier over
// landmarks_range the scale S, its centre rotated back by -alpha the
// translation; the matrix the float32 product to_absolute · R · S ·
// to_relative of 3x3 matrices, left to right, as the kernel sums each
// (the zero terms dropped), where to_relative maps the output_hw crop to
// [-1, 1], R rotates by -alpha and moves the centre over
// landmarks_range, mapped to [-1, 1], and to_absolute maps [-1, 1] to
// input_hw. The kernel calls the unqualified cos and sin on floats, which
// the libstdc++ build fixtures/mediapipe/make.sh makes resolves to the
// double functions: the rotations are computed in double from the float
// angle and coordinates and rounded to float where the kernel stores
// them, and so is the translation's 2x - 1 (Cast to DOUBLE and back).
func (c *converter) landmarksMatrixV1(p landmarksMatrixParams, n, dy, dx, sx, sy string) [6]string {
	double := func(v string) string { return c.castValue(v, canonical.Double) }
	float := func(v string) string { return c.castValue(v, canonical.Float) }
	mul, add, sub := func(a, b, tag string) string { return c.op2("Mul", a, b, n+"_"+tag) },
		func(a, b, tag string) string { return c.op2("Add", a, b, n+"_"+tag) },
		func(a, b, tag string) string { return c.op2("Sub", a, b, n+"_"+tag) }
	neg := func(v, tag string) string { return c.b.Op("Neg", n+"_"+tag, []string{v}) }
	alpha := double(neg(c.b.Op("Atan", n+"_atan", []string{c.op2("Div", dy, dx, n+"_slope")}), "alpha"))
	cosA, sinA := c.b.Op("Cos", n+"_cos", []string{alpha}), c.b.Op("Sin", n+"_sin", []string{alpha})
	// (cos a, -sin a; sin a, cos a) · (x, y) in double, stored as float.
	xd, yd := double(sx), double(sy)
	xr := float(sub(mul(xd, cosA, "xc"), mul(yd, sinA, "ys"), "xr"))
	yr := float(add(mul(xd, sinA, "xs"), mul(yd, cosA, "yc"), "yr"))
	box := func(op, v string, start float32, tag string) string {
		all := c.b.Op("Concat", n+"_all"+tag, []string{v, c.constF32(n+"_start"+tag, []int64{1}, []float32{start})}, canonical.IntAttr("axis", 0))
		return c.b.Op(op, n+"_"+tag, []string{all}, canonical.IntAttr("keepdims", 1))
	}
	maxX, minX := box("ReduceMax", xr, -100000, "maxx"), box("ReduceMin", xr, 100000, "minx")
	maxY, minY := box("ReduceMax", yr, -100000, "maxy"), box("ReduceMin", yr, 100000, "miny")
	rng, mult := c.scalarF32(n+"_range", float32(p.rng)), c.scalarF32(n+"_mult", p.mult)
	scx := c.op2("Div", mul(sub(maxX, minX, "w"), mult, "bw"), rng, "scalex")
	scy := c.op2("Div", mul(sub(maxY, minY, "h"), mult, "bh"), rng, "scaley")
	// The kernel halves the float sum in double and stores it as float:
	// the float quotient, rounded once the same.
	two := c.scalarF32(n+"_two", 2)
	mx, my := double(c.op2("Div", add(maxX, minX, "sumx"), two, "midx")), double(c.op2("Div", add(maxY, minY, "sumy"), two, "midy"))
	back := neg(alpha, "nalpha")
	cosB, sinB := c.b.Op("Cos", n+"_cosb", []string{back}), c.b.Op("Sin", n+"_sinb", []string{back})
	cmx := float(sub(mul(mx, cosB, "mxc"), mul(my, sinB, "mys"), "cmx"))
	cmy := float(add(mul(mx, sinB, "mxs"), mul(my, cosB, "myc"), "cmy"))
	twoD, oneD := c.b.Number(n+"_twod", canonical.Double, nil, 2), c.b.Number(n+"_oned", canonical.Double, nil, 1)
	// (v / landmarks_range) · 2.0 - 1.0: the quotient in float, the rest
	// in double.
	relative := func(v, tag string) string {
		return float(sub(mul(double(c.op2("Div", v, rng, "q"+tag)), twoD, "q2"+tag), oneD, "t"+tag))
	}
	tx, ty := relative(cmx, "x"), relative(cmy, "y")
	cs, sn := float(cosB), float(sinB)
	k := func(v float64, tag string) string { return c.scalarF32(n+"_"+tag, float32(v)) }
	// to_absolute's (input - 1) / 2 and to_relative's 2 / (output - 1),
	// in double, stored as float.
	aw, ah := k((float64(p.inW)-1)/2, "absw"), k((float64(p.inH)-1)/2, "absh")
	rw, rh := k(2/(float64(p.outW)-1), "relw"), k(2/(float64(p.outH)-1), "relh")
	// to_absolute · R: (aw·c, aw·-s, aw·tx + aw; ah·s, ah·c, ah·ty + ah).
	p00, p01, p02 := mul(aw, cs, "p00"), mul(aw, neg(sn, "nsin"), "p01"), add(mul(aw, tx, "awtx"), aw, "p02")
	p10, p11, p12 := mul(ah, sn, "p10"), mul(ah, cs, "p11"), add(mul(ah, ty, "ahty"), ah, "p12")
	// · S: the first two columns scaled; · to_relative: those times
	// 2 / (output - 1), the last (-q0) + (-q1) + p2.
	q00, q01, q10, q11 := mul(p00, scx, "q00"), mul(p01, scy, "q01"), mul(p10, scx, "q10"), mul(p11, scy, "q11")
	last := func(a, b, t, tag string) string { return add(sub(neg(a, "n"+tag), b, "d"+tag), t, "m"+tag) }
	return [6]string{mul(q00, rw, "m00"), mul(q01, rh, "m01"), last(q00, q01, p02, "03"),
		mul(q10, rw, "m10"), mul(q11, rh, "m11"), last(q10, q11, p12, "13")}
}

// userCustomOp maps a custom operator the user defines (Options.Custom):
// a call of the function named by its custom code on the operator's
// inputs, in TFLite's layout (quantized ones dequantized), writing its
// outputs.
func (c *converter) userCustomOp(o *operator) error {
	f := c.st.custom.Lookup(o.custom)
	if len(f.Body.Inputs) != len(o.inputs) || len(f.Body.Outputs) != len(o.outputs) {
		return fmt.Errorf("the custom function %s.%s takes %d inputs and gives %d outputs; the operator has %d and %d",
			f.Domain, f.Name, len(f.Body.Inputs), len(f.Body.Outputs), len(o.inputs), len(o.outputs))
	}
	call, err := c.st.custom.Call(o.custom, nil)
	if err != nil {
		return err
	}
	ins := make([]string, len(o.inputs))
	for i, idx := range o.inputs {
		if ins[i], err = c.floatValue(idx, native); err != nil {
			return err
		}
	}
	outs := make([]string, len(o.outputs))
	for i, idx := range o.outputs {
		outs[i] = c.unique(c.output(idx, native) + "_custom")
	}
	c.b.NodeIn(call.Domain, call.Name, outs[0], ins, outs)
	for i, idx := range o.outputs {
		if err := c.finish(idx, native, outs[i]); err != nil {
			return err
		}
	}
	return nil
}
