package verify

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/tensortest"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

func TestDetectCachesNames(t *testing.T) {
	for _, c := range []struct {
		past, present string
		pair          bool
	}{
		{"past_key_values.0.key", "present.0.key", true},
		{"past_key_values.11.value", "present.11.value", true},
		{"past.3.key", "present.3.key", true},
		{"past_key_0", "present_key_0", true},
		{"past_key_values.0.key", "present.0.value", false},
		{"past_key_values.0.key", "logits", false},
		{"pasta", "presenta", true}, // the same tail after the prefix
		{"past", "present", false},  // no tail: nothing names the cache
	} {
		s1, p1, ok1 := cacheSuffix(c.past)
		s2, p2, ok2 := cacheSuffix(c.present)
		got := ok1 && ok2 && p1 && !p2 && s1 == s2
		if got != c.pair {
			t.Errorf("%s / %s: paired %v, want %v", c.past, c.present, got, c.pair)
		}
	}
}

// torchDecoder reads a decoder fixture of fixtures/decoders (made by its
// make.py with torch 1.13) and torch's inputs and logits of its prefill
// and 3 decode steps.
func torchDecoder(t *testing.T, name string) (m *canonical.Model, ids, logits []*canonical.Tensor) {
	t.Helper()
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name)
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ids, logits, err = tensorio.ReadDecodeSteps(filepath.Join(dir, "torch"), 3)
	if err != nil {
		t.Fatal(err)
	}
	return m, ids, logits
}

// TorchPrefill returns the prefill's inputs of a fixture with torch's
// prompt.
func torchPrefill(t *testing.T, m *canonical.Model, ids *canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	dec := &Decode{Steps: 3, Prompt: int(ids.Dims[1])}
	in, err := PrefillInputs(m, dec, GenOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range GraphInputs(m) {
		if v.Name == "input_ids" {
			in[i] = ids
		}
	}
	return in
}

// TestExecutorDecodesLikeTorch runs both decoder fixtures on the executor
// over torch's prompt and tokens, each step's present fed back as the next
// past, and holds every step's logits to torch's.
func TestExecutorDecodesLikeTorch(t *testing.T) {
	for _, name := range []string{"llama", "gpt2"} {
		t.Run(name, func(t *testing.T) {
			m, ids, want := torchDecoder(t, name)
			ex, err := executor.New(m, executor.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			var tokens [][]int64
			for _, id := range ids[1:] {
				v, err := id.Int64s()
				if err != nil {
					t.Fatal(err)
				}
				tokens = append(tokens, v)
			}
			outs, err := RunDecode(context.Background(), ex, m, nil, torchPrefill(t, m, ids[0]), tokens)
			if err != nil {
				t.Fatal(err)
			}
			for step, y := range outs {
				if d := tensortest.Compare(t, y[0], want[step]).Rel(); d > 1e-4 {
					t.Errorf("%s: logits differ from torch's by %.3g of their scale", stepName(step), d)
				}
			}
		})
	}
}

// TestCompareDecodes verifies a decoder against itself over the loop and
// checks that the report covers every output at every step, and that a
// changed weight in B is found at the prefill.
func TestCompareDecodes(t *testing.T) {
	m, _, _ := torchDecoder(t, "gpt2")
	opts := Options{Decode: &Decode{Steps: 3}}
	rep, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent || rep.Decode == nil || rep.Decode.Steps != 3 || len(rep.Decode.Caches) != 4 {
		t.Fatalf("equivalent %v, decode %+v", rep.Equivalent, rep.Decode)
	}
	if got := len(rep.Outputs); got != 4*5 {
		t.Errorf("%d compared outputs, want 5 outputs at 4 steps", got)
	}
	if rep.Inputs[3].Shape[2] != 0 {
		t.Errorf("the prefill's cache %s has shape %v: want an empty past", rep.Inputs[3].Name, rep.Inputs[3].Shape)
	}

	// The caches fed back decide the later steps: a B whose present.0.key
	// is scaled passes the prefill's logits and fails the steps after.
	b, _, _ := torchDecoder(t, "gpt2")
	scaleOutput(t, b, "present.0.key", 1.5)
	rep, err = Compare(context.Background(), ModelSide("a", m), ModelSide("b", b), opts)
	if err != nil {
		t.Fatal(err)
	}
	pass := map[string]bool{}
	for _, o := range rep.Outputs {
		pass[o.Name] = o.Pass
	}
	if rep.Equivalent || !pass["logits (prefill)"] || pass["logits (step 1)"] || pass["present.0.key (prefill)"] {
		t.Errorf("equivalent %v, passes %v: want the prefill's logits to pass and step 1's to fail", rep.Equivalent, pass)
	}
}

// scaleOutput makes graph output name of m its value times k (a Mul
// before the output).
func scaleOutput(t *testing.T, m *canonical.Model, name string, k float32) {
	t.Helper()
	g := m.Graph
	for i, o := range g.Outputs {
		if o.Name != name {
			continue
		}
		raw := make([]byte, 4)
		bits := math.Float32bits(k)
		raw[0], raw[1], raw[2], raw[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		c, err := g.AddInitializer(canonical.NewTensor("scale_k", canonical.Float, nil, raw))
		if err != nil {
			t.Fatal(err)
		}
		// The graph output keeps its name: the old value is renamed.
		if err := g.RenameValue(o, name+"_unscaled"); err != nil {
			t.Fatal(err)
		}
		n, err := g.AddNode("scale", "", "Mul", []*canonical.Value{o, c}, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		n.Outputs[0].Type = o.Type
		g.Outputs[i] = n.Outputs[0]
		return
	}
	t.Fatalf("no output %q", name)
}

// TestDecodeAppliesToDecodersOnly: caches found by name count on a model
// fed token ids, not on an Attention node with past_key/present_key.
func TestDecodeAppliesToDecodersOnly(t *testing.T) {
	dec := &Decode{Steps: 3}
	m, _, _ := torchDecoder(t, "llama")
	if !dec.Applies(m) {
		t.Error("the llama fixture is not verified over decode steps")
	}
	path := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_attention_4d_with_past_and_present", "model.onnx")
	a, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if DetectCaches(a) == nil {
		t.Fatal("past_key/present_key are not paired")
	}
	if dec.Applies(a) {
		t.Error("an Attention node test is verified over decode steps")
	}
}
