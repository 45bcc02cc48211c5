//go:build cgo

package ort

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// fixtureModels are the models made by fixtures/models/make_models.py, with
// their ai.onnx opset.
var fixtureModels = []struct {
	name  string
	opset int64
	ops   []string // op types that must be present
}{
	{"squeezenet", 13, []string{"Conv", "Concat", "MaxPool", "GlobalAveragePool"}},
	{"resnet_small", 13, []string{"Conv", "Add", "Gemm", "GlobalAveragePool"}},
	{"transformer_encoder", 14, []string{"MatMul", "Softmax", "ReduceMean", "Sqrt"}},
	{"transformer_block_opset21", 21, []string{"LayerNormalization", "Gelu", "MatMul", "Softmax"}},
	{"mlp_opset9", 9, []string{"Gemm", "Relu"}},
	{"mlp_opset17", 17, []string{"Gemm", "Relu"}},
}

func fixturesDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "fixtures", "models")
}

// TestFixturesMatchTorch runs every fixture model with ONNX Runtime and
// compares with the outputs torch computed when the fixture was made.
func TestFixturesMatchTorch(t *testing.T) {
	rt := openForTest(t)
	for _, fm := range fixtureModels {
		t.Run(fm.name, func(t *testing.T) {
			dir := filepath.Join(fixturesDir(t), fm.name)
			model := filepath.Join(dir, "model.onnx")
			checkFixtureModel(t, model, fm.opset, fm.ops)
			ins, want := readDataSet(t, filepath.Join(dir, "test_data_set_0"))
			got, err := rt.Run(model, ins)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d outputs, want %d", len(got), len(want))
			}
			for i := range want {
				maxAbs, maxRel, bad := diffStats(t, got[i], want[i], 1e-3, 1e-5)
				t.Logf("%s output %q: %d values, max abs diff %.3g, max rel diff %.3g",
					fm.name, want[i].GetName(), len(decode(t, want[i]).f), maxAbs, maxRel)
				if bad > 0 {
					t.Errorf("%d values out of rtol 1e-3 / atol 1e-5", bad)
				}
			}
		})
	}
}

// checkFixtureModel checks the opset and the op types of a fixture.
func checkFixtureModel(t *testing.T, path string, opset int64, ops []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it with /usr/bin/python3 fixtures/models/make_models.py)", err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got int64 = -1
	for _, o := range m.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			got = o.GetVersion()
		}
	}
	if got != opset {
		t.Errorf("ai.onnx opset %d, want %d", got, opset)
	}
	have := map[string]int{}
	for _, n := range m.GetGraph().GetNode() {
		have[n.GetOpType()]++
	}
	for _, op := range ops {
		if have[op] == 0 {
			t.Errorf("no %s node (ops %v)", op, have)
		}
	}
}

// BenchmarkFixtures times one run of each fixture with one intra-op thread.
func BenchmarkFixtures(b *testing.B) {
	rt := openForTest(b)
	for _, fm := range fixtureModels {
		b.Run(fm.name, func(b *testing.B) {
			dir := filepath.Join(fixturesDir(b), fm.name)
			s, err := rt.NewSession(filepath.Join(dir, "model.onnx"), WithIntraOpThreads(1))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ins, _ := readDataSet(b, filepath.Join(dir, "test_data_set_0"))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Run(ins); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
