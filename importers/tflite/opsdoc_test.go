package tflite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// writeOpsDocEnv, when 1, makes TestOneOpAgainstTFLite write
// docs/tflite-ops.md: the op table of formats/tflite with the one-op
// checks that passed for each builtin.
const writeOpsDocEnv = "ONNXCONV_WRITE_TFLITE_OPS_DOC"

func writeOpsDoc(t *testing.T, n int, checks map[fb.BuiltinOperator][]string) {
	t.Helper()
	var b strings.Builder
	ops := formats.Ops()
	imported, exported, checked := 0, 0, 0
	for _, o := range ops {
		if o.Imported() {
			imported++
		}
		if len(o.Export) > 0 {
			exported++
		}
		if len(checks[o.Builtin]) > 0 {
			checked++
		}
	}
	fmt.Fprintf(&b, `# TFLite builtin operators: import, export and the checks

The one op table of formats/tflite (`+"`onnxconv formats tflite --ops [--json]`"+`), which importers/tflite
and exporters/tflite both read, with the checks that prove each row. %d builtins in the schema: %d imported,
%d written by the exporter; %d builtins have one-op checks (%d cases in all).

- **Import checks**: TestOneOpAgainstTFLite (importers/tflite/oneop*_test.go) builds a model of the one
  builtin with the flatbuffers builder for each option set (float32; int8 and int16 where TFLite has them;
  shape_signature -1 dims), runs it in the TFLite interpreter (runtimes/tflite: LiteRT.js or tfjs-tflite, one
  node process per interpreter loading each case's model in turn, a fresh one for models with state) and through the
  importer and the executor on the same inputs: float outputs within 1e-5 of the output's largest magnitude,
  integer outputs exact (a few int8 activations within one step: their checks say "max 1 step(s)"), NaN where the interpreter
  has NaN. The checks column lists each case and its measured result.
- **Export checks**: exporters/tflite TestExportOps (one-op ONNX models: InstanceNormalization,
  GroupNormalization, Split, TopK, Where, Expand, Tile, Cast, CumSum, GatherND, ArgMax/ArgMin, Sum,
  comparisons and logical ops), TestFixtureModels (the torch exports of fixtures/models, float32 and float16),
  TestRNN, TestKeepNCHWIOAndGroups, TestInt8, TestConv1D (1-D convs and pools), TestIfLoop, TestTorchScriptSpectrogram/Branchy: each exported file run in the interpreter against the ONNX source
  on the executor, and re-imported.

Written by `+"`ONNXCONV_WRITE_TFLITE_OPS_DOC=1 go test ./importers/tflite -run TestOneOpAgainstTFLite`"+`.

| builtin | import (ONNX built) | export (ONNX ops written with it) | one-op import checks against the interpreter |
| --- | --- | --- | --- |
`, len(ops), imported, exported, checked, n)
	for _, o := range ops {
		if !o.Imported() && len(o.Export) == 0 {
			continue
		}
		imp := o.Import
		if imp == "" {
			imp = "—"
		}
		exp := strings.Join(o.Export, ", ")
		if exp == "" {
			exp = "—"
		}
		ck := strings.Join(checks[o.Builtin], "; ")
		if ck == "" {
			ck = "— (checked inside the model files of TestAgainstTFLiteRuntime)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", o.Name, imp, exp, ck)
	}
	var missing, unrun []string
	for _, o := range ops {
		switch {
		case o.Imported() || len(o.Export) > 0:
		case slices.Contains(noInterpreter(), o.Builtin):
			unrun = append(unrun, o.Name)
		default:
			missing = append(missing, o.Name)
		}
	}
	fmt.Fprintf(&b, "\n## Not imported or exported (%d)\n\n%s\n", len(missing), strings.Join(missing, ", "))
	fmt.Fprintf(&b, "\n## Run by neither interpreter (%d, not imported, not counted)\n\n"+
		"Neither LiteRT.js (%s) nor tfjs-tflite has a kernel for these: LiteRT.js refuses a model of one of them at load\n"+
		"with \"Didn't find op for builtin opcode\", so no one-op check can compute a reference (TestNoInterpreterRuns\n"+
		"proves the refusal). Most are StableHLO builtins whose LiteRT kernels LiteRT.js does not link (it runs\n"+
		"STABLEHLO_ADD, MULTIPLY, MAXIMUM, MINIMUM, AND, SHIFT_LEFT, PAD, GATHER, SCATTER, REDUCE_WINDOW, COMPOSITE, CASE\n"+
		"and RNG_BIT_GENERATOR); CUSTOM is the tag of custom operators, which import by name.\n\n%s\n",
		len(unrun), tfliteruntime.LiteRTPackage, strings.Join(unrun, ", "))
	path := filepath.Join("..", "..", "docs", "tflite-ops.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noInterpreter lists the builtins neither TFLite interpreter runs (and
// CUSTOM, a tag rather than an operator): docs/tflite-ops.md lists them
// apart, and TestNoInterpreterRuns checks that each is refused.
func noInterpreter() []fb.BuiltinOperator {
	return []fb.BuiltinOperator{
		fb.BuiltinOperatorCUSTOM, fb.BuiltinOperatorCONCAT_EMBEDDINGS, fb.BuiltinOperatorCALL, fb.BuiltinOperatorDELEGATE,
		fb.BuiltinOperatorPLACEHOLDER_FOR_GREATER_OP_CODES, fb.BuiltinOperatorSTABLEHLO_LOGISTIC, fb.BuiltinOperatorSTABLEHLO_DIVIDE,
		fb.BuiltinOperatorSTABLEHLO_RESHAPE, fb.BuiltinOperatorSTABLEHLO_CLAMP, fb.BuiltinOperatorSTABLEHLO_CONCATENATE,
		fb.BuiltinOperatorSTABLEHLO_BROADCAST_IN_DIM, fb.BuiltinOperatorSTABLEHLO_CONVOLUTION, fb.BuiltinOperatorSTABLEHLO_SLICE,
		fb.BuiltinOperatorSTABLEHLO_CUSTOM_CALL, fb.BuiltinOperatorSTABLEHLO_REDUCE, fb.BuiltinOperatorSTABLEHLO_ABS,
		fb.BuiltinOperatorSTABLEHLO_COSINE, fb.BuiltinOperatorSTABLEHLO_EXPONENTIAL, fb.BuiltinOperatorSTABLEHLO_FLOOR,
		fb.BuiltinOperatorSTABLEHLO_LOG, fb.BuiltinOperatorSTABLEHLO_NEGATE, fb.BuiltinOperatorSTABLEHLO_OR,
		fb.BuiltinOperatorSTABLEHLO_POWER, fb.BuiltinOperatorSTABLEHLO_REMAINDER, fb.BuiltinOperatorSTABLEHLO_RSQRT,
		fb.BuiltinOperatorSTABLEHLO_SELECT, fb.BuiltinOperatorSTABLEHLO_SUBTRACT, fb.BuiltinOperatorSTABLEHLO_TANH,
		fb.BuiltinOperatorSTABLEHLO_COMPARE, fb.BuiltinOperatorSTABLEHLO_CONVERT, fb.BuiltinOperatorSTABLEHLO_DYNAMIC_SLICE,
		fb.BuiltinOperatorSTABLEHLO_DYNAMIC_UPDATE_SLICE, fb.BuiltinOperatorSTABLEHLO_IOTA, fb.BuiltinOperatorSTABLEHLO_DOT_GENERAL,
		fb.BuiltinOperatorSTABLEHLO_SORT, fb.BuiltinOperatorSTABLEHLO_WHILE, fb.BuiltinOperatorSTABLEHLO_TRANSPOSE,
		fb.BuiltinOperatorSTABLEHLO_CBRT,
	}
}

// TestNoInterpreterRuns loads a model of each builtin of noInterpreter
// (but CUSTOM) in LiteRT.js and in tfjs-tflite: both must refuse it,
// LiteRT.js for want of a kernel.
//
// The models go to the package runner's processes (pool_test.go), one of
// each interpreter, which keep serving after a refusal: each first loads
// the cnn fixture, so that every refusal here is a lent process's (a
// process refusing its first model ends). The first code's refusals are
// also asked of processes of their own: the same errors.
func TestNoInterpreterRuns(t *testing.T) {
	env := tfliteEnv(t)
	dir := t.TempDir()
	ctx := context.Background()
	interps := []tfliteruntime.Interpreter{tfliteruntime.LiteRT, tfliteruntime.TFJSTFLite}
	r := tfliteRunner(env)
	for _, in := range interps {
		s, err := r.Open(ctx, fixture("cnn.tflite"), tfliteruntime.Options{Interpreters: []tfliteruntime.Interpreter{in}})
		if err != nil {
			t.Fatalf("%s on the cnn fixture: %v", in, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i, code := range noInterpreter()[1:] {
		t.Run(code.String(), func(t *testing.T) {
			x := fshape(2, 3)
			ot, o := noOpts()
			path := filepath.Join(dir, code.String()+".tflite")
			m := single(code, ot, o, []tspec{x, x}, x)
			if err := os.WriteFile(path, m.bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, in := range interps {
				o := tfliteruntime.Options{Interpreters: []tfliteruntime.Interpreter{in}}
				s, err := r.Open(ctx, path, o)
				if err == nil {
					s.Close()
					t.Errorf("%s loads a model of %s", in, code)
					continue
				}
				if i == 0 {
					if _, alone := tfliteruntime.OpenWith(ctx, env, path, o); alone == nil || alone.Error() != err.Error() {
						t.Errorf("%s: a lent process: %v; a process of its own: %v", in, err, alone)
					}
				}
				var re *tfliteruntime.RunError
				if !errors.As(err, &re) || re.Kind != "load" {
					t.Errorf("%s: %v, want a load refusal", in, err)
				} else if in == tfliteruntime.LiteRT && !strings.Contains(re.Detail, "Didn't find op for builtin opcode") {
					t.Errorf("%s refuses it for another reason: %s", in, re.Detail)
				}
			}
		})
	}
}
