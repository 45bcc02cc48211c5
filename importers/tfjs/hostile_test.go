package tfjs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/importers/tfops"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// writeModel writes model.json (and weights.bin when bin is not nil) in a
// fresh folder and returns model.json's path.
func writeModel(t testing.TB, js string, bin []byte) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "model.json")
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	if bin != nil {
		if err := os.WriteFile(filepath.Join(dir, "weights.bin"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

const graphHead = `{"format":"graph-model","modelTopology":{"node":[{"name":"x","op":"Placeholder","attr":{"dtype":{"type":"DT_FLOAT"},"shape":{"shape":{"dim":[{"size":"-1"},{"size":"2"}]}}}},`

// Hostile model.json files are refused, naming the file and the fault
// (a 60 s guard catches a hang; the 5 s CPU limit is held by
// cmd/onnxconv's TestHostileFixtures: wall time under load is no measure).
func TestHostileModels(t *testing.T) {
	deep := `{"format":"layers-model","modelTopology":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + `}`
	nested := `{"class_name":"Sequential","config":{"name":"m","layers":[{"class_name":"Dense","config":{"name":"d","units":1,"batch_input_shape":[null,1]}}]}}`
	for i := 0; i < 40; i++ {
		nested = `{"class_name":"Sequential","config":{"name":"m` + string(rune('a'+i%26)) + `","layers":[{"class_name":"InputLayer","config":{"name":"in","batch_input_shape":[null,1]}},` + nested + `]}}`
	}
	cases := []struct {
		name, js string
		bin      []byte
		want     string // in the message
	}{
		{"truncated", `{"format":"graph-model","modelTopology":{"node":[{"name":"x"`, nil, "does not parse"},
		{"not an object", `[1,2,3]`, nil, "does not parse"},
		{"no topology", `{"format":"graph-model","weightsManifest":[]}`, nil, "no modelTopology"},
		{"lying sizes", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["weights.bin"],"weights":[{"name":"w","shape":[1000000],"dtype":"float32"}]}]}`,
			make([]byte, 16), "truncated weight file"},
		{"huge dims", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["weights.bin"],"weights":[{"name":"w","shape":[2147483647,2147483647,2147483647],"dtype":"float32"}]}]}`,
			make([]byte, 16), "too large"},
		{"negative dims", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["weights.bin"],"weights":[{"name":"w","shape":[-4],"dtype":"float32"}]}]}`,
			make([]byte, 16), "bad shape"},
		{"escaping path", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["../../../../etc/passwd"],"weights":[]}]}`,
			nil, "leaves the model's folder"},
		{"absolute path", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["/etc/passwd"],"weights":[]}]}`,
			nil, "relative to the model's folder"},
		{"missing weight file", graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["nothere.bin"],"weights":[]}]}`,
			nil, "nothere.bin"},
		{"deep nesting", deep, nil, "nested"},
		{"nested models", `{"format":"layers-model","modelTopology":` + nested + `,"weightsManifest":[]}`, nil, "nested more than"},
		{"cycle", `{"format":"graph-model","modelTopology":{"node":[{"name":"a","op":"Relu","input":["b"]},{"name":"b","op":"Relu","input":["a"]}]},"weightsManifest":[]}`,
			nil, "cycle"},
		{"unknown op", graphHead + `{"name":"y","op":"FancyOp","input":["x"]}]},"weightsManifest":[]}`, nil, "FancyOp"},
		{"custom layer", `{"format":"layers-model","modelTopology":{"class_name":"Sequential","config":{"name":"s","layers":[{"class_name":"QDense","config":{"name":"q","units":2,"batch_input_shape":[null,3]}}]}},"weightsManifest":[]}`,
			nil, "QDense"},
		{"missing weight", `{"format":"layers-model","modelTopology":{"class_name":"Sequential","config":{"name":"s","layers":[{"class_name":"Dense","config":{"name":"d","units":2,"batch_input_shape":[null,3]}}]}},"weightsManifest":[]}`,
			nil, `weight "kernel" is missing`},
		{"unknown format", `{"format":"saved-model","modelTopology":{}}`, nil, "neither layers-model nor graph-model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeModel(t, tc.js, tc.bin)
			start := time.Now()
			_, err := tfjs.ImportFile(context.Background(), p, tfjs.Options{})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if err == nil {
				t.Fatal("imported")
			}
			msg := err.Error()
			if !strings.Contains(msg, p) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want the file and %q", msg, tc.want)
			}
		})
	}
}

// Errors are typed: a custom layer is a *keraslayers.LayerError naming
// its class, an unmapped op a *tfops.OpError naming the op and the node.
func TestTypedErrors(t *testing.T) {
	p := writeModel(t, `{"format":"layers-model","modelTopology":{"class_name":"Sequential","config":{"name":"s","layers":[{"class_name":"HGQDense","config":{"name":"h","units":2,"batch_input_shape":[null,3]}}]}},"weightsManifest":[]}`, nil)
	_, err := tfjs.ImportFile(context.Background(), p, tfjs.Options{})
	var le *keraslayers.LayerError
	if !errors.As(err, &le) || le.Class != "HGQDense" || le.Layer != "h" || !le.Unsupported {
		t.Errorf("custom layer: %v", err)
	}
	p = writeModel(t, graphHead+`{"name":"y","op":"FancyOp","input":["x"]}]},"weightsManifest":[]}`, nil)
	_, err = tfjs.ImportFile(context.Background(), p, tfjs.Options{})
	var oe *tfops.OpError
	if !errors.As(err, &oe) || oe.Op != "FancyOp" || oe.Node != "y" || !oe.Unsupported {
		t.Errorf("unknown op: %v", err)
	}
	p = writeModel(t, `{"format":"graph-model"`, nil)
	_, err = tfjs.ImportFile(context.Background(), p, tfjs.Options{})
	var fe *tfjs.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("truncated: %T %v", err, err)
	}
}

// Detection claims TF.js model.json files, not XGBoost JSON or other JSON.
func TestDetect(t *testing.T) {
	imp := tfjs.New()
	for head, want := range map[string]float32{
		`{"format": "layers-model", "modelTopology": {}}`:       1,
		`{"weightsManifest": [], "modelTopology": {}}`:          0.9,
		`{"learner": {"gradient_booster": {}}, "version": [2]}`: 0,
		`[1, 2]`: 0,
		``:       0,
	} {
		if got := imp.Detect("model.json", []byte(head)); got != want {
			t.Errorf("Detect(%q) = %v, want %v", head, got, want)
		}
	}
}

// FuzzImport: any model.json is a model or an error, never a panic or a
// hang.
func FuzzImport(f *testing.F) {
	for _, p := range []string{
		fixtureDir + "/cnn/model.json", fixtureDir + "/functional/model.json", fixtureDir + "/rnn/model.json",
		shared + "/tfjs_graph/tfjs_rn59_graph_model/model.json",
	} {
		testpaths.AddFiles(f, p)
	}
	f.Add([]byte(graphHead + `{"name":"w","op":"Const"}]},"weightsManifest":[{"paths":["weights.bin"],"weights":[{"name":"w","shape":[2],"dtype":"float32","quantization":{"dtype":"uint8","scale":0.1,"min":-1}}]}]}`))
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "model.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "weights.bin"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = tfjs.ImportFile(context.Background(), p, tfjs.Options{})
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("import took more than 60 s: a hang")
		}
	})
}
