package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// npyProto reads a fixture's .npy as the named input.
func npyProto(t *testing.T, path, name string) *onnxpb.TensorProto {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := canonical.TensorToProto(x)
	if err != nil {
		t.Fatal(err)
	}
	tp.Name = proto.String(name)
	return tp
}

func floats(t *testing.T, tp *onnxpb.TensorProto) []float64 {
	t.Helper()
	raw := tp.GetRawData()
	if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_FLOAT || len(raw)%4 != 0 {
		t.Fatalf("%s: element type %v, %d bytes: want float32", tp.GetName(), tp.GetDataType(), len(raw))
	}
	out := make([]float64, len(raw)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return out
}

// TestRoute: LiteRT.js first for a float model; tfjs-tflite first, LiteRT.js
// second, for what LiteRT.js does not run (int64 or int8 inputs and outputs,
// variable tensors), with the reason; tfjs-tflite alone without LiteRT.js.
func TestRoute(t *testing.T) {
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	env := Env{Version: PackageVersion, LiteRTVersion: LiteRTPackageVersion}
	for _, c := range []struct {
		model string
		first Interpreter
		why   string
	}{
		{"cnn.tflite", LiteRT, ""},
		{"op_versions.tflite", LiteRT, ""},
		{"int64_io.tflite", TFJSTFLite, `"ids" int64`},
		{"svdf.tflite", TFJSTFLite, "keeps state"},
		{"svdf_int8.tflite", TFJSTFLite, "keeps state"},
		{"call_once.tflite", TFJSTFLite, "keeps state"},
		{"control_flow.tflite", LiteRT, ""},
	} {
		b, err := os.ReadFile(filepath.Join(fixtures, c.model))
		if err != nil {
			t.Fatal(err)
		}
		order, why := Route(env, b)
		if len(order) != 2 || order[0] != c.first || order[1] == c.first || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("Route(%s) = %v, %q; want %s first, why mentioning %q", c.model, order, why, c.first, c.why)
		}
		if order, _ := Route(Env{Version: PackageVersion}, b); !slices.Equal(order, []Interpreter{TFJSTFLite}) {
			t.Errorf("Route(%s) without LiteRT.js = %v, want tfjs-tflite alone", c.model, order)
		}
	}
}

// TestFallback: a file that the first interpreter refuses is computed by
// the other, which the session names (Build, Refused, Note), and the
// numbers are the real interpreters' numbers.
//
// op_versions holds SIGN at version 2 and ABS at version 5, as newer
// converters write them: tfjs-tflite's interpreter refuses it, LiteRT.js
// computes it, and its outputs must be exactly those tfjs-tflite computes
// for the same graph at version 1 (op_versions_v1). svdf holds variable
// tensors: LiteRT.js refuses it, tfjs-tflite computes it, and its outputs
// are the ones tfjs-tflite stored for it (svdf.output_N.npy).
func TestFallback(t *testing.T) {
	env := realEnv(t)
	if env.LiteRTVersion == "" {
		t.Skipf("%s is not installed beside %s in %s", LiteRTPackage, Package, env.Modules)
	}
	ctx := context.Background()
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")

	in := []*onnxpb.TensorProto{npyProto(t, filepath.Join(fixtures, "op_versions.input_0.npy"), "x")}
	// tfjs-tflite first, as a model routed to it would be: it refuses the
	// file, LiteRT.js takes it.
	s, err := OpenWith(ctx, env, filepath.Join(fixtures, "op_versions.tflite"), Options{Interpreters: []Interpreter{TFJSTFLite, LiteRT}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.Build, LiteRTPackage+" "+env.LiteRTVersion) || len(s.Refused) != 1 ||
		!strings.HasPrefix(s.Refused[0], Package+" "+env.Version+": ") || !strings.Contains(s.Refused[0], "'SIGN' version '2'") {
		t.Fatalf("session on %s, refused %q; want LiteRT.js after tfjs-tflite's refusal", s.Build, s.Refused)
	}
	if n := s.Note(); !strings.Contains(n, "computed by "+s.Build) || !strings.Contains(n, Package) {
		t.Errorf("Note() = %q, want it to name LiteRT.js and tfjs-tflite's refusal", n)
	}
	got, err := s.Run(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// The default order goes to LiteRT.js directly.
	d, err := Open(ctx, env, filepath.Join(fixtures, "op_versions.tflite"), 1)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !strings.HasPrefix(d.Build, LiteRTPackage) || len(d.Refused) != 0 || d.Routed != "" {
		t.Errorf("default session on %s (refused %q, routed %q), want LiteRT.js first", d.Build, d.Refused, d.Routed)
	}
	want, err := runWith(ctx, env, filepath.Join(fixtures, "op_versions_v1.tflite"), in, Options{Interpreters: []Interpreter{TFJSTFLite}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Outputs) != 2 || len(want.Outputs) != 2 {
		t.Fatalf("%d and %d outputs, want 2", len(got.Outputs), len(want.Outputs))
	}
	for i := range want.Outputs {
		g, w := floats(t, got.Outputs[i]), floats(t, want.Outputs[i])
		if got.Outputs[i].GetName() != want.Outputs[i].GetName() || !slices.Equal(g, w) {
			t.Errorf("output %d: LiteRT.js gives %q %v, tfjs-tflite %q %v", i, got.Outputs[i].GetName(), g, want.Outputs[i].GetName(), w)
		}
	}

	// LiteRT.js first: it refuses the variable tensors, tfjs-tflite
	// computes the model.
	svdf := filepath.Join(fixtures, "svdf.tflite")
	sin := []*onnxpb.TensorProto{npyProto(t, filepath.Join(fixtures, "svdf.input_0.npy"), ""), npyProto(t, filepath.Join(fixtures, "svdf.input_1.npy"), "")}
	s2, err := OpenWith(ctx, env, svdf, Options{Interpreters: []Interpreter{LiteRT, TFJSTFLite}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if !strings.HasPrefix(s2.Build, Package+" "+env.Version) || len(s2.Refused) != 1 || !strings.Contains(s2.Refused[0], LiteRTPackage) ||
		!strings.Contains(s2.Refused[0], "Variable tensors") {
		t.Fatalf("session on %s, refused %q; want tfjs-tflite after LiteRT.js's refusal", s2.Build, s2.Refused)
	}
	for k, ti := range s2.Inputs {
		sin[k].Name = proto.String(ti.Name)
	}
	res, err := s2.Run(ctx, sin)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range res.Outputs {
		g, w := floats(t, o), floats(t, npyProto(t, filepath.Join(fixtures, "svdf.output_"+string(rune('0'+i))+".npy"), ""))
		if len(g) != len(w) {
			t.Fatalf("output %d: %d values, stored %d", i, len(g), len(w))
		}
		for j := range w {
			if math.Abs(g[j]-w[j]) > 1e-6*math.Max(1, math.Abs(w[j])) {
				t.Fatalf("output %d value %d: %g, tfjs-tflite stored %g", i, j, g[j], w[j])
			}
		}
	}

	// LiteRT.js alone refuses int64 inputs at load.
	_, err = OpenWith(ctx, env, filepath.Join(fixtures, "int64_io.tflite"), Options{Interpreters: []Interpreter{LiteRT}})
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "load" || !strings.Contains(err.Error(), "INT64") {
		t.Errorf("LiteRT.js alone on int64_io = %v, want a load *RunError", err)
	}
}
