//go:build cgo

package ort

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/verify"
)

// ortRunner runs a model file in ONNX Runtime as a verify.Runner.
type ortRunner struct {
	rt   *Runtime
	path string
}

func (r ortRunner) Run(_ context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	var tps []*onnxpb.TensorProto
	for _, in := range inputs {
		tp, err := canonical.TensorToProto(in)
		if err != nil {
			return nil, err
		}
		tps = append(tps, tp)
	}
	outs, err := r.rt.Run(r.path, tps)
	if err != nil {
		return nil, err
	}
	var res []*canonical.Tensor
	for _, o := range outs {
		t, err := canonical.TensorFromProto(o)
		if err != nil {
			return nil, err
		}
		res = append(res, t)
	}
	return res, nil
}

// TestBF16RunsInORT: `onnxconv fp16 --bf16 --keep-io-types` of
// attention_causal (Where at opset 14, which has no bfloat16 type before
// Where-16) and transformer_encoder exits 0 and says EQUIVALENT; the file
// passes ONNX Runtime 1.30's loader (no node in bfloat16 that its CPU
// kernels lack) and, run there, is within the bf16 tolerance profile of
// the float32 model run in ONNX Runtime.
func TestBF16RunsInORT(t *testing.T) {
	rt := openForTest(t)
	root := repoRoot(t)
	bin := onnxconvBin(t)
	for _, name := range []string{"attention_causal", "transformer_encoder"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(root, "fixtures", "models", name, "model.onnx")
			dst := filepath.Join(t.TempDir(), "bf16.onnx")
			cmd := exec.Command(bin, "fp16", "--bf16", "--keep-io-types", src, dst)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("fp16 --bf16: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), ": EQUIVALENT") {
				t.Errorf("fp16 --bf16 did not say EQUIVALENT:\n%s", stdout.String())
			}
			m, err := canonical.Load(src, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = m.Close() }()
			low, err := canonical.Load(dst, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = low.Close() }()
			a := &verify.Side{Name: "float32 (onnxruntime)", Model: m, Runner: ortRunner{rt, src}}
			b := &verify.Side{Name: "bfloat16 (onnxruntime)", Model: low, Runner: ortRunner{rt, dst}}
			rep, err := verify.Compare(context.Background(), a, b, verify.Options{Samples: 2, Profile: "bf16"})
			if err != nil {
				t.Fatalf("running in ONNX Runtime %s: %v", rt.Version(), err)
			}
			if !rep.Equivalent {
				t.Errorf("ONNX Runtime %s: bfloat16 result not within the bf16 profile: %s", rt.Version(), rep.Summary)
			}
			t.Logf("ONNX Runtime %s: %s", rt.Version(), rep.Summary)
		})
	}
}
