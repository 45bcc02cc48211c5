package tflite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
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
  shape_signature -1 dims), runs it in the TFLite interpreter (runtimes/tflite, tfjs-tflite) and through the
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
	var missing []string
	for _, o := range ops {
		if !o.Imported() && len(o.Export) == 0 {
			missing = append(missing, o.Name)
		}
	}
	fmt.Fprintf(&b, "\n## Not imported or exported (%d)\n\n%s\n", len(missing), strings.Join(missing, ", "))
	path := filepath.Join("..", "..", "docs", "tflite-ops.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
