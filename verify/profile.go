package verify

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// Tolerance decides whether two elements agree: |cand-ref| <= atol +
// RTol*|ref| (numpy.allclose with the reference on the right), where atol
// is ATol raised to ATolScale times the output's scale (the largest
// finite |ref| of the output) when ATolScale is set: an absolute error
// that float32 rounding makes grows with the magnitude of what is
// accumulated, not with the element compared (docs/verify.md). IntATol is
// the largest difference allowed between integer elements, in
// quantization steps (units of the integer type; 0: exact).
type Tolerance struct {
	Profile string  `json:"profile"`
	RTol    float64 `json:"rtol"`
	ATol    float64 `json:"atol"`
	IntATol int64   `json:"int_atol"`
	// ATolScale is the absolute tolerance relative to the output's
	// scale; 0 when the absolute tolerance was given (--atol).
	ATolScale float64 `json:"atol_scale,omitempty"`
	// Scale is the output's largest finite |ref| over all samples, and
	// EffectiveATol the absolute tolerance used: max(ATol,
	// ATolScale*Scale). Set by the comparison.
	Scale         float64 `json:"scale,omitempty"`
	EffectiveATol float64 `json:"effective_atol,omitempty"`
}

// atolFor returns the absolute tolerance for an output of the given
// scale.
func (t Tolerance) atolFor(scale float64) float64 {
	return math.Max(t.ATol, t.ATolScale*scale)
}

// profileTable returns the named tolerance profiles (see docs/verify.md for why
// each number is what it is). The profile for an output is the one named
// after its element type, or the profile the user asked for when that one
// is looser (a model converted to fp16 inside still has fp32 outputs).
func profileTable() map[string]Tolerance {
	return map[string]Tolerance{
		// The absolute tolerance of each profile also scales with the
		// output (ATolScale x its largest |ref|): an element near 0 of an
		// output whose values reach 100 carries the rounding of sums of
		// terms of size 100, not of size 0.
		// float64 outputs: a few ulp of double after reordered sums.
		"fp64": {Profile: "fp64", RTol: 1e-7, ATol: 1e-9, ATolScale: 1e-9},
		// float32: reordered reductions (GEMM blocking, fused kernels) move
		// results by tens of float32 ulp (eps 1.19e-7) on deep graphs;
		// 1e-5 of the output's scale is about 84 ulp of its largest value.
		"fp32": {Profile: "fp32", RTol: 1e-4, ATol: 1e-5, ATolScale: 1e-5},
		// float16: eps 9.77e-4; ten half ulp relative, atol for values near 0.
		"fp16": {Profile: "fp16", RTol: 1e-2, ATol: 1e-3, ATolScale: 1e-3},
		// bfloat16: eps 7.81e-3 (8 mantissa bits); about five bf16 ulp.
		"bf16": {Profile: "bf16", RTol: 4e-2, ATol: 1e-2, ATolScale: 1e-2},
		// float8 (E4M3 / E5M2): eps 0.125 / 0.25.
		"fp8": {Profile: "fp8", RTol: 2.5e-1, ATol: 5e-2, ATolScale: 5e-2},
		// int8: a model quantized to 8 bit against its float source; each
		// quantized layer adds up to half a quantization step (1/255 of
		// the range). Integer outputs may differ by one step (rounding
		// ties, requantization order).
		"int8": {Profile: "int8", RTol: 1e-1, ATol: 5e-2, ATolScale: 2e-2, IntATol: 1},
		// int4: weights quantized to 4 bits in blocks (one step is 1/15
		// of a block's range, 17 times int8's); the outputs drift by
		// several percent of their scale.
		"int4": {Profile: "int4", RTol: 5e-1, ATol: 1e-1, ATolScale: 1e-1, IntATol: 1},
	}
}

// ProfileNames lists the profiles --profile accepts.
func ProfileNames() []string {
	names := []string{}
	for n := range profileTable() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns the named tolerance profile.
func LookupProfile(name string) (Tolerance, error) {
	t, ok := profileTable()[strings.ToLower(name)]
	if !ok {
		return Tolerance{}, fmt.Errorf("unknown tolerance profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return t, nil
}

// dtypeProfile names the profile that fits an element type.
func dtypeProfile(dt canonical.DataType) string {
	switch dt {
	case canonical.Double, canonical.Complex128:
		return "fp64"
	case canonical.Float16:
		return "fp16"
	case canonical.BFloat16:
		return "bf16"
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ,
		canonical.Float8E8M0, canonical.Float4E2M1:
		return "fp8"
	case canonical.Int8, canonical.Uint8, canonical.Int4, canonical.Uint4, canonical.Int2, canonical.Uint2:
		// Quantized outputs: compared in quantization steps, one step
		// allowed (rounding ties and requantization order differ
		// between runtimes).
		return "int8"
	}
	return "fp32"
}

// toleranceFor returns the tolerance for an output whose two sides have
// element types da and db, given the options.
func (o *Options) toleranceFor(da, db canonical.DataType) Tolerance {
	profiles := profileTable()
	t := profiles[dtypeProfile(da)]
	for _, name := range []string{dtypeProfile(db), o.Profile} {
		if p, ok := profiles[strings.ToLower(name)]; ok && looser(p, t) {
			t = p
		}
	}
	if o.RTol != nil {
		t.RTol = *o.RTol
		t.Profile = "custom"
	} else if o.MinRTol > t.RTol {
		t.RTol = o.MinRTol
		t.Profile += fmt.Sprintf(" (rtol at least %g)", o.MinRTol)
	}
	if o.ATol != nil {
		// An absolute tolerance given is absolute, and for integer
		// outputs the number of quantization steps allowed.
		t.ATol, t.ATolScale = *o.ATol, 0
		t.IntATol = int64(math.Floor(*o.ATol))
		t.Profile = "custom"
	}
	return t
}

func looser(a, b Tolerance) bool {
	return a.RTol > b.RTol || (a.RTol == b.RTol && a.ATol > b.ATol) || a.IntATol > b.IntATol
}

// profileTypeName names the element type of a precision profile.
var profileTypeName = map[string]string{"fp16": "float16", "bf16": "bfloat16", "fp8": "float8"}

// InsidePrecision returns the profile of the least precise float type the
// models compute in ("fp16", "bf16" or "fp8": a float initializer, a Cast
// or a declared value of that type in the main graph), or "" when they
// compute in float32 or wider. Integer (quantized) models are left to
// their outputs' types.
func InsidePrecision(models ...*canonical.Model) string {
	rank := map[string]int{"fp16": 1, "bf16": 2, "fp8": 3}
	best := ""
	note := func(dt canonical.DataType) {
		switch dt {
		case canonical.Float16, canonical.BFloat16, canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ:
			if p := dtypeProfile(dt); rank[p] > rank[best] {
				best = p
			}
		}
	}
	for _, m := range models {
		if m == nil || m.Graph == nil {
			continue
		}
		g := m.Graph
		for _, v := range g.Initializers {
			if v.Const != nil {
				note(v.Const.DataType)
			}
		}
		for _, v := range g.ValueInfo {
			if dt, _, _, ok := canonical.TensorTypeOf(v.Type); ok {
				note(dt)
			}
		}
		for _, n := range g.Nodes {
			if n.OpType == "Cast" && n.Domain == "" {
				if to := n.AttrInt("to", 0); to != 0 {
					note(canonical.DataType(to))
				}
			}
		}
	}
	return best
}
