package verify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

// Models whose graph inputs or outputs are sequences or optionals (the
// ONNX Sequence* and Optional* ops) are compared value by value: the
// samples are executor.Values (Options.Values, Side.ExpectedValues), a
// sequence output is compared element by element (reported as NAME[i]),
// and a sequence of another length, or a None against a value, fails its
// output.

// ValueRunner is a Runner for models whose inputs or outputs are not all
// tensors (the executor is one).
type ValueRunner interface {
	RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error)
}

// HasValues tells whether a graph input or output of m is a sequence or an
// optional.
func HasValues(m *canonical.Model) bool {
	if m == nil || m.Graph == nil {
		return false
	}
	for _, vs := range [][]*canonical.Value{GraphInputs(m), m.Graph.Outputs} {
		for _, v := range vs {
			if v != nil && (v.Type.GetSequenceType() != nil || v.Type.GetOptionalType() != nil) {
				return true
			}
		}
	}
	return false
}

// valueRunnerFor returns s's runner as a ValueRunner, or a built-in
// executor for s.Model.
func valueRunnerFor(s *Side, backend string, threads int) (ValueRunner, func(), error) {
	if s.Runner != nil {
		vr, ok := s.Runner.(ValueRunner)
		if !ok {
			return nil, nil, fmt.Errorf("its runtime takes and gives tensors only, and the model takes or gives sequences or optionals")
		}
		return vr, func() {}, nil
	}
	ex, err := executor.New(s.Model, executor.Options{Backend: backend, Threads: threads})
	if err != nil {
		return nil, nil, err
	}
	return ex, func() { _ = ex.Close() }, nil
}

// describeValue says what a value is, for reports: "float[2 3]",
// "sequence of 3 float", "None".
func describeValue(v *executor.Value) string {
	switch {
	case v == nil || v.None:
		return "None"
	case v.IsSequence:
		return fmt.Sprintf("sequence of %d %s", len(v.Sequence), canonical.ElemTypeName(v.ElemType))
	case v.Tensor == nil:
		return "nothing"
	}
	return fmt.Sprintf("%s%v", canonical.ElemTypeName(v.Tensor.DataType), v.Tensor.Dims)
}

// compareValues is Compare for models with sequence or optional inputs or
// outputs.
func compareValues(ctx context.Context, a, b *Side, opts Options, rep *Report, start time.Time) (*Report, error) {
	ra, closeA, err := valueRunnerFor(a, opts.Backend, opts.Threads)
	if err != nil {
		return nil, fmt.Errorf("verify: reference %s: %w", a.Name, err)
	}
	defer closeA()
	var rb ValueRunner
	expected := b.ExpectedValues
	if expected == nil {
		if b.Model == nil {
			return nil, fmt.Errorf("verify: candidate %s: the model takes or gives sequences or optionals; stored outputs must be read as values", b.Name)
		}
		var closeB func()
		if rb, closeB, err = valueRunnerFor(b, opts.Backend, opts.Threads); err != nil {
			return nil, fmt.Errorf("verify: candidate %s: %w", b.Name, err)
		}
		defer closeB()
	}
	samples := opts.Values
	inA := GraphInputs(a.Model)
	if samples == nil {
		return nil, fmt.Errorf("verify: comparing %s value by value needs its input values", a.Name)
	}
	if expected != nil && len(expected) != len(samples) {
		return nil, fmt.Errorf("verify: %d input samples but %d sets of stored outputs in %s", len(samples), len(expected), b.Name)
	}
	for si, s := range samples {
		if len(s) != len(inA) {
			return nil, fmt.Errorf("verify: sample %d has %d inputs, %s takes %d", si, len(s), a.Name, len(inA))
		}
	}
	rep.Samples = len(samples)
	if rep.Options.InputSource == "" {
		rep.Options.InputSource = "given"
	}
	for i, v := range inA {
		info := InputInfo{Name: v.Name, DType: describeValue(samples[0][i]), Shape: []int64{}}
		if t := samples[0][i].Tensor; t != nil && !samples[0][i].IsSequence {
			info.DType, info.Shape = canonical.ElemTypeName(t.DataType), nonNil(t.Dims)
		}
		rep.Inputs = append(rep.Inputs, info)
	}
	var mapB []int
	if expected == nil {
		if mapB, err = matchInputs(inA, GraphInputs(b.Model), opts.ByOrder); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	outA := names(a.Model.Graph.Outputs)
	outB := outA
	if b.Model != nil {
		outB = names(b.Model.Graph.Outputs)
	}
	pairs, unmatched := matchOutputs(outA, outB, opts.ByOrder)
	if unmatched != nil {
		rep.Unmatched = unmatched
	}
	// One result per output (its structure) and one accumulator per
	// compared tensor (NAME, or NAME[i] for a sequence's elements), in the
	// order first met.
	structure := make([]*OutputResult, len(pairs))
	accs := map[string]*accumulator{}
	var order []string
	for si, in := range samples {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		ya, err := ra.RunValues(ctx, in)
		if err != nil {
			return nil, sideErr(false, a.Name, si, err)
		}
		var yb []*executor.Value
		if expected != nil {
			yb = expected[si]
		} else {
			inB := make([]*executor.Value, len(mapB))
			for i, j := range mapB {
				inB[i] = in[j]
			}
			if yb, err = rb.RunValues(ctx, inB); err != nil {
				return nil, sideErr(true, b.Name, si, err)
			}
		}
		if err := checkCounts(a.Name, b.Name, len(ya), len(yb), outA, pairs); err != nil {
			return nil, err
		}
		for pi, p := range pairs {
			va, vb := ya[p.a], yb[p.b]
			if structure[pi] == nil {
				structure[pi] = &OutputResult{Name: outA[p.a], BName: outB[p.b], Kind: "value", DType: describeValue(va), BDType: describeValue(vb), Pass: true, Shape: []int64{}, BShape: []int64{}}
			}
			if vb == nil || va == nil {
				structure[pi].Pass, structure[pi].Reason = false, fmt.Sprintf("sample %d: %s (A) vs %s (B)", si, describeValue(va), describeValue(vb))
				continue
			}
			noneA, noneB := va.None, vb.None
			seqA, seqB := va.IsSequence, vb.IsSequence
			if noneA != noneB || seqA != seqB || (seqA && len(va.Sequence) != len(vb.Sequence)) {
				if structure[pi].Pass {
					structure[pi].Pass, structure[pi].Reason = false, fmt.Sprintf("sample %d: %s (A) vs %s (B)", si, describeValue(va), describeValue(vb))
				}
				continue
			}
			if noneA {
				continue
			}
			ta, tb := []*canonical.Tensor{va.Tensor}, []*canonical.Tensor{vb.Tensor}
			keys := []string{outA[p.a]}
			if seqA {
				ta, tb, keys = va.Sequence, vb.Sequence, nil
				for i := range ta {
					keys = append(keys, outA[p.a]+"["+strconv.Itoa(i)+"]")
				}
			}
			for i, key := range keys {
				acc := accs[key]
				if acc == nil {
					res := &OutputResult{Name: key, BName: key, Pass: true}
					acc = newAccumulator(res, opts.toleranceFor(ta[i].DataType, tb[i].DataType), len(samples))
					accs[key] = acc
					order = append(order, key)
				}
				if err := acc.add(ta[i], tb[i]); err != nil {
					return nil, fmt.Errorf("verify: sample %d: %w", si, err)
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress(si+1, len(samples))
		}
	}
	rep.Equivalent = len(unmatched) == 0 && len(pairs) > 0
	for _, s := range structure {
		if s != nil && !s.Pass {
			rep.Outputs = append(rep.Outputs, s)
			rep.Equivalent = false
		}
	}
	for _, key := range order {
		acc := accs[key]
		acc.finish()
		rep.Outputs = append(rep.Outputs, acc.res)
		if !acc.res.Pass {
			rep.Equivalent = false
		}
	}
	if len(order) == 0 {
		// Every output was None on both sides: the structure is the result.
		for _, s := range structure {
			if s != nil && s.Pass {
				rep.Outputs = append(rep.Outputs, s)
			}
		}
	}
	if opts.Bisect {
		rep.Notes = append(rep.Notes, "bisection compares tensors; this model takes or gives sequences or optionals")
	}
	if opts.Map {
		rep.Notes = append(rep.Notes, "the error map compares tensors; this model takes or gives sequences or optionals")
	}
	rep.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	rep.Summary = rep.summary()
	return rep, nil
}

// GeneratedSequenceLength is the number of tensors in a generated sequence
// input.
const GeneratedSequenceLength = 3

// GenerateValues makes one sample for a model whose graph inputs may be
// sequences or optionals (HasValues), deterministically from opts.Seed and
// sample: a tensor input as GenerateInputs makes it; a sequence input
// GeneratedSequenceLength tensors of its element type (each generated as
// an input of that type named NAME[i]: an element of unknown shape is a
// run of 64 values); an optional input its value, present (a tensor, or a
// sequence as above).
func GenerateValues(m *canonical.Model, opts GenOptions, sample int) ([]*executor.Value, error) {
	ins := GraphInputs(m)
	out := make([]*executor.Value, len(ins))
	for i, v := range ins {
		rng := rand.New(rand.NewPCG(opts.Seed, uint64(sample)<<20|uint64(i)))
		tp := v.Type
		if o := tp.GetOptionalType(); o != nil {
			tp = o.GetElemType()
		}
		if tp.GetTensorType() != nil {
			gv := v
			if tp != v.Type {
				// The value of an optional: a tensor of its type.
				gv = &canonical.Value{Name: v.Name, Type: tp}
			}
			t, err := genInput(gv, opts, rng)
			if err != nil {
				return nil, err
			}
			out[i] = executor.TensorValue(t)
			continue
		}
		elem := tp.GetSequenceType().GetElemType()
		if elem.GetTensorType() == nil {
			return nil, fmt.Errorf("input %q is %s, which cannot be generated (sequences and optionals of tensors can); pass its values with --inputs", v.Name, canonical.TypeString(v.Type))
		}
		dt, _, _, _ := canonical.TensorTypeOf(elem)
		val := &executor.Value{IsSequence: true, ElemType: dt, Sequence: []*canonical.Tensor{}}
		for j := range GeneratedSequenceLength {
			t, err := genInput(&canonical.Value{Name: fmt.Sprintf("%s[%d]", v.Name, j), Type: elem}, opts, rng)
			if err != nil {
				return nil, err
			}
			val.Sequence = append(val.Sequence, t)
		}
		out[i] = val
	}
	return out, nil
}
