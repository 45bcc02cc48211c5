package onnx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

func fixturePath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "fixtures", "models", name, "model.onnx")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return p
}

func load(t testing.TB, name string) *canonical.Model {
	t.Helper()
	m, err := canonical.Load(fixturePath(t, name), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func toProto(t testing.TB, m *canonical.Model) *onnxpb.ModelProto {
	t.Helper()
	mp, err := m.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	return mp
}

func countOps(m *canonical.Model) map[string]int {
	c := map[string]int{}
	_ = canonical.Walk(m.Graph, func(_ *canonical.Graph, _ string, _ int, n *canonical.Node) error {
		c[n.OpType]++
		return nil
	})
	return c
}

// Export adapts a copy: the argument's proto is the same before and after,
// for a conversion that rewrites nodes (Gelu expanded, opset 21 -> 17, IR
// 10 -> 8) and for a refused one.
func TestExportLeavesArgumentUnchanged(t *testing.T) {
	m := load(t, "transformer_block_opset21")
	before := toProto(t, m)
	res, err := Export(context.Background(), m, "onnxruntime-1.13", adapt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if !proto.Equal(before, toProto(t, m)) {
		t.Fatal("Export changed its argument")
	}
	if m.Opset("") != 21 || m.IRVersion != 10 || countOps(m)["Gelu"] != 1 {
		t.Errorf("argument: opset %d IR %d Gelu %d, want 21, 10, 1", m.Opset(""), m.IRVersion, countOps(m)["Gelu"])
	}
	if res.Model == m || res.Model.Opset("") != 17 || res.Model.IRVersion != 8 || countOps(res.Model)["Gelu"] != 0 || countOps(res.Model)["Erf"] != 1 {
		t.Errorf("result: opset %d IR %d ops %v, want 17, 8, Gelu expanded into Erf", res.Model.Opset(""), res.Model.IRVersion, countOps(res.Model))
	}
	if r := res.Report; r.FromOpset != 21 || r.ToOpset != 17 || !r.Converted || r.ExternalData {
		t.Errorf("report %+v", r)
	}

	// Refused (opset 7 has no Erf for Gelu): the argument is still as it was.
	res, err = Export(context.Background(), m, "onnx-opset7", adapt.Options{})
	var ue *adapt.UnsupportedError
	if !errors.As(err, &ue) || len(ue.Violations) != 1 || ue.Violations[0].OpType != "Gelu" {
		t.Fatalf("opset 7: err = %v, want *adapt.UnsupportedError naming Gelu", err)
	}
	if res == nil || res.Model != nil || res.Report == nil || res.Report.OK() {
		t.Errorf("refused: result %+v", res)
	}
	if !proto.Equal(before, toProto(t, m)) {
		t.Fatal("a refused Export changed its argument")
	}
}

// A model the target cannot run: the typed error passes through, and
// allow_violations returns the model anyway with the report listing why.
func TestExportViolations(t *testing.T) {
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: canonical.NewGraph("g")}
	x, err := m.Graph.AddInput("x", canonical.TensorType(onnxpb.TensorProto_FLOAT, []int64{4}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := m.Graph.AddNode("uniq", "", "Unique", []*canonical.Value{x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	m.Graph.Outputs = append(m.Graph.Outputs, u.Outputs[0])
	before := toProto(t, m)

	res, err := Export(context.Background(), m, "tensorrt-10", adapt.Options{})
	var ue *adapt.UnsupportedError
	if !errors.As(err, &ue) || len(ue.Violations) != 1 || ue.Violations[0].Node != "uniq" || ue.Profile != "tensorrt-10" {
		t.Fatalf("err = %v, want *adapt.UnsupportedError for node uniq", err)
	}
	if res == nil || res.Model != nil || len(res.Report.Errors()) != 1 {
		t.Errorf("result %+v", res)
	}
	res, err = Export(context.Background(), m, "tensorrt-10", adapt.Options{AllowViolations: true})
	if err != nil {
		t.Fatalf("allow violations: %v", err)
	}
	defer res.Model.Close()
	if res.Report.OK() || len(res.Report.Errors()) != 1 || countOps(res.Model)["Unique"] != 1 {
		t.Errorf("allow violations: report %+v", res.Report)
	}
	if !proto.Equal(before, toProto(t, m)) {
		t.Error("Export changed its argument")
	}

	_, err = Export(context.Background(), m, "tensorrt10", adapt.Options{})
	var te *profiles.UnknownTargetError
	if !errors.As(err, &te) || te.Suggestion != "tensorrt-10" {
		t.Errorf("unknown target: err = %v, want *profiles.UnknownTargetError suggesting tensorrt-10", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Export(ctx, m, "tensorrt-10", adapt.Options{AllowViolations: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{"opset": "17", "ml_opset": "3", "allow_violations": "true", "external_data": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if o != (adapt.Options{Opset: 17, MLOpset: 3, AllowViolations: true, ExternalData: true}) {
		t.Errorf("options %+v", o)
	}
	_, err = ParseOptions(map[string]string{"opset": "17", "zeta": "1", "alpha": "2"})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Key != "alpha" || oe.Err != nil || len(oe.Known) != 4 {
		t.Fatalf("unknown keys: err = %v (%+v), want *OptionError for alpha (sorted first)", err, oe)
	}
	if want := `onnx-export: unknown option "alpha" (known: opset, ml_opset, allow_violations, external_data)`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	_, err = ParseOptions(map[string]string{"opset": "seventeen"})
	var ne *strconv.NumError
	if !errors.As(err, &oe) || oe.Key != "opset" || !errors.As(err, &ne) {
		t.Errorf("bad value: err = %v, want *OptionError wrapping *strconv.NumError", err)
	}
}

// ExportFile writes the adapted model and returns the report's lines; the
// plugin form refuses external data; nothing is written on error.
func TestExportFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := fixturePath(t, "transformer_block_opset21")
	out := filepath.Join(dir, "sub", "m17.onnx")
	warnings, err := ExportFile(ctx, in, out, "onnx-opset17", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if last := warnings[len(warnings)-1]; last != "target onnx-opset17: opset 21 -> 17, IR 10 -> 8" {
		t.Errorf("last warning %q", last)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), `Gelu "Gelu_0": expanded into Div/Erf/Add/Mul (opset 17 lacks Gelu)`) {
		t.Errorf("warnings lack the Gelu expansion:\n%s", strings.Join(warnings, "\n"))
	}
	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset("") != 17 || m.IRVersion != 8 || countOps(m)["Gelu"] != 0 {
		t.Errorf("written model: opset %d IR %d ops %v", m.Opset(""), m.IRVersion, countOps(m))
	}
	m.Close()

	// External data on request, and past the size limit without asking.
	ext := filepath.Join(dir, "ext.onnx")
	if _, err := ExportFile(ctx, in, ext, "onnxruntime-1.30", map[string]string{"external_data": "true"}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(ext + ".data"); err != nil || st.Size() < 100<<10 {
		t.Errorf("external data file: %v", err)
	}
	src := load(t, "transformer_block_opset21")
	res, err := Export(ctx, src, "onnxruntime-1.30", adapt.Options{ExternalAbove: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	res.Model.Close()
	if !res.Report.ExternalData || !strings.Contains(strings.Join(res.Report.Notes, "\n"), "saved with external data") {
		t.Errorf("130 KiB of weights over a 100 KiB limit: report %+v", res.Report)
	}

	// The plugin writes one file: external data is a typed refusal.
	one := filepath.Join(dir, "one.onnx")
	err = Plugin("test").ExportFile(ctx, in, one, "onnxruntime-1.30", map[string]string{"external_data": "true"})
	var sfe *SingleFileError
	if !errors.As(err, &sfe) || sfe.Target != "onnxruntime-1.30" {
		t.Errorf("plugin with external data: err = %v, want *SingleFileError", err)
	}
	// Refused: nothing written, the typed error passes through.
	bad := filepath.Join(dir, "bad.onnx")
	_, err = ExportFile(ctx, in, bad, "onnx-opset7", nil)
	var ue *adapt.UnsupportedError
	if !errors.As(err, &ue) {
		t.Errorf("opset 7: err = %v, want *adapt.UnsupportedError", err)
	}
	_, err = ExportFile(ctx, in, bad, "onnx-opset17", map[string]string{"opst": "7"})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Key != "opst" {
		t.Errorf("bad option: err = %v", err)
	}
	for _, p := range []string{bad, one, one + ".data"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}
}
