package tflite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Int8Report says what the int8 full-integer quantization did.
type Int8Report struct {
	// Samples is the number of calibration samples.
	Samples int `json:"samples"`
	// Quantized counts the operators computing on int8 tensors; Float
	// lists the ones kept in float32 (op and ONNX node), each between a
	// DEQUANTIZE and a QUANTIZE.
	Quantized int `json:"quantized"`
	// FromModel is set when the scales and zero points are the QDQ
	// model's own (no calibration).
	FromModel bool     `json:"from_model,omitempty"`
	Float     []string `json:"float,omitempty"`
	// PerChannel counts the weight tensors quantized per output channel.
	PerChannel int `json:"per_channel"`
	// Edges counts the QUANTIZE and DEQUANTIZE operators added.
	Quantize   int `json:"quantize_ops"`
	Dequantize int `json:"dequantize_ops"`
}

// int8Rule is how an op computes in int8.
type int8Rule int

const (
	ruleOwn     int8Rule = iota // outputs have their own calibrated range
	rulePass                    // outputs share the quantization of input 0
	ruleSame                    // inputs and output share one quantization (CONCATENATION)
	ruleFixed                   // TFLite fixes the output quantization
	ruleWeights                 // CONV/FC: int8 weights, int32 bias
)

var int8Ops = map[fb.BuiltinOperator]int8Rule{
	fb.BuiltinOperatorCONV_2D: ruleWeights, fb.BuiltinOperatorDEPTHWISE_CONV_2D: ruleWeights,
	fb.BuiltinOperatorFULLY_CONNECTED: ruleWeights,
	fb.BuiltinOperatorADD:             ruleOwn, fb.BuiltinOperatorSUB: ruleOwn, fb.BuiltinOperatorMUL: ruleOwn,
	fb.BuiltinOperatorMEAN: ruleOwn, fb.BuiltinOperatorRELU: ruleOwn, fb.BuiltinOperatorRELU6: ruleOwn,
	fb.BuiltinOperatorLEAKY_RELU: ruleOwn, fb.BuiltinOperatorHARD_SWISH: ruleOwn,
	fb.BuiltinOperatorMAX_POOL_2D: rulePass, fb.BuiltinOperatorAVERAGE_POOL_2D: rulePass,
	fb.BuiltinOperatorPAD: rulePass, fb.BuiltinOperatorPADV2: rulePass, fb.BuiltinOperatorRESHAPE: rulePass,
	fb.BuiltinOperatorTRANSPOSE: rulePass, fb.BuiltinOperatorSTRIDED_SLICE: rulePass, fb.BuiltinOperatorSLICE: rulePass,
	fb.BuiltinOperatorSPLIT: rulePass, fb.BuiltinOperatorGATHER: rulePass, fb.BuiltinOperatorREDUCE_MAX: rulePass,
	fb.BuiltinOperatorRESIZE_BILINEAR: rulePass, fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR: rulePass,
	fb.BuiltinOperatorCONCATENATION: ruleSame,
	fb.BuiltinOperatorSOFTMAX:       ruleFixed, fb.BuiltinOperatorLOGISTIC: ruleFixed, fb.BuiltinOperatorTANH: ruleFixed,
}

// fixedParams are the output quantizations TFLite's int8 kernels demand.
func fixedParams(c fb.BuiltinOperator) *qparams {
	switch c {
	case fb.BuiltinOperatorSOFTMAX, fb.BuiltinOperatorLOGISTIC:
		return &qparams{scale: []float32{1.0 / 256}, zero: []int64{-128}}
	case fb.BuiltinOperatorTANH:
		return &qparams{scale: []float32{1.0 / 128}, zero: []int64{0}}
	}
	return nil
}

// asymParams is int8 asymmetric quantization of [lo, hi] (widened to hold 0).
func asymParams(lo, hi float64) *qparams {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 0
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	scale := (hi - lo) / 255
	if scale == 0 {
		scale = 1.0 / 255
	}
	zp := math.Round(-128 - lo/scale)
	zp = math.Max(-128, math.Min(127, zp))
	return &qparams{scale: []float32{float32(scale)}, zero: []int64{int64(zp)}}
}

func clampI8(v float64) int8 { return int8(math.Max(-128, math.Min(127, math.Round(v)))) }

// calibrate runs the calibration samples on the executor and returns the
// min-max range of every float value the TFLite model holds, as passes'
// static quantization calibrates its activations.
func calibrate(ctx context.Context, m *canonical.Model, samples [][]*canonical.Tensor, vals []*canonical.Value) (map[*canonical.Value][2]float64, error) {
	ranges := map[*canonical.Value][2]float64{}
	add := func(v *canonical.Value, t *canonical.Tensor) {
		if t == nil {
			return
		}
		f, err := t.Float64s()
		if err != nil {
			return
		}
		r, seen := ranges[v]
		if !seen {
			r = [2]float64{math.Inf(1), math.Inf(-1)}
		}
		for _, x := range f {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				r[0], r[1] = math.Min(r[0], x), math.Max(r[1], x)
			}
		}
		ranges[v] = r
	}
	inputs := map[*canonical.Value]int{}
	gi := graphInputs(m)
	for i, v := range gi {
		inputs[v] = i
	}
	var names []string
	var captured []*canonical.Value
	for _, v := range vals {
		if _, ok := inputs[v]; !ok {
			names = append(names, v.Name)
			captured = append(captured, v)
		}
	}
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	defer ex.Close()
	for si, s := range samples {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s) != len(gi) {
			return nil, fmt.Errorf("calibration sample %d has %d tensors, the model %d inputs", si, len(s), len(gi))
		}
		got, err := ex.RunCapture(ctx, s, names)
		if err != nil {
			return nil, fmt.Errorf("calibration sample %d: %w", si, err)
		}
		for _, v := range captured {
			add(v, got[v.Name])
		}
		for v, i := range inputs {
			add(v, s[i])
		}
	}
	return ranges, nil
}

func graphInputs(m *canonical.Model) []*canonical.Value {
	inits := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		inits[v] = true
	}
	var out []*canonical.Value
	for _, v := range m.Graph.Inputs {
		if !inits[v] && v.Const == nil {
			out = append(out, v)
		}
	}
	return out
}

// quantizer rewrites the float TFLite model of a converter as int8.
type quantizer struct {
	c      *converter
	t      *tmodel
	rep    *Int8Report
	parent []int32 // union-find over tensors sharing a quantization
	rng    map[int32][2]float64
	fixed  map[int32]*qparams
	params map[int32]*qparams // per group root
	// given are the quantizations a QDQ model gives (per group root);
	// fake are the float activations its ops read quantized.
	given map[int32]*qparams
	fake  map[int32]bool
	// raw are the activations a QDQ model quantizes that it also reads
	// unquantized: their producer computes float.
	raw    map[int32]bool
	isI8   map[int32]bool
	i8twin map[int32]int32
	f32    map[int32]int32
	consts map[string]int32
	ops    []*top
}

func (q *quantizer) find(t int32) int32 {
	for q.parent[t] != t {
		q.parent[t] = q.parent[q.parent[t]]
		t = q.parent[t]
	}
	return t
}

// union joins the groups of a and b unless the model gives them two
// different quantizations (the op joining them then stays float).
func (q *quantizer) union(a, b int32) {
	ra, rb := q.find(a), q.find(b)
	if ra == rb {
		return
	}
	pa, pb := q.given[ra], q.given[rb]
	if pa != nil && pb != nil && !pa.equal(pb) {
		return
	}
	q.parent[rb] = ra
	if pa == nil {
		q.given[ra] = pb
	}
}

// act reports whether tensor t is a float activation (not a constant).
func (q *quantizer) act(t int32) bool {
	if t < 0 {
		return false
	}
	tt := q.t.tensors[t]
	return tt.typ == fb.TensorTypeFLOAT32 && tt.buf == 0
}

// quantizeInt8 calibrates the model on opts.Calibration and rewrites the
// float TFLite model as full-integer int8: per-channel symmetric int8
// weights, asymmetric int8 activations, int32 biases; float I/O through
// QUANTIZE/DEQUANTIZE unless Options.Int8IO. An op TFLite has no int8
// kernel for here stays float between DEQUANTIZE and QUANTIZE.
//
// A QDQ model (c.qdq) is not calibrated: its activations take the scales
// and zero points of their QuantizeLinear, its weights the scales of
// their DequantizeLinear; an op whose inputs and outputs the model does
// not all quantize stays float, reading the quantized activations
// dequantized as ONNX Runtime does.
func (c *converter) quantizeInt8(ctx context.Context) error {
	if len(c.opts.Calibration) == 0 && c.qdq == nil {
		return fmt.Errorf("int8 quantization needs calibration samples (Options.Calibration)")
	}
	var vals []*canonical.Value
	for v := range c.reps {
		if v.Const == nil {
			vals = append(vals, v)
		}
	}
	slices.SortFunc(vals, func(a, b *canonical.Value) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	var ranges map[*canonical.Value][2]float64
	samples := 0
	if c.qdq == nil {
		var err error
		if ranges, err = calibrate(ctx, c.m, c.opts.Calibration, vals); err != nil {
			return err
		}
		samples = len(c.opts.Calibration)
	}
	t := c.t
	q := &quantizer{c: c, t: t, rep: &Int8Report{Samples: samples},
		parent: make([]int32, len(t.tensors)), rng: map[int32][2]float64{}, fixed: map[int32]*qparams{},
		params: map[int32]*qparams{}, given: map[int32]*qparams{}, fake: map[int32]bool{}, raw: map[int32]bool{},
		isI8: map[int32]bool{}, i8twin: map[int32]int32{}, f32: map[int32]int32{}, consts: map[string]int32{}}
	for i := range q.parent {
		q.parent[i] = int32(i)
	}
	if c.qdq != nil {
		for v, p := range c.qdq.acts {
			for _, rp := range c.reps[v] {
				if q.act(rp.t) {
					q.given[rp.t] = p
					q.fake[rp.t] = c.qdq.fake[v]
					q.raw[rp.t] = !c.qdq.fake[v]
				}
			}
		}
		q.rep.FromModel = true
	}
	for _, v := range vals {
		r, ok := ranges[v]
		if !ok || r[0] > r[1] {
			continue
		}
		for _, rp := range c.reps[v] {
			if q.act(rp.t) {
				q.rng[rp.t] = r
			}
		}
	}
	for ti, d := range c.derived {
		r, ok := ranges[d.src]
		if !ok || r[0] > r[1] || !q.act(ti) {
			continue
		}
		lo, hi := d.a*r[0]+d.b, d.a*r[1]+d.b
		if lo > hi {
			lo, hi = hi, lo
		}
		q.rng[ti] = [2]float64{min(max(lo, d.lo), d.hi), min(max(hi, d.lo), d.hi)}
	}
	// Groups of tensors that must share one quantization.
	for _, o := range t.ops {
		rule, ok := int8Ops[o.code]
		if !ok {
			continue
		}
		switch rule {
		case rulePass:
			x := o.in[0]
			if o.code == fb.BuiltinOperatorSPLIT {
				x = o.in[1]
			}
			if !q.act(x) {
				continue
			}
			for _, out := range o.out {
				if q.act(out) {
					q.union(x, out)
				}
			}
		case ruleSame:
			for _, in := range o.in {
				if q.act(in) && q.act(o.out[0]) {
					q.union(o.out[0], in)
				}
			}
		case ruleFixed:
			q.fixed[o.out[0]] = fixedParams(o.code)
		}
	}
	// Each group's quantization: a fixed one, else its members' range.
	grng := map[int32][2]float64{}
	for i := range t.tensors {
		ti := int32(i)
		if !q.act(ti) {
			continue
		}
		root := q.find(ti)
		if f := q.fixed[ti]; f != nil && (q.given[root] == nil || q.given[root].equal(f)) {
			// A QDQ model's own quantization of the output wins: the
			// op then stays float (canInt8), as ONNX Runtime computes
			// it, quantized at the model's scale.
			q.params[root] = f
		}
		if q.raw[ti] {
			q.raw[root] = true // the group holds one value: read raw, all computed float
		}
		if p := q.given[root]; p != nil && q.params[root] == nil {
			q.params[root] = p
		}
		if r, ok := q.rng[ti]; ok {
			g, seen := grng[root]
			if !seen {
				g = r
			}
			grng[root] = [2]float64{math.Min(g[0], r[0]), math.Max(g[1], r[1])}
		}
	}
	for root, r := range grng {
		if q.params[root] == nil {
			q.params[root] = asymParams(r[0], r[1])
		}
	}
	// Inputs.
	for i, in := range t.inputs {
		if !q.act(in) {
			continue
		}
		if p := q.paramsOf(in); p != nil && c.opts.Int8IO {
			q.setInt8(in, p)
			c.rep.Inputs[i].Type = "int8"
			c.rep.Inputs[i].Scale, c.rep.Inputs[i].ZeroPoint = float64(p.scale[0]), p.zero[0]
		}
	}
	for _, o := range t.ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := q.op(o); err != nil {
			return fmt.Errorf("int8: %s (node %q): %w", o.code, o.fromNode, err)
		}
	}
	// Outputs.
	for i, out := range t.outputs {
		// a float output the QDQ model quantizes: ONNX Runtime gives
		// its DequantizeLinear's values
		fakeOut := !q.isI8[out] && q.act(out) && q.fake[out] && q.paramsOf(out) != nil
		if !q.isI8[out] && !c.opts.Int8IO && !fakeOut {
			continue
		}
		name := t.tensors[out].name
		var nt int32
		switch {
		case q.isI8[out] && !c.opts.Int8IO:
			nt = q.floatOf(out, "")
		case fakeOut && !c.opts.Int8IO:
			nt = q.floatOf(q.int8Of(out, ""), "")
		case !q.isI8[out] && c.opts.Int8IO && q.paramsOf(out) != nil:
			nt = q.int8Of(out, "")
		default:
			if q.isI8[out] {
				p := t.tensors[out].q
				c.rep.Outputs[i].Type = "int8"
				c.rep.Outputs[i].Scale, c.rep.Outputs[i].ZeroPoint = float64(p.scale[0]), p.zero[0]
			}
			continue
		}
		t.tensors[out].name = name + ";q"
		t.tensors[nt].name = name
		t.outputs[i] = nt
		if c.opts.Int8IO {
			p := t.tensors[nt].q
			c.rep.Outputs[i].Type = "int8"
			c.rep.Outputs[i].Scale, c.rep.Outputs[i].ZeroPoint = float64(p.scale[0]), p.zero[0]
		}
	}
	t.ops = q.ops
	t.compact()
	c.rep.Int8 = q.rep
	return nil
}

func (q *quantizer) paramsOf(t int32) *qparams {
	if q.isI8[t] {
		return q.t.tensors[t].q
	}
	return q.params[q.find(t)]
}

func (q *quantizer) setInt8(t int32, p *qparams) {
	tt := q.t.tensors[t]
	tt.typ, tt.q = fb.TensorTypeINT8, p
	q.isI8[t] = true
}

// int8Of returns an int8 tensor holding activation t (a QUANTIZE when t
// is float).
func (q *quantizer) int8Of(t int32, node string) int32 {
	if q.isI8[t] {
		return t
	}
	if x, ok := q.i8twin[t]; ok {
		return x
	}
	tt := q.t.tensors[t]
	x := q.t.addTensor(tt.name+";int8", fb.TensorTypeINT8, tt.shape, nil)
	q.t.tensors[x].q = q.paramsOf(t)
	q.ops = append(q.ops, &top{code: fb.BuiltinOperatorQUANTIZE, in: []int32{t}, out: []int32{x}, fromNode: node, int8: true})
	q.rep.Quantize++
	q.i8twin[t] = x
	q.isI8[x] = true
	return x
}

// floatOf returns a float tensor holding activation t (a DEQUANTIZE when t
// is int8).
func (q *quantizer) floatOf(t int32, node string) int32 {
	if !q.isI8[t] {
		return t
	}
	if x, ok := q.f32[t]; ok {
		return x
	}
	tt := q.t.tensors[t]
	x := q.t.addTensor(tt.name+";float", fb.TensorTypeFLOAT32, tt.shape, nil)
	q.ops = append(q.ops, &top{code: fb.BuiltinOperatorDEQUANTIZE, in: []int32{t}, out: []int32{x}, fromNode: node, int8: true})
	q.rep.Dequantize++
	q.f32[t] = x
	return x
}

func (q *quantizer) constFloats(t int32) []float32 {
	d := q.t.buffers[q.t.tensors[t].buf]
	out := make([]float32, len(d)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
	}
	return out
}

// canInt8 reports whether o can compute in int8.
func (q *quantizer) canInt8(o *top) bool {
	rule, ok := int8Ops[o.code]
	if !ok {
		return false
	}
	for i, in := range o.in {
		if in < 0 {
			continue
		}
		tt := q.t.tensors[in]
		if tt.typ != fb.TensorTypeFLOAT32 && !q.isI8[in] {
			continue
		}
		if tt.buf != 0 {
			if rule == ruleWeights && i == 1 && len(tt.shape) == 0 {
				return false
			}
			continue
		}
		if rule == ruleWeights && i > 0 {
			return false // non-constant weights or bias
		}
		if q.paramsOf(in) == nil {
			return false
		}
	}
	for _, out := range o.out {
		if q.t.tensors[out].typ == fb.TensorTypeFLOAT32 && (q.paramsOf(out) == nil || q.raw[q.find(out)]) {
			return false
		}
	}
	if rule == ruleFixed && !q.paramsOf(o.out[0]).equal(fixedParams(o.code)) {
		return false // TFLite's int8 kernel writes only its fixed quantization
	}
	if rule == rulePass || rule == ruleSame {
		// one quantization for all (a QDQ model may give two)
		var first *qparams
		for _, x := range append(slices.Clone(o.in), o.out...) {
			if x < 0 || !(q.act(x) || q.isI8[x]) {
				continue
			}
			if p := q.paramsOf(x); first == nil {
				first = p
			} else if !p.equal(first) {
				return false
			}
		}
	}
	return true
}

func (q *quantizer) op(o *top) error {
	if !q.canInt8(o) {
		for i, in := range o.in {
			switch {
			case in < 0:
			case q.isI8[in]:
				o.in[i] = q.floatOf(in, o.fromNode)
			case q.fake[in] && q.paramsOf(in) != nil:
				o.in[i] = q.floatOf(q.int8Of(in, o.fromNode), o.fromNode)
			case i == 1 && int8Ops[o.code] == ruleWeights && q.t.tensors[in].typ == fb.TensorTypeFLOAT32 && q.t.tensors[in].buf != 0:
				o.in[i] = q.dequantizedWeights(o, in)
			}
		}
		q.ops = append(q.ops, o)
		q.rep.Float = append(q.rep.Float, fmt.Sprintf("%s (node %q)", o.code, o.fromNode))
		return nil
	}
	var inScale float64
	for i, in := range o.in {
		if in < 0 {
			continue
		}
		tt := q.t.tensors[in]
		if q.act(in) || q.isI8[in] {
			o.in[i] = q.int8Of(in, o.fromNode)
			if i == 0 || (o.code == fb.BuiltinOperatorSPLIT && i == 1) {
				inScale = float64(q.t.tensors[o.in[i]].q.scale[0])
			}
		} else if tt.typ == fb.TensorTypeFLOAT32 {
			x, err := q.quantConst(o, i, in, inScale)
			if err != nil {
				return err
			}
			o.in[i] = x
		}
	}
	for _, out := range o.out {
		if q.t.tensors[out].typ == fb.TensorTypeFLOAT32 {
			q.setInt8(out, q.paramsOf(out))
		}
	}
	o.int8 = true
	q.ops = append(q.ops, o)
	q.rep.Quantized++
	return nil
}

// quantConst quantizes constant input i of o: int8 per-channel symmetric
// weights, int32 biases at input scale x weight scale, other constants
// int8 asymmetric over their own range (a PADV2 value in the input's
// quantization).
func (q *quantizer) quantConst(o *top, i int, t int32, inScale float64) (int32, error) {
	tt := q.t.tensors[t]
	f := q.constFloats(t)
	rule := int8Ops[o.code]
	key := fmt.Sprintf("%d/%s/%d/%g", t, o.code, i, inScale)
	if rule != ruleWeights || i > 2 {
		key = fmt.Sprintf("%d/own", t)
	}
	if o.code == fb.BuiltinOperatorPADV2 && i == 2 {
		key = fmt.Sprintf("%d/pad/%d", t, o.in[0])
	}
	wkey := fmt.Sprintf("w/%p", o)
	if x, ok := q.consts[key]; ok {
		if rule == ruleWeights && i == 1 {
			q.consts[wkey] = x
		}
		return x, nil
	}
	var x int32
	switch {
	case rule == ruleWeights && i == 1:
		dim := weightDim(o.code)
		data, p := q.modelWeights(o, f, tt.shape, dim)
		if p == nil {
			data, p = symWeights(f, tt.shape, dim)
		}
		x = q.t.addTensor(tt.name+";int8", fb.TensorTypeINT8, tt.shape, data)
		q.t.tensors[x].q = p
		if len(p.scale) > 1 {
			q.rep.PerChannel++
		}
		// The bias follows the weights' scales.
		q.consts[wkey] = x
	case rule == ruleWeights && i == 2:
		w, ok := q.consts[wkey]
		if !ok {
			return 0, fmt.Errorf("bias before weights")
		}
		ws := q.t.tensors[w].q.scale
		scales := make([]float32, len(f))
		zero := make([]int64, len(f))
		data := make([]byte, 4*len(f))
		for c, v := range f {
			s := inScale * float64(ws[min(c, len(ws)-1)])
			scales[c] = float32(s)
			b := math.Round(float64(v) / s)
			b = math.Max(math.MinInt32, math.Min(math.MaxInt32, b))
			binary.LittleEndian.PutUint32(data[4*c:], uint32(int32(b)))
		}
		if len(ws) == 1 {
			scales, zero = scales[:1], zero[:1]
		}
		x = q.t.addTensor(tt.name+";int32", fb.TensorTypeINT32, tt.shape, data)
		q.t.tensors[x].q = &qparams{scale: scales, zero: zero}
	case o.code == fb.BuiltinOperatorPADV2 && i == 2:
		p := q.t.tensors[o.in[0]].q
		v := float64(f[0])/float64(p.scale[0]) + float64(p.zero[0])
		x = q.t.addTensor(tt.name+";int8", fb.TensorTypeINT8, tt.shape, []byte{byte(clampI8(v))})
		q.t.tensors[x].q = p
	default:
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range f {
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
		p := asymParams(lo, hi)
		data := make([]byte, len(f))
		for j, v := range f {
			data[j] = byte(clampI8(float64(v)/float64(p.scale[0]) + float64(p.zero[0])))
		}
		x = q.t.addTensor(tt.name+";int8", fb.TensorTypeINT8, tt.shape, nonNil(data))
		q.t.tensors[x].q = p
	}
	q.consts[key] = x
	return x, nil
}

// channelsOf is the number of channels along dim of shape and the
// number of elements after dim (dim < 0: one channel).
func channelsOf(shape []int64, dim int) (channels, inner int64) {
	channels, inner = 1, 1
	if dim >= 0 {
		channels = shape[dim]
		for _, d := range shape[dim+1:] {
			inner *= d
		}
	}
	return channels, inner
}

// weightDim is the output channel dim of the weights of a CONV_2D (0) or
// DEPTHWISE_CONV_2D (3), which this exporter quantizes per channel; -1
// (per tensor) for FULLY_CONNECTED.
func weightDim(c fb.BuiltinOperator) int {
	switch c {
	case fb.BuiltinOperatorCONV_2D:
		return 0
	case fb.BuiltinOperatorDEPTHWISE_CONV_2D:
		return 3
	}
	return -1
}

// symWeights quantizes w (shape) int8 symmetric (zero point 0, values in
// [-127, 127]), per channel along dim (dim < 0: per tensor).
func symWeights(w []float32, shape []int64, dim int) ([]byte, *qparams) {
	channels, inner := channelsOf(shape, dim)
	scales := make([]float64, channels)
	for i, x := range w {
		c := (int64(i) / inner) % channels
		scales[c] = math.Max(scales[c], math.Abs(float64(x)))
	}
	p := &qparams{scale: make([]float32, channels), zero: make([]int64, channels)}
	for c := range scales {
		scales[c] /= 127
		if scales[c] == 0 {
			scales[c] = 1.0 / 127
		}
		p.scale[c] = float32(scales[c])
	}
	if dim > 0 {
		p.dim = int32(dim)
	}
	data, _ := weightsAt(w, shape, dim, p)
	return data, p
}

// weightsAt quantizes w (shape) with the symmetric scales of p along dim;
// exact reports whether every weight was on that grid (w is the
// dequantized form of int8 values).
func weightsAt(w []float32, shape []int64, dim int, p *qparams) (data []byte, exact bool) {
	channels, inner := channelsOf(shape, dim)
	data = make([]byte, len(w))
	exact = true
	for i, x := range w {
		c := (int64(i) / inner) % channels
		r := float64(x) / float64(p.scale[c%int64(len(p.scale))])
		v := math.RoundToEven(r)
		exact = exact && math.Abs(r-v) < 1e-3 && v >= -128 && v <= 127
		data[i] = byte(int8(math.Max(-128, math.Min(127, v)))) // -128 only from a model that holds it
	}
	return data, exact
}

// dequantizedWeights is the float weights w of o, an op kept float, as
// the int8 weights of the QDQ model followed by a DEQUANTIZE (the values
// ONNX Runtime's DequantizeLinear computes); w itself when the model
// gives no quantization for them.
func (q *quantizer) dequantizedWeights(o *top, w int32) int32 {
	tt := q.t.tensors[w]
	data, p := q.modelWeights(o, q.constFloats(w), tt.shape, weightDim(o.code))
	if p == nil {
		return w
	}
	x := q.t.addTensor(tt.name+";int8", fb.TensorTypeINT8, tt.shape, data)
	q.t.tensors[x].q = p
	out := q.t.addTensor(tt.name+";dequantized", fb.TensorTypeFLOAT32, tt.shape, nil)
	q.ops = append(q.ops, &top{code: fb.BuiltinOperatorDEQUANTIZE, in: []int32{x}, out: []int32{out}, fromNode: o.fromNode, int8: true})
	q.rep.Dequantize++
	return out
}

// modelWeights quantizes the weights f (shape) of o with the scales of
// the QDQ model's DequantizeLinear (per channel along the output channel
// dim of TFLite's kernel, or per tensor); nil when the model gives none
// or f is not on their grid (the exporter scaled the weights).
func (q *quantizer) modelWeights(o *top, f []float32, shape []int64, dim int) ([]byte, *qparams) {
	if q.c.qdq == nil {
		return nil, nil
	}
	wp := q.c.qdq.weights[o.fromNode]
	if wp == nil {
		return nil, nil
	}
	p := &qparams{scale: wp.scale, zero: wp.zero}
	if len(wp.scale) > 1 {
		if o.code == fb.BuiltinOperatorFULLY_CONNECTED {
			dim = 0
		}
		if dim < 0 || int64(len(wp.scale)) != shape[dim] {
			return nil, nil
		}
		p.dim = int32(dim)
	} else {
		dim = -1
	}
	data, exact := weightsAt(f, shape, dim, p)
	if !exact {
		return nil, nil
	}
	return data, p
}

// compact drops the tensors (and their buffers) no operator, input or
// output refers to: the float originals of quantized constants.
func (t *tmodel) compact() {
	used := make([]bool, len(t.tensors))
	mark := func(xs []int32) {
		for _, x := range xs {
			if x >= 0 {
				used[x] = true
			}
		}
	}
	for _, o := range t.ops {
		mark(o.in)
		mark(o.out)
	}
	mark(t.inputs)
	mark(t.outputs)
	remap := make([]int32, len(t.tensors))
	var tensors []*ttensor
	buffers := [][]byte{nil}
	for i, tt := range t.tensors {
		if !used[i] {
			remap[i] = -1
			continue
		}
		if tt.buf != 0 {
			buffers = append(buffers, t.buffers[tt.buf])
			tt.buf = uint32(len(buffers) - 1)
		}
		remap[i] = int32(len(tensors))
		tensors = append(tensors, tt)
	}
	re := func(xs []int32) {
		for i, x := range xs {
			if x >= 0 {
				xs[i] = remap[x]
			}
		}
	}
	for _, o := range t.ops {
		re(o.in)
		re(o.out)
	}
	re(t.inputs)
	re(t.outputs)
	t.tensors, t.buffers = tensors, buffers
}
