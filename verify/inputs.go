package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
)

// GenOptions control generated inputs.
type GenOptions struct {
	// Seed makes the inputs reproducible; sample k uses a stream derived
	// from Seed and k.
	Seed uint64
	// Distribution of float inputs: "normal" (standard normal, the
	// default) or "uniform" (in [-1, 1)).
	Distribution string
	// Dims sets symbolic dims by name (dim_param), or an unnamed dim as
	// "INPUT:AXIS".
	Dims map[string]int64
	// Ranges sets the range of generated values per input name ("*" for
	// every input without its own): floats uniform in [Lo, Hi), integers
	// in [Lo, Hi] (within the type). Audio or image inputs need realistic
	// ranges (e.g. 0 to 255 for uint8 pixels, -1 to 1 for samples).
	Ranges map[string]Range
}

// Range is a closed interval of generated values.
type Range struct{ Lo, Hi float64 }

// rangeFor returns the range set for input name, if any.
func (o GenOptions) rangeFor(name string) (Range, bool) {
	if r, ok := o.Ranges[name]; ok {
		return r, true
	}
	r, ok := o.Ranges["*"]
	return r, ok
}

// MaxGeneratedElements bounds the size of one generated input.
const MaxGeneratedElements = 1 << 28

// GraphInputs returns the inputs of m's main graph that are not
// initializers, in order (the inputs a runner takes).
func GraphInputs(m *canonical.Model) []*canonical.Value {
	if m == nil || m.Graph == nil {
		return nil
	}
	init := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		init[v] = true
	}
	var out []*canonical.Value
	for _, v := range m.Graph.Inputs {
		if !init[v] {
			out = append(out, v)
		}
	}
	return out
}

// InputShape resolves the shape of a graph input: known dims as they are,
// symbolic dims from dims (by dim_param, or "NAME:AXIS" for an unnamed
// dim). The error names the dim to set.
func InputShape(v *canonical.Value, dims map[string]int64) (canonical.DataType, []int64, error) {
	dt, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok {
		return 0, nil, fmt.Errorf("input %q is not a tensor (%s); pass its values with --inputs", v.Name, canonical.TypeString(v.Type))
	}
	if !hasShape {
		if shape, ok := freeRankShape(v); ok {
			return dt, shape, nil
		}
		return 0, nil, fmt.Errorf("input %q has no shape (unknown rank), and how the graph uses it fixes none; pass its values with --inputs", v.Name)
	}
	shape := make([]int64, len(ds))
	for i, d := range ds {
		switch {
		case d.Known:
			shape[i] = d.Value
		case d.Param != "":
			x, ok := dims[d.Param]
			if !ok {
				return 0, nil, fmt.Errorf("input %q: dim %d is symbolic (%q); set it with --dim %s=N", v.Name, i, d.Param, d.Param)
			}
			shape[i] = x
		default:
			key := v.Name + ":" + strconv.Itoa(i)
			x, ok := dims[key]
			if !ok {
				return 0, nil, fmt.Errorf("input %q: dim %d is unknown; set it with --dim %s=N", v.Name, i, key)
			}
			shape[i] = x
		}
		if shape[i] < 0 {
			return 0, nil, fmt.Errorf("input %q: dim %d is negative (%d)", v.Name, i, shape[i])
		}
	}
	return dt, shape, nil
}

// GenerateInputs makes one sample of inputs for the graph inputs of m,
// deterministically from opts.Seed and sample.
func GenerateInputs(m *canonical.Model, opts GenOptions, sample int) ([]*canonical.Tensor, error) {
	ins := GraphInputs(m)
	out := make([]*canonical.Tensor, len(ins))
	fixed := InputValues(m)
	for i, v := range ins {
		if vals, ok := fixed[v.Name]; ok {
			// A value the source needs (InputValuesKey), when no range
			// is asked for.
			if _, ranged := opts.rangeFor(v.Name); !ranged {
				if dt, shape, err := InputShape(v, opts.Dims); err == nil {
					if t := fixedInput(v, vals, dt, shape); t != nil {
						out[i] = t
						continue
					}
				}
			}
		}
		rng := rand.New(rand.NewPCG(opts.Seed, uint64(sample)<<20|uint64(i)))
		t, err := genInput(v, opts, rng)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// genInput generates the tensor input v.
func genInput(v *canonical.Value, opts GenOptions, rng *rand.Rand) (*canonical.Tensor, error) {
	dt, shape, err := InputShape(v, opts.Dims)
	if err != nil {
		return nil, err
	}
	if h, w, isImage := imageStream(v); isImage && dt == canonical.Uint8 {
		// An encoded image: a real one (PNG), not random bytes.
		if _, ds, _, _ := canonical.TensorTypeOf(v.Type); len(ds) == 1 && !ds[0].Known {
			shape = []int64{0}
		}
		return pngStream(v, shape, h, w, rng)
	}
	n, err := canonical.NumElements(shape)
	if err != nil {
		return nil, fmt.Errorf("input %q: %w", v.Name, err)
	}
	if n > MaxGeneratedElements {
		return nil, fmt.Errorf("input %q: shape %v has %d elements, more than %d to generate", v.Name, shape, n, MaxGeneratedElements)
	}
	r, hasRange := opts.rangeFor(v.Name)
	var rp *Range
	if hasRange {
		if !(r.Lo <= r.Hi) || math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) {
			return nil, fmt.Errorf("input %q: range [%g, %g] is empty or infinite", v.Name, r.Lo, r.Hi)
		}
		rp = &r
	}
	t, err := genTensor(v, dt, shape, int(n), rng, opts.Distribution, rp)
	if err != nil {
		return nil, err
	}
	if rp == nil {
		categorical(t, categories(v, 0), rng)
		if c, ok := ifSelector(v); ok && n == 1 {
			// A value an If compares it with: a branch a real
			// call takes (a sample rate), not a random number.
			t = canonical.NumberTensor(v.Name, dt, shape, []float64{c})
		}
	}
	return t, nil
}

func genTensor(v *canonical.Value, dt canonical.DataType, shape []int64, n int, rng *rand.Rand, dist string, r *Range) (*canonical.Tensor, error) {
	// A float input the graph casts to an index (a Keras Embedding's
	// input) gets whole numbers within the indexed dim.
	ext, isIndex := int64(0), false
	if r == nil && canonical.IsFloatType(dt) {
		if ext, isIndex = indexExtent(v, 0); isIndex && ext < 1 {
			ext = 1
		}
	}
	float := func() float64 {
		switch {
		case isIndex:
			return float64(rng.Int64N(ext))
		case r != nil:
			return r.Lo + rng.Float64()*(r.Hi-r.Lo)
		case dist == "uniform":
			return rng.Float64()*2 - 1
		}
		return rng.NormFloat64()
	}
	if r == nil && canonical.IsFloatType(dt) && n > 0 {
		if sc, use, isScales := scalesOf(v); use != "" {
			// Scales: the declared result's dims over the input's.
			if !isScales || len(sc) != n {
				return nil, fmt.Errorf("input %q is %s, and the graph does not declare the sizes they make: its values cannot be generated; pass them with --inputs DIR", v.Name, use)
			}
			return canonical.NumberTensor(v.Name, dt, shape, sc), nil
		}
	}
	le := binary.LittleEndian
	var raw []byte
	switch dt {
	case canonical.Float:
		raw = make([]byte, 0, 4*n)
		for range n {
			raw = le.AppendUint32(raw, math.Float32bits(float32(float())))
		}
	case canonical.Double:
		raw = make([]byte, 0, 8*n)
		for range n {
			raw = le.AppendUint64(raw, math.Float64bits(float()))
		}
	case canonical.Float16:
		raw = make([]byte, 0, 2*n)
		for range n {
			raw = le.AppendUint16(raw, canonical.Float32ToFloat16(float32(float())))
		}
	case canonical.BFloat16:
		raw = make([]byte, 0, 2*n)
		for range n {
			raw = le.AppendUint16(raw, canonical.Float32ToBFloat16(float32(float())))
		}
	case canonical.Complex64:
		raw = make([]byte, 0, 8*n)
		for range 2 * n {
			raw = le.AppendUint32(raw, math.Float32bits(float32(float())))
		}
	case canonical.Complex128:
		raw = make([]byte, 0, 16*n)
		for range 2 * n {
			raw = le.AppendUint64(raw, math.Float64bits(float()))
		}
	case canonical.Bool:
		raw = make([]byte, n)
		for i := range raw {
			raw[i] = byte(rng.IntN(2))
		}
	case canonical.Int8, canonical.Uint8, canonical.Int16, canonical.Uint16, canonical.Int32,
		canonical.Uint32, canonical.Int64, canonical.Uint64:
		if ro := inputRole(v); r == nil && ro.kind != roleData {
			vals, err := fillRole(v.Name, ro, n, rng.Int64N)
			if err != nil {
				return nil, err
			}
			fs := make([]float64, len(vals))
			for i, x := range vals {
				fs[i] = float64(x)
			}
			return canonical.NumberTensor(v.Name, dt, shape, fs), nil
		}
		lo, hi := intRange(v, dt)
		if r != nil {
			lo, hi = clampRange(dt, r)
		}
		w := canonical.ElemBits(dt) / 8
		raw = make([]byte, n*w)
		for i := range n {
			x := lo + rng.Int64N(hi-lo)
			switch w {
			case 1:
				raw[i] = byte(x)
			case 2:
				le.PutUint16(raw[2*i:], uint16(x))
			case 4:
				le.PutUint32(raw[4*i:], uint32(x))
			default:
				le.PutUint64(raw[8*i:], uint64(x))
			}
		}
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ, canonical.Float8E8M0:
		// Codes drawn until they decode to a finite value of magnitude at
		// most 8 (from 1/8 for E8M0, which has no zero): the values a
		// float8 activation or weight holds, without overflowing the
		// narrow range of the E4M3 types downstream.
		raw = make([]byte, n)
		for i := range raw {
			for {
				b := byte(rng.IntN(256))
				v := math.Abs(canonical.Float8ToFloat64(dt, b))
				if v <= 8 && (dt != canonical.Float8E8M0 || v >= 0.125) {
					raw[i] = b
					break
				}
			}
		}
	case canonical.Float4E2M1, canonical.Int4, canonical.Uint4, canonical.Int2, canonical.Uint2:
		// Packed low bits first: two 4-bit or four 2-bit elements a byte.
		// Every FLOAT4E2M1 code is finite; integers as for the wider ones,
		// within the type.
		bits := canonical.ElemBits(dt)
		lo, hi := int64(0), int64(1)<<bits
		if dt != canonical.Float4E2M1 {
			lo, hi = intRange(v, dt)
			if r != nil {
				lo, hi = clampRange(dt, r)
			}
			tlo, thi := int64(0), int64(1)<<bits
			if dt == canonical.Int4 || dt == canonical.Int2 {
				tlo, thi = -(int64(1) << (bits - 1)), int64(1)<<(bits-1)
			}
			lo, hi = max(lo, tlo), min(hi, thi)
			if hi <= lo {
				lo, hi = tlo, thi
			}
		}
		per := 8 / bits
		raw = make([]byte, (n+per-1)/per)
		mask := int64(1)<<bits - 1
		for i := range n {
			x := (lo + rng.Int64N(hi-lo)) & mask
			raw[i/per] |= byte(x << (bits * (i % per)))
		}
	case canonical.String:
		strs := make([][]byte, n)
		for i := range strs {
			strs[i] = []byte("s" + strconv.Itoa(rng.IntN(10)))
		}
		return canonical.NewStringTensor(v.Name, shape, strs), nil
	default:
		return nil, fmt.Errorf("input %q: cannot generate %s values; pass them with --inputs", v.Name, canonical.ElemTypeName(dt))
	}
	return canonical.NewTensor(v.Name, dt, shape, raw), nil
}

// intRange picks the half-open range of a generated integer input: the
// extent of the dim it indexes when a consumer tells (Gather indices,
// OneHot indices, ...), else a small non-negative range.
func intRange(v *canonical.Value, dt canonical.DataType) (int64, int64) {
	if ext, ok := indexExtent(v, 0); ok {
		if ext < 1 {
			ext = 1
		}
		return 0, ext
	}
	hi := int64(10)
	if dt == canonical.Int8 || dt == canonical.Uint8 {
		hi = 8
	}
	return 0, hi
}

// indexExtent reports the size of the dim that v indexes, following v
// through ops that keep its values (Cast, Reshape, ...). When several
// consumers index dims, the smallest extent wins.
func indexExtent(v *canonical.Value, depth int) (int64, bool) {
	if depth > 6 {
		return 0, false
	}
	best, found := int64(math.MaxInt64), false
	take := func(e int64, ok bool) {
		if ok && e < best {
			best, found = e, true
		}
	}
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || (n.Domain != "" && n.Domain != "ai.onnx") {
			continue
		}
		switch n.OpType {
		case "Gather", "GatherElements", "ScatterElements", "Scatter":
			if u.Index == 1 && len(n.Inputs) > 0 {
				take(dimOf(n.Inputs[0], n.AttrInt("axis", 0)))
			}
		case "GatherND", "ScatterND":
			if u.Index == 1 && len(n.Inputs) > 0 {
				// The last axis of the indices walks the leading dims of
				// the data: stay within the smallest of them.
				b := n.AttrInt("batch_dims", 0)
				if e, ok := dimOf(n.Inputs[0], b); ok {
					take(e, true)
					for ax := b + 1; ; ax++ {
						e2, ok := dimOf(n.Inputs[0], ax)
						if !ok {
							break
						}
						take(e2, true)
					}
				}
			}
		case "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss":
			// Class labels index dim 1 of the scores.
			if u.Index == 1 && len(n.Inputs) > 0 {
				take(dimOf(n.Inputs[0], 1))
			}
		case "RoiAlign":
			if u.Index == 2 && len(n.Inputs) > 0 {
				take(dimOf(n.Inputs[0], 0))
			}
		case "LSTM", "GRU", "RNN":
			// sequence_lens: at most the sequence length (layout 0: X is
			// [seq, batch, input]; 1: [batch, seq, input]).
			if u.Index == 4 && len(n.Inputs) > 0 {
				if t, ok := dimOf(n.Inputs[0], n.AttrInt("layout", 0)); ok {
					take(t+1, true)
				}
			}
		case "ReverseSequence":
			if u.Index == 1 && len(n.Inputs) > 0 {
				if t, ok := dimOf(n.Inputs[0], n.AttrInt("time_axis", 0)); ok {
					take(t+1, true)
				}
			}
		case "OneHot":
			if u.Index == 0 && len(n.Inputs) > 1 && n.Inputs[1] != nil && n.Inputs[1].Const != nil {
				if d, err := scalarInt(n.Inputs[1].Const); err == nil {
					take(d, true)
				}
			}
		case "Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Expand", "Transpose":
			if u.Index == 0 {
				for _, o := range n.Outputs {
					if o != nil {
						take(indexExtent(o, depth+1))
					}
				}
			}
		}
	}
	return best, found
}

// dimOf returns dim axis (negative counts from the end) of v when known.
func dimOf(v *canonical.Value, axis int64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	var dims []int64
	if v.Const != nil {
		dims = v.Const.Dims
	} else {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape {
			return 0, false
		}
		for _, d := range ds {
			if !d.Known {
				dims = append(dims, -1)
			} else {
				dims = append(dims, d.Value)
			}
		}
	}
	if axis < 0 {
		axis += int64(len(dims))
	}
	if axis < 0 || axis >= int64(len(dims)) || dims[axis] < 0 {
		return 0, false
	}
	return dims[axis], true
}

func scalarInt(t *canonical.Tensor) (int64, error) {
	vals, err := t.Int64s()
	if err != nil {
		return 0, err
	}
	if len(vals) != 1 {
		return 0, fmt.Errorf("not a scalar")
	}
	return vals[0], nil
}

// castFloat converts a float tensor to another float element type
// (float, double, float16, bfloat16), rounding to nearest even.
func castFloat(t *canonical.Tensor, dt canonical.DataType) (*canonical.Tensor, error) {
	isF := func(d canonical.DataType) bool {
		return d == canonical.Float || d == canonical.Double || d == canonical.Float16 || d == canonical.BFloat16
	}
	if !isF(t.DataType) || !isF(dt) {
		return nil, fmt.Errorf("only float inputs are converted")
	}
	vals, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	raw := make([]byte, 0, len(vals)*canonical.ElemBits(dt)/8)
	for _, v := range vals {
		switch dt {
		case canonical.Float:
			raw = le.AppendUint32(raw, math.Float32bits(float32(v)))
		case canonical.Double:
			raw = le.AppendUint64(raw, math.Float64bits(v))
		case canonical.Float16:
			raw = le.AppendUint16(raw, canonical.Float32ToFloat16(float32(v)))
		default:
			raw = le.AppendUint16(raw, canonical.Float32ToBFloat16(float32(v)))
		}
	}
	return canonical.NewTensor(t.Name, dt, t.Dims, raw), nil
}

// clampRange turns a value range into the half-open integer range of dt
// that genTensor draws from.
func clampRange(dt canonical.DataType, r *Range) (int64, int64) {
	bits := canonical.ElemBits(dt)
	var tlo, thi float64
	switch dt {
	case canonical.Uint8, canonical.Uint16, canonical.Uint32, canonical.Uint64, canonical.Uint4, canonical.Uint2:
		tlo, thi = 0, math.Min(math.Ldexp(1, bits)-1, math.MaxInt64/2)
	default:
		tlo, thi = -math.Ldexp(1, bits-1), math.Min(math.Ldexp(1, bits-1)-1, math.MaxInt64/2)
	}
	lo := int64(math.Max(math.Ceil(r.Lo), tlo))
	hi := int64(math.Min(math.Floor(r.Hi), thi))
	if hi < lo {
		hi = lo
	}
	return lo, hi + 1
}
