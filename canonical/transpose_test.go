package canonical

import (
	"path/filepath"
	"slices"
	"testing"
)

// ONNX's own Transpose test: the expected output of
// test_transpose_all_permutations_3 (perm [1, 2, 0] of a 2x3x4 input).
func TestTransposeBackend(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "onnx-v1.22", "backend-tests", "node", "test_transpose_all_permutations_3", "test_data_set_0")
	x, err := ReadTensorFile(filepath.Join(dir, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadTensorFile(filepath.Join(dir, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Transpose([]int{1, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := got.Float64s()
	w, _ := want.Float64s()
	if !slices.Equal(got.Dims, want.Dims) || !slices.Equal(g, w) {
		t.Fatalf("got %v %v, want %v %v", got.Dims, g, want.Dims, w)
	}
	// The element-typed entry point gives the same values.
	xs, _ := x.Float64s()
	ys, dims, err := TransposeSlice(xs, x.Dims, []int{1, 2, 0})
	if err != nil || !slices.Equal(dims, want.Dims) || !slices.Equal(ys, w) {
		t.Fatalf("TransposeSlice: %v %v %v, want %v %v", dims, ys, err, want.Dims, w)
	}
	if _, err := x.Transpose([]int{0, 0, 1}); err == nil {
		t.Error("a repeated axis was accepted")
	}
}
