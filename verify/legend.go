package verify

// legend explains, once, every figure a report's output table shows, so
// that a reader needs no other document to read it ("max ULP 8192" next
// to a pass is then a number with a meaning).
var legend = []struct{ Term, Meaning string }{
	{"A, B", "the two sides compared: A is the reference (the source as its own framework or runtime computes it, or stored outputs), B the result; \"computed by\" names what ran each"},
	{"max abs", "the largest |B−A| over all elements"},
	{"max rel", "the largest |B−A| / |A| (elements where A is 0 are left out)"},
	{"mean abs, RMSE", "the mean of |B−A| and the root of the mean of (B−A)²"},
	{"cosine", "the cosine similarity of A and B as vectors: 1 is the same direction"},
	{"max ULP", "the largest distance between A and B counted in float steps (units in the last place) of the output's type: for float32 one ULP is 2⁻²³ ≈ 1.2e-7 relative, so 8192 ULP is about 1e-3 relative; large ULP counts near 0 are common and harmless when abs and rel are within tolerance"},
	{"mismatched", "elements outside the tolerance / all elements"},
	{"tolerance", "an element passes when |B−A| ≤ atol + rtol·|A|; the profile sets rtol and atol by the output's type (atol scaled to the output's magnitude unless given)"},
	{"ratio", "the worst element's |B−A| / (atol + rtol·|A|): below 1 passes"},
	{"steps", "integer and quantized outputs: the difference in integer steps (one quantization step of the output)"},
}
