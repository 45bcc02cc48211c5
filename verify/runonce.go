package verify

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
)

// RunOnce runs a's model on the first sample of opts.Inputs (generated
// when there is none) and checks what can be checked without a reference:
// every output is produced, with the element type the model declares, and
// holds no NaN or Inf. It is what a conversion reports when nothing
// computes its source: the Report has no B side, Equivalent is false
// (nothing was compared), and each output's Pass says whether the checks
// held. An error means the model does not run.
func RunOnce(ctx context.Context, a *Side, opts Options) (*Report, error) {
	start := time.Now()
	if a == nil || a.Model == nil || a.Model.Graph == nil {
		return nil, fmt.Errorf("verify: %w", errNoModel)
	}
	rep := newReport(a, &Side{Name: ""}, &opts)
	rep.B = SideInfo{Kind: "none"}
	run, closeRun, err := runnerFor(a, opts.Backend, opts.Threads)
	if err != nil {
		return nil, fmt.Errorf("verify: %s: %w", a.Name, err)
	}
	defer closeRun()
	in := []*canonical.Tensor(nil)
	if len(opts.Inputs) > 0 {
		in = opts.Inputs[0]
	} else {
		if in, err = GenerateInputs(a.Model, opts.Gen, 0); err != nil {
			return nil, fmt.Errorf("verify: generating inputs for %s: %w", a.Name, err)
		}
		rep.Options.InputSource = "generated"
	}
	rep.Samples = 1
	for i, v := range GraphInputs(a.Model) {
		if i < len(in) && in[i] != nil {
			rep.Inputs = append(rep.Inputs, InputInfo{Name: v.Name, DType: canonical.ElemTypeName(in[i].DataType), Shape: nonNil(in[i].Dims)})
		}
	}
	outs, err := run.Run(ctx, in)
	if err != nil {
		return nil, &SideError{Name: a.Name, Err: err}
	}
	decl := a.Model.Graph.Outputs
	for i, v := range decl {
		o := &OutputResult{Name: v.Name, Pass: true, Shape: []int64{}, BShape: []int64{}}
		rep.Outputs = append(rep.Outputs, o)
		if i >= len(outs) || outs[i] == nil {
			o.Pass, o.Reason = false, "not produced"
			continue
		}
		t := outs[i]
		o.DType, o.Shape, o.Kind = canonical.ElemTypeName(t.DataType), nonNil(t.Dims), kindOf(t.DataType)
		o.Elements, _ = t.NumElements()
		if dt, _, _, ok := canonical.TensorTypeOf(v.Type); ok && dt != 0 && dt != t.DataType {
			o.Pass, o.Reason = false, fmt.Sprintf("declared %s, produced %s", canonical.ElemTypeName(dt), o.DType)
			continue
		}
		if canonical.IsFloatType(t.DataType) {
			vals, err := t.Float64s()
			if err != nil {
				return nil, fmt.Errorf("verify: output %s: %w", v.Name, err)
			}
			var nan, inf int64
			for _, x := range vals {
				switch {
				case math.IsNaN(x):
					nan++
				case math.IsInf(x, 0):
					inf++
				}
			}
			if nan+inf > 0 {
				o.Pass, o.Reason = false, fmt.Sprintf("%d NaN and %d Inf of %d values", nan, inf, len(vals))
				o.Mismatched = nan + inf
			}
		}
	}
	rep.Equivalent = false
	rep.Summary = "NOT VERIFIED: ran once without a reference"
	rep.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return rep, nil
}
