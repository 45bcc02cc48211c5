package verify

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// backendModel loads ONNX backend test node/NAME and its stored inputs.
func backendModel(t *testing.T, name string) (*canonical.Model, []*canonical.Tensor) {
	t.Helper()
	dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name)
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	s, err := tensorio.LoadSamples(dir, "input", GraphInputs(m), false)
	if err != nil {
		t.Fatal(err)
	}
	return m, s[0]
}

// Inputs that are axes, shapes or indices get values that fit the graph:
// each model (whose random inputs used to fail: "axis 12 out of range",
// "cannot reshape", "target out of range") runs on two generated samples;
// a shape input equals the one ONNX stored for the test (the graph's
// declared result fixes it).
func TestGeneratedAxesShapesIndicesFit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape string // an input whose stored values the generated ones must equal
	}{
		{"test_reduce_sum_keepdims_random", ""},
		{"test_unsqueeze_two_axes", ""},
		{"test_slice_neg_steps", ""},
		{"test_cumsum_1d_exclusive", ""},
		{"test_nllloss_NC", ""},
		{"test_roialign_aligned_false", ""},
		{"test_reshape_reordered_all_dims", "shape"},
		{"test_expand_dim_changed", ""},
		{"test_tile", ""},
		{"test_affine_grid_3d", ""},
		{"test_squeeze", "axes"},
		{"test_div_uint8", ""},
		{"test_mod_mixed_sign_int32", ""},
		{"test_resize_upsample_scales_linear", "scales"},
		{"test_upsample_nearest", "scales"},
		{"test_reversesequence_time", ""},
		{"test_lstm_with_peepholes", ""},
		{"test_image_decoder_decode_jpeg_rgb", ""},
		{"test_split_variable_parts_2d_opset13", "split"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, stored := backendModel(t, tc.name)
			ex, err := executor.New(m, executor.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			for k := range 2 {
				in, err := GenerateInputs(m, GenOptions{Seed: 7}, k)
				if err != nil {
					t.Fatalf("sample %d: %v", k, err)
				}
				if _, err := ex.Run(context.Background(), in); err != nil {
					t.Fatalf("sample %d does not fit the model: %v", k, err)
				}
				for i, v := range GraphInputs(m) {
					if v.Name != tc.shape {
						continue
					}
					got, _ := in[i].Float64s()
					want, _ := stored[i].Float64s()
					if !slices.Equal(got, want) {
						t.Errorf("%s = %v, ONNX's test stores %v", v.Name, got, want)
					}
				}
			}
		})
	}
}

// A shape input whose result the graph does not declare is refused before
// verification, naming the input, its use and --inputs.
func TestGeneratedShapeRefusedWhenUndeclared(t *testing.T) {
	m, _ := backendModel(t, "test_reshape_reordered_all_dims")
	m.Graph.Outputs[0].Type = canonical.TensorTypeNoShape(canonical.Float)
	_, err := GenerateInputs(m, GenOptions{}, 0)
	if err == nil || !strings.Contains(err.Error(), `input "shape" is the shape of Reshape node`) || !strings.Contains(err.Error(), "--inputs DIR") {
		t.Fatalf("error %v does not name the input, its use and --inputs", err)
	}
}

// float8, float4 and the 2- and 4-bit integer types are generated: finite
// values of a realistic magnitude, the integers within their type, packed
// as ONNX packs them; the executor runs each model on them.
func TestGeneratedNarrowTypes(t *testing.T) {
	for _, name := range []string{
		"test_cast_FLOAT8E4M3FN_to_FLOAT", "test_cast_FLOAT8E4M3FNUZ_to_FLOAT", "test_cast_FLOAT8E5M2_to_FLOAT",
		"test_cast_FLOAT8E5M2FNUZ_to_FLOAT", "test_cast_FLOAT4E2M1_to_FLOAT", "test_dequantizelinear_int4",
		"test_dequantizelinear_uint4", "test_dequantizelinear_int2", "test_dequantizelinear_uint2",
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := backendModel(t, name)
			in, err := GenerateInputs(m, GenOptions{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			x := in[0]
			vals, err := x.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := -8.0, 8.0
			switch x.DataType {
			case canonical.Uint4:
				lo, hi = 0, 15
			case canonical.Int2:
				lo, hi = -2, 1
			case canonical.Uint2:
				lo, hi = 0, 3
			}
			distinct := map[float64]bool{}
			for _, v := range vals {
				if math.IsNaN(v) || v < lo || v > hi {
					t.Fatalf("%s value %v outside [%v, %v]", canonical.ElemTypeName(x.DataType), v, lo, hi)
				}
				distinct[v] = true
			}
			if len(vals) > 4 && len(distinct) < 2 {
				t.Errorf("%d values, all %v", len(vals), vals[0])
			}
			ex, err := executor.New(m, executor.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			if _, err := ex.Run(context.Background(), in); err != nil {
				t.Fatalf("the model does not run on them: %v", err)
			}
		})
	}
}

// MinRTol raises a profile's relative tolerance, never lowers it, and
// keeps its absolute tolerance scaled by the output.
func TestMinRTol(t *testing.T) {
	o := Options{MinRTol: 1e-3}
	if f32 := o.toleranceFor(canonical.Float, canonical.Float); f32.RTol != 1e-3 || f32.ATolScale != 1e-5 {
		t.Errorf("float32: %+v, want rtol 1e-3 and the fp32 atol scale", f32)
	}
	if f16 := o.toleranceFor(canonical.Float16, canonical.Float16); f16.RTol != 1e-2 {
		t.Errorf("float16: rtol %g, want the fp16 profile's 1e-2", f16.RTol)
	}
}
