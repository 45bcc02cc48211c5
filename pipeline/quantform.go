package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// The forms of a quantized ONNX model QuantizedForm writes.
const (
	// FormQDQ: QuantizeLinear/DequantizeLinear around float ops, the form
	// ONNX Runtime's and PyTorch's quantizers write.
	FormQDQ = "qdq"
	// FormQOperator: QLinearConv, QLinearMatMul and ONNX Runtime's
	// com.microsoft QLinear ops computing on the integers.
	FormQOperator = "qoperator"
)

// QuantFormReport is the report of QuantizedForm.
type QuantFormReport struct {
	// Form is the form written, FormQDQ or FormQOperator.
	Form string `json:"form"`
	// Rewritten counts the nodes rewritten.
	Rewritten int `json:"rewritten"`
	// Ops counts the op types of the result's nodes.
	Ops map[string]int `json:"ops"`
	// Final compares the result with the input, both run by ONNX Runtime
	// (nil when unchecked).
	Final *verify.Report `json:"verification,omitempty"`
}

// QuantizedForm rewrites the quantized model in into form and writes it to
// out: FormQOperator by passes.QDQToQOperator, FormQDQ by
// passes.QOperatorToQDQ. Unless o.Unchecked, the result and in are both
// run by ONNX Runtime (o.Runtimes' "onnxruntime"; the built-in executor
// does not run the com.microsoft QLinear ops) on the verification inputs
// and compared with the int8 profile (one quantization step); a result
// that is not equivalent is not written. A model with nothing to rewrite
// is refused.
func QuantizedForm(ctx context.Context, in, out, form string, o TransformOptions) (*QuantFormReport, error) {
	var rewrite func(*canonical.Model) (*canonical.Model, int, error)
	switch form {
	case FormQOperator:
		rewrite = passes.QDQToQOperator
	case FormQDQ:
		rewrite = passes.QOperatorToQDQ
	default:
		return nil, usageErr("quantized form %q: want %s or %s", form, FormQDQ, FormQOperator)
	}
	return transform(in, out, o, func(m *canonical.Model) (*canonical.Model, *QuantFormReport, error) {
		res, n, err := rewrite(m)
		if err != nil {
			return nil, nil, invalidErr(fmt.Errorf("quantize %s: %w", in, err))
		}
		rep := &QuantFormReport{Form: form, Rewritten: n, Ops: map[string]int{}}
		for _, nd := range res.Graph.Nodes {
			rep.Ops[nd.OpType]++
		}
		if n == 0 {
			_ = res.Close()
			return nil, rep, invalidErr(fmt.Errorf("quantize %s: no node has a form that rewrites to %s (see docs/optimize.md: QDQ ↔ QOperator); nothing was written", in, form))
		}
		if !o.Unchecked {
			if rep.Final, err = o.compareInORT(ctx, in, out, m, res); err != nil {
				_ = res.Close()
				return nil, rep, err
			}
		}
		if err := o.writeReport(rep); err != nil {
			return res, rep, err
		}
		if rep.Final != nil && !rep.Final.Equivalent {
			return res, rep, invalidErr(fmt.Errorf("quantize %s: the %s result is not equivalent to the input in ONNX Runtime (int8 profile: one step): %s; nothing was written (--no-verify writes it anyway)", in, form, rep.Final.Summary))
		}
		return res, rep, nil
	})
}

// compareInORT runs m (the file in) and res (to be written to out; saved
// to a temporary file) in ONNX Runtime on the verification inputs and
// compares them with the int8 profile.
func (o TransformOptions) compareInORT(ctx context.Context, in, out string, m, res *canonical.Model) (*verify.Report, error) {
	// The runtime of the default target's profile (ONNX Runtime): the one
	// that runs both forms, com.microsoft's QLinear ops included.
	runtime, err := targetRuntime("")
	if err != nil || runtime == "" {
		return nil, fmt.Errorf("verifying: the default target runs in no runtime (%v); --no-verify writes the result unchecked", err)
	}
	setup, err := runtimes.NewSetup([]string{runtime}, 0, o.Runtimes)
	if err != nil {
		return nil, inputErr(fmt.Errorf("verifying in ONNX Runtime (--no-verify writes the result unchecked): %w", err))
	}
	defer func() { _ = setup.Close() }()
	dir, err := os.MkdirTemp("", "onnxconv-quantform-")
	if err != nil {
		return nil, fmt.Errorf("verifying: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	tmp := filepath.Join(dir, "result.onnx")
	if err := canonical.Save(tmp, res, canonical.SaveOptions{}); err != nil {
		return nil, fmt.Errorf("verifying: writing the result: %w", err)
	}
	a, err := setup.Side(0, in, m)
	if err != nil {
		return nil, inputErr(fmt.Errorf("verifying: %w", err))
	}
	b, err := setup.Side(0, tmp, res)
	if err != nil {
		return nil, inputErr(fmt.Errorf("verifying: %w", err))
	}
	b.Name = out + " (" + runtime + ")"
	a.ComputedBy, b.ComputedBy = setup.DescribeSide(0), setup.DescribeSide(0)
	c, err := o.check(m)
	if err != nil {
		return nil, err
	}
	rep, err := verify.Compare(ctx, a, b, verify.Options{Inputs: c.Inputs, Samples: c.Samples, Gen: c.Gen, Profile: "int8"})
	if err != nil {
		return nil, invalidErr(fmt.Errorf("verifying in ONNX Runtime: %w", err))
	}
	return rep, nil
}

// WriteText writes the report's lines: what was rewritten and the result's
// op counts.
func (r *QuantFormReport) WriteText(w io.Writer, out string) error {
	ops := make([]string, 0, len(r.Ops))
	for op := range r.Ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	if _, err := fmt.Fprintf(w, "%d nodes rewritten to %s; %s has", r.Rewritten, r.Form, out); err != nil {
		return err
	}
	for i, op := range ops {
		sep := ","
		if i == 0 {
			sep = ""
		}
		if _, err := fmt.Fprintf(w, "%s %d %s", sep, r.Ops[op], op); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
