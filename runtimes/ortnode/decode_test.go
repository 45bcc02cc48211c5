package ortnode

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestDecodesLikeTorch runs the decoder fixtures (fixtures/decoders, made
// by torch 1.13) in ONNX Runtime over torch's prompt and its 3 greedy
// tokens, each step's present.* fed back as past_key_values.*, and holds
// every step's logits to the ones torch computed.
func TestDecodesLikeTorch(t *testing.T) {
	r := testRuntime(t)
	for _, name := range []string{"llama", "gpt2"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name)
			path := filepath.Join(dir, "model.onnx")
			m, err := canonical.Load(path, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var ids, want []*canonical.Tensor
			for step := 0; step <= 3; step++ {
				d := filepath.Join(dir, "torch", fmt.Sprintf("step%d", step))
				id, err := tensorio.ReadNpyFile(filepath.Join(d, "input_ids.npy"))
				if err != nil {
					t.Fatal(err)
				}
				l, err := tensorio.ReadNpyFile(filepath.Join(d, "logits.npy"))
				if err != nil {
					t.Fatal(err)
				}
				ids, want = append(ids, id), append(want, l)
			}
			first, err := verify.PrefillInputs(m, &verify.Decode{Steps: 3, Prompt: int(ids[0].Dims[1])}, verify.GenOptions{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for i, v := range verify.GraphInputs(m) {
				names = append(names, v.Name)
				if v.Name == "input_ids" {
					first[i] = ids[0]
				}
			}
			var tokens [][]int64
			for _, id := range ids[1:] {
				v, err := id.Int64s()
				if err != nil {
					t.Fatal(err)
				}
				tokens = append(tokens, v)
			}
			sess, err := r.Open(context.Background(), path, runtimes.OpenOptions{InputNames: names, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			outs, err := verify.RunDecode(context.Background(), sess, m, nil, first, tokens)
			if err != nil {
				t.Fatal(err)
			}
			for step, y := range outs {
				a, err := y[0].Float64s()
				if err != nil {
					t.Fatal(err)
				}
				b, err := want[step].Float64s()
				if err != nil {
					t.Fatal(err)
				}
				if len(a) != len(b) {
					t.Fatalf("step %d: logits %v, torch's %v", step, y[0].Dims, want[step].Dims)
				}
				d, s := 0.0, 0.0
				for i := range a {
					d, s = math.Max(d, math.Abs(a[i]-b[i])), math.Max(s, math.Abs(b[i]))
				}
				if d > 1e-4*s {
					t.Errorf("step %d: ONNX Runtime's logits differ from torch's by %.3g (scale %.3g)", step, d, s)
				}
			}
		})
	}
}
