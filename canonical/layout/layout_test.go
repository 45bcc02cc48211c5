package layout

import (
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// iota fills the elements of dims with distinct values, so that a
// misplaced element shows.
func iota(dims []int64) []int32 {
	n, err := canonical.NumElements(dims)
	if err != nil {
		panic(err)
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(i)*7 + 3
	}
	return v
}

// at reads row-major data of dims at multi-index idx.
func at(data []int32, dims []int64, idx []int64) int32 {
	off := int64(0)
	for i, d := range dims {
		off = off*d + idx[i]
	}
	return data[off]
}

// each calls f with every multi-index of dims, in row-major order: the
// index of flat offset o, digit by digit.
func each(dims []int64, f func(idx []int64)) {
	n, err := canonical.NumElements(dims)
	if err != nil {
		panic(err)
	}
	idx := make([]int64, len(dims))
	for o := int64(0); o < n; o++ {
		rest := o
		for i := len(dims) - 1; i >= 0; i-- {
			idx[i] = rest % dims[i]
			rest /= dims[i]
		}
		f(idx)
	}
}

// check permutes data of dims by p with canonical's transpose and compares
// every output element with src(outIdx), the naive index formula giving
// the source index of an output index.
func check(t *testing.T, name string, dims []int64, p []int, wantDims []int64, src func(o []int64) []int64) {
	t.Helper()
	in := iota(dims)
	out, od, err := canonical.TransposeSlice(in, dims, p)
	if err != nil {
		t.Fatalf("%s %v by %v: %v", name, dims, p, err)
	}
	if !slices.Equal(od, wantDims) {
		t.Fatalf("%s %v by %v: dims %v, want %v", name, dims, p, od, wantDims)
	}
	if !slices.Equal(Apply(dims, p), wantDims) {
		t.Fatalf("%s: Apply(%v, %v) = %v, want %v", name, dims, p, Apply(dims, p), wantDims)
	}
	bad := 0
	each(od, func(o []int64) {
		if g, w := at(out, od, o), at(in, dims, src(o)); g != w && bad < 3 {
			bad++
			t.Errorf("%s %v: out%v = %d, want in%v = %d", name, dims, o, g, src(o), w)
		}
	})
}

func TestChannels(t *testing.T) {
	for _, dims := range [][]int64{{2, 7, 3}, {2, 3, 5, 7}, {1, 3, 2, 5, 7}, {3, 1, 5}} {
		r := len(dims)
		// channels-last [N, s..., C] -> [N, C, s...]: out[n, c, s...] = in[n, s..., c].
		want := append([]int64{dims[0], dims[r-1]}, dims[1:r-1]...)
		check(t, "ToFirst", dims, ToFirst(r), want, func(o []int64) []int64 {
			return append(append([]int64{o[0]}, o[2:]...), o[1])
		})
		// and back: [N, C, s...] -> [N, s..., C]: out[n, s..., c] = in[n, c, s...].
		back := append(append([]int64{dims[0]}, dims[2:]...), dims[1])
		check(t, "ToLast", dims, ToLast(r), back, func(o []int64) []int64 {
			return append([]int64{o[0], o[r-1]}, o[1:r-1]...)
		})
		if !slices.Equal(Inverse(ToFirst(r)), ToLast(r)) {
			t.Errorf("rank %d: Inverse(ToFirst) = %v, ToLast = %v", r, Inverse(ToFirst(r)), ToLast(r))
		}
	}
	if !slices.Equal(ToFirst(4), []int{0, 3, 1, 2}) || !slices.Equal(ToLast(4), []int{0, 2, 3, 1}) {
		t.Errorf("rank 4: ToFirst %v, ToLast %v", ToFirst(4), ToLast(4))
	}
}

func TestKernels(t *testing.T) {
	for _, dims := range [][]int64{{3, 5, 2}, {3, 5, 2, 7}, {2, 3, 5, 3, 4}} {
		r := len(dims)
		// [k..., I, O] -> [O, I, k...]: out[o, i, k...] = in[k..., i, o].
		want := append([]int64{dims[r-1], dims[r-2]}, dims[:r-2]...)
		check(t, "FromHWIO", dims, FromHWIO(r), want, func(o []int64) []int64 {
			return append(append([]int64{}, o[2:]...), o[1], o[0])
		})
		// [O, I, k...] -> [k..., I, O]: out[k..., i, o] = in[o, i, k...].
		hwio := append(append([]int64{}, dims[2:]...), dims[1], dims[0])
		check(t, "ToHWIO", dims, ToHWIO(r), hwio, func(o []int64) []int64 {
			return append([]int64{o[r-1], o[r-2]}, o[:r-2]...)
		})
		// [I, k..., O] -> [O, I, k...]: out[o, i, k...] = in[i, k..., o].
		want = append([]int64{dims[r-1]}, dims[:r-1]...)
		check(t, "FromIHWO", dims, FromIHWO(r), want, func(o []int64) []int64 {
			return append(append([]int64{}, o[1:]...), o[0])
		})
		// [O, I, k...] -> [I, k..., O]: out[i, k..., o] = in[o, i, k...].
		ihwo := append(append([]int64{}, dims[1:]...), dims[0])
		check(t, "ToIHWO", dims, ToIHWO(r), ihwo, func(o []int64) []int64 {
			return append([]int64{o[r-1]}, o[:r-1]...)
		})
		// TFLite's OHWI [O, k..., I] -> [O, I, k...]: out[o, i, k...] = in[o, k..., i].
		want = append([]int64{dims[0], dims[r-1]}, dims[1:r-1]...)
		check(t, "OHWI", dims, ToFirst(r), want, func(o []int64) []int64 {
			return append(append([]int64{o[0]}, o[2:]...), o[1])
		})
	}
}

func TestDepthwise(t *testing.T) {
	// [kh, kw, C, M] = [3, 2, 5, 3]: ONNX's group-C Conv kernel is
	// [C·M, 1, kh, kw] with out[c·M+m, 0, y, x] = in[y, x, c, m].
	dims := []int64{3, 2, 5, 3}
	d, err := DepthwiseHWIO(dims)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d, []int64{3, 2, 1, 15}) {
		t.Fatalf("DepthwiseHWIO(%v) = %v", dims, d)
	}
	in := iota(dims)
	out, od, err := canonical.TransposeSlice(in, d, FromHWIO(4))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(od, []int64{15, 1, 3, 2}) {
		t.Fatalf("dims %v", od)
	}
	each(od, func(o []int64) {
		c, m := o[0]/3, o[0]%3
		if g, w := at(out, od, o), at(in, dims, []int64{o[2], o[3], c, m}); g != w {
			t.Fatalf("out%v = %d, want in[%d %d %d %d] = %d", o, g, o[2], o[3], c, m, w)
		}
	})
	if _, err := DepthwiseHWIO([]int64{3, 3}); err == nil {
		t.Error("a rank-2 depthwise kernel was accepted")
	}
}

func TestConstToFirst(t *testing.T) {
	// A [W, C] = [5, 3] constant next to NCHW activations: [1, 1, 5, 3]
	// channels-last, so [1, 3, 1, 5] with out[0, c, 0, w] = in[w, c].
	dims := []int64{5, 3}
	in := iota(dims)
	raw := make([]byte, 4*len(in))
	for i, v := range in {
		raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	out, od, err := ConstToFirst(raw, 4, dims, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(od, []int64{1, 3, 1, 5}) {
		t.Fatalf("dims %v", od)
	}
	for c := int64(0); c < 3; c++ {
		for w := int64(0); w < 5; w++ {
			o := (c*5 + w) * 4
			g := int32(out[o]) | int32(out[o+1])<<8 | int32(out[o+2])<<16 | int32(out[o+3])<<24
			if want := at(in, dims, []int64{w, c}); g != want {
				t.Errorf("out[0 %d 0 %d] = %d, want %d", c, w, g, want)
			}
		}
	}
	if _, _, err := ConstToFirst(make([]byte, 32), 1, []int64{1, 2, 2, 2, 4}, 4); err == nil {
		t.Error("a rank-5 constant was aligned to rank 4")
	}
}

func TestAxis(t *testing.T) {
	// NHWC axis a of a value held NCHW: N 0 -> 0, H 1 -> 2, W 2 -> 3, C 3 -> 1.
	for a, want := range []int{0, 2, 3, 1} {
		if g := Axis(ToFirst(4), a); g != want {
			t.Errorf("Axis(ToFirst(4), %d) = %d, want %d", a, g, want)
		}
	}
	if Axis(nil, 2) != 2 || Axis([]int{1, 0}, 5) != -1 {
		t.Error("Axis: nil keeps the axis, a missing one gives -1")
	}
	// A per-channel axis follows its kernel: the O of HWIO (3) is 0 in OIHW.
	if g := Axis(FromHWIO(4), 3); g != 0 {
		t.Errorf("Axis(FromHWIO(4), 3) = %d", g)
	}
	if Inverse([]int{0, 0, 1}) != nil || Inverse([]int{0, 3}) != nil || Inverse([]int{-1}) != nil {
		t.Error("Inverse of a non-permutation is not nil")
	}
	if !slices.Equal(Int64s([]int{0, 3, 1, 2}), []int64{0, 3, 1, 2}) {
		t.Error("Int64s")
	}
}
