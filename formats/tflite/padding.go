package tflite

// SamePads is TFLite's SAME padding of one spatial dimension of size in,
// for a window of k taps dilated by dil and moved by stride: the output
// has ceil(in/stride) positions and the odd pixel of padding goes after.
// VALID padding is none.
func SamePads(in, k, stride, dil int64) (before, after int64) {
	eff := (k-1)*dil + 1
	out := (in + stride - 1) / stride
	total := max((out-1)*stride+eff-in, 0)
	return total / 2, total - total/2
}
