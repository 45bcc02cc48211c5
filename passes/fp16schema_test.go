package passes

import (
	"context"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// TestBF16KeepsOpsWithoutLowType: at opset 14, Where has no bfloat16
// type (it came with Where-16); the bfloat16 conversion
// keeps such nodes in float32 with Casts around them, and the result
// passes the checker, checked and unchecked, float16 and bfloat16. Every
// node left in bfloat16 has a schema that admits it.
func TestBF16KeepsOpsWithoutLowType(t *testing.T) {
	for _, name := range []string{"attention_causal", "transformer_encoder", "transformer_block_opset21"} {
		m, _ := fixture(t, name)
		for _, bf16 := range []bool{true, false} {
			for _, chk := range []*Check{nil, {Samples: 2}} {
				res, rep, err := Float16(context.Background(), m, FP16Options{BF16: bf16, Check: chk})
				if err != nil {
					t.Fatalf("%s bf16=%v: %v", name, bf16, err)
				}
				if err := check.Model(res); err != nil {
					t.Errorf("%s bf16=%v checked=%v: %v", name, bf16, chk != nil, err)
				}
				if !rep.Equivalent {
					t.Errorf("%s bf16=%v: not equivalent: %s", name, bf16, rep.Final.Summary)
				}
				if rep.After.Bytes > rep.Before.Bytes {
					// A weight copied to the low type for nodes whose
					// readers stay float32 (idleNodes).
					t.Errorf("%s bf16=%v: initializer bytes %d -> %d", name, bf16, rep.Before.Bytes, rep.After.Bytes)
				}
				if rep.Converted == 0 {
					t.Errorf("%s bf16=%v: nothing converted", name, bf16)
				}
				dt := canonical.Float16
				if bf16 {
					dt = canonical.BFloat16
				}
				want := "tensor(" + check.ElemTypeName(dt) + ")"
				ver := int(res.Opset(""))
				for _, n := range res.Graph.Nodes {
					for _, in := range n.Inputs {
						if elemType(in) != dt {
							continue
						}
						s, ok := onnxspec.Lookup("", n.OpType, ver)
						if !ok {
							t.Fatalf("%s: no schema for %s-%d", name, n.OpType, ver)
						}
						allowed := false
						for _, f := range s.Inputs {
							for _, a := range s.AllowedTypes(f.TypeStr) {
								allowed = allowed || a == want
							}
						}
						if !allowed {
							t.Errorf("%s: %s (%s) reads %s at opset %d", name, n.Name, n.OpType, want, ver)
						}
					}
				}
				_ = res.Close()
			}
		}
	}
}

// TestBF16WhereStaysFloat: attention_causal's Where (opset 14) reads
// float32 in the bfloat16 model.
func TestBF16WhereStaysFloat(t *testing.T) {
	m, _ := fixture(t, "attention_causal")
	res, rep, err := Float16(context.Background(), m, FP16Options{BF16: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Close() }()
	if rep.Unsupported == 0 {
		t.Errorf("report: %d nodes without a bfloat16 type, want Where counted", rep.Unsupported)
	}
	inferTypes(res)
	wheres := 0
	for _, n := range res.Graph.Nodes {
		if n.OpType != "Where" {
			continue
		}
		wheres++
		for _, k := range []int{1, 2} {
			if got := elemType(n.Inputs[k]); got != canonical.Float {
				t.Errorf("Where %s input %d: %v, want float", n.Name, k, got)
			}
		}
	}
	if wheres == 0 {
		t.Fatal("attention_causal has no Where")
	}
}

// TestBF16RefusesBeforeOpset13: Cast has no bfloat16 before Cast-13, so
// the bfloat16 conversion of an opset-9 model is refused with the opset
// it needs; its float16 conversion (Cast-9 has float16) is not.
func TestBF16RefusesBeforeOpset13(t *testing.T) {
	m, _ := fixture(t, "mlp_opset9")
	_, _, err := Float16(context.Background(), m, FP16Options{BF16: true})
	if err == nil || !strings.Contains(err.Error(), "opset 13") {
		t.Fatalf("bf16 at opset 9: %v, want a refusal naming opset 13", err)
	}
	res, _, err := Float16(context.Background(), m, FP16Options{})
	if err != nil {
		t.Fatalf("fp16 at opset 9: %v", err)
	}
	if err := check.Model(res); err != nil {
		t.Error(err)
	}
	_ = res.Close()
}

// TestBF16ORTKernelsNoWeightCopies: fitted to ONNX Runtime 1.30's CPU
// kernels, transformer_encoder's MatMuls stay float32; the Identity nodes
// sharing its weights between layers then gain nothing in bfloat16
// (idleNodes) and stay float32 too, so no weight is stored twice.
func TestBF16ORTKernelsNoWeightCopies(t *testing.T) {
	m, _ := fixture(t, "transformer_encoder")
	p, err := profiles.Get("onnxruntime-1.30")
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.CPUKernels()
	if err != nil || k == nil {
		t.Fatalf("kernels: %v", err)
	}
	runs := func(domain, op string, since int, param string, dt canonical.DataType) bool {
		ok, _ := k.Implements(domain, op, since, param, onnxpb.TensorProto_DataType(dt))
		return ok
	}
	res, rep, err := Float16(context.Background(), m, FP16Options{BF16: true, Runs: runs, Check: &Check{Samples: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Close() }()
	if err := check.Model(res); err != nil {
		t.Error(err)
	}
	if rep.Unsupported == 0 || !rep.Equivalent {
		t.Errorf("report: %d without a bfloat16 kernel, equivalent %v", rep.Unsupported, rep.Equivalent)
	}
	if rep.After.Bytes > rep.Before.Bytes {
		t.Errorf("initializer bytes %d -> %d: weights stored twice", rep.Before.Bytes, rep.After.Bytes)
	}
}
