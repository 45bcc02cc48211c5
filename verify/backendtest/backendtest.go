// Package backendtest runs ONNX backend-test cases: a folder holding
// model.onnx and test_data_set_*/input_N.pb, output_N.pb. It loads the
// case, runs it with a Runner and compares the outputs the way the ONNX
// backend test runner does: floating point with rtol 1e-3 and atol 1e-7
// (|actual-expected| <= atol + rtol*|expected|), NaN equal to NaN;
// integers, booleans and strings exactly; shapes and types exactly.
package backendtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
)

// Runner runs one model on values (tensors, sequences, optionals) in
// graph-input order and returns the graph outputs in order. The executor
// satisfies it.
type Runner interface {
	RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error)
}

// NewRunner prepares a Runner for a model.
type NewRunner func(m *canonical.Model) (Runner, error)

// Default tolerances of the ONNX backend test runner.
const (
	DefaultRTol = 1e-3
	DefaultATol = 1e-7
)

// Case is one backend-test folder.
type Case struct {
	Name     string
	Dir      string
	Model    *canonical.Model
	DataSets []DataSet
	RTol     float64
	ATol     float64
}

// Close releases the model's memory-mapped data.
func (c *Case) Close() error {
	if c.Model == nil {
		return nil
	}
	return c.Model.Close()
}

// DataSet is one test_data_set_N folder.
type DataSet struct {
	Name    string
	Inputs  []*executor.Value
	Outputs []*executor.Value
}

// Status of a case.
type Status string

// Statuses.
const (
	Pass  Status = "pass"
	Fail  Status = "fail"  // ran, wrong numbers
	Error Status = "error" // could not load, prepare or run
	Skip  Status = "skip"
)

// Result is the outcome of one case.
type Result struct {
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	Millis int64  `json:"ms"`
}

// IsCase reports whether dir holds a backend-test case.
func IsCase(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "model.onnx"))
	return err == nil
}

// FindCases expands each folder into the cases it holds (itself when it is
// a case, otherwise its immediate subfolders that are cases), sorted by
// name within each folder.
func FindCases(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if IsCase(d) {
			out = append(out, d)
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("backendtest: %w", err)
		}
		var found []string
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			if e.IsDir() && IsCase(p) {
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("backendtest: %s holds no backend-test case (no model.onnx)", d)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Load reads a case folder.
func Load(dir string) (*Case, error) {
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("backendtest: %w", err)
	}
	c := &Case{Name: filepath.Base(dir), Dir: dir, Model: m}
	c.RTol, c.ATol = tolerances(c.Name)
	ok := false
	defer func() {
		if !ok {
			m.Close()
		}
	}()
	var ins []*canonical.Value
	init := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		init[v] = true
	}
	for _, v := range m.Graph.Inputs {
		if !init[v] {
			ins = append(ins, v)
		}
	}
	if c.DataSets, err = LoadDataSets(dir, ins, m.Graph.Outputs); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// LoadDataSets reads the test_data_set_* folders of dir: input_N.pb of
// the graph inputs ins and output_N.pb of the graph outputs outs, each as
// its declared type tells (tensor, sequence or optional), in name order.
func LoadDataSets(dir string, ins, outs []*canonical.Value) ([]DataSet, error) {
	sets, err := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if err != nil {
		return nil, fmt.Errorf("backendtest: %w", err)
	}
	sort.Strings(sets)
	var out []DataSet
	for _, s := range sets {
		ds := DataSet{Name: filepath.Base(s)}
		for _, side := range []struct {
			prefix string
			vals   []*canonical.Value
			into   *[]*executor.Value
		}{{"input_", ins, &ds.Inputs}, {"output_", outs, &ds.Outputs}} {
			for i := 0; ; i++ {
				p := filepath.Join(s, side.prefix+strconv.Itoa(i)+".pb")
				if _, err := os.Stat(p); err != nil {
					break
				}
				if i >= len(side.vals) {
					return nil, fmt.Errorf("backendtest: %s: more %sN.pb files than graph values (%d)", s, side.prefix, len(side.vals))
				}
				v, err := ReadValue(p, side.vals[i].Type)
				if err != nil {
					return nil, fmt.Errorf("backendtest: %w", err)
				}
				*side.into = append(*side.into, v)
			}
		}
		out = append(out, ds)
	}
	return out, nil
}

// ReadValue reads a .pb file holding a TensorProto, SequenceProto or
// OptionalProto, as told by the declared type (a tensor when unknown).
func ReadValue(path string, tp *onnxpb.TypeProto) (*executor.Value, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case tp.GetSequenceType() != nil:
		sp := &onnxpb.SequenceProto{}
		if err := proto.Unmarshal(b, sp); err != nil {
			return nil, fmt.Errorf("%s: decoding SequenceProto: %w", path, err)
		}
		v, err := seqValue(sp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return v, nil
	case tp.GetOptionalType() != nil:
		op := &onnxpb.OptionalProto{}
		if err := proto.Unmarshal(b, op); err != nil {
			return nil, fmt.Errorf("%s: decoding OptionalProto: %w", path, err)
		}
		switch {
		case op.GetTensorValue() != nil:
			t, err := canonical.TensorFromProto(op.GetTensorValue())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return executor.TensorValue(t), nil
		case op.GetSequenceValue() != nil:
			v, err := seqValue(op.GetSequenceValue())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return v, nil
		}
		et := canonical.Undefined
		if inner := tp.GetOptionalType().GetElemType(); inner.GetTensorType() != nil {
			et = canonical.DataType(inner.GetTensorType().GetElemType())
		}
		return &executor.Value{None: true, ElemType: et}, nil
	}
	t, err := canonical.ReadTensorFile(path)
	if err != nil {
		return nil, err
	}
	return executor.TensorValue(t), nil
}

func seqValue(sp *onnxpb.SequenceProto) (*executor.Value, error) {
	v := &executor.Value{IsSequence: true, Sequence: []*canonical.Tensor{}}
	for _, tp := range sp.GetTensorValues() {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, err
		}
		v.ElemType = t.DataType
		v.Sequence = append(v.Sequence, t)
	}
	if len(sp.GetSequenceValues()) > 0 || len(sp.GetMapValues()) > 0 {
		return nil, fmt.Errorf("nested sequences and maps are not supported")
	}
	return v, nil
}

// Run runs every data set of c and compares.
func Run(ctx context.Context, c *Case, newRunner NewRunner) error {
	r, err := newRunner(c.Model)
	if err != nil {
		return err
	}
	if cl, ok := r.(interface{ Close() error }); ok {
		defer cl.Close()
	}
	for _, ds := range c.DataSets {
		outs, err := r.RunValues(ctx, ds.Inputs)
		if err != nil {
			return fmt.Errorf("%s: %w", ds.Name, err)
		}
		if len(outs) < len(ds.Outputs) {
			return &MismatchError{Msg: fmt.Sprintf("%s: %d outputs, expected %d", ds.Name, len(outs), len(ds.Outputs))}
		}
		for i, want := range ds.Outputs {
			if err := CompareValues(outs[i], want, c.RTol, c.ATol); err != nil {
				return &MismatchError{Msg: fmt.Sprintf("%s: output %d (%s): %v", ds.Name, i, c.Model.Graph.Outputs[i].Name, err)}
			}
		}
	}
	return nil
}

// MismatchError reports outputs that differ from the expected ones.
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }

// CompareValues compares an actual value with the expected one.
func CompareValues(got, want *executor.Value, rtol, atol float64) error {
	switch {
	case want.None:
		if !got.None {
			return fmt.Errorf("expected an empty optional")
		}
		return nil
	case want.IsSequence:
		if !got.IsSequence {
			return fmt.Errorf("expected a sequence")
		}
		if len(got.Sequence) != len(want.Sequence) {
			return fmt.Errorf("sequence has %d elements, expected %d", len(got.Sequence), len(want.Sequence))
		}
		for i := range want.Sequence {
			if err := CompareTensors(got.Sequence[i], want.Sequence[i], rtol, atol); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	if got.Tensor == nil {
		return fmt.Errorf("expected a tensor")
	}
	return CompareTensors(got.Tensor, want.Tensor, rtol, atol)
}

// CompareTensors compares two tensors: same type and shape, floats within
// tolerance (NaN equal to NaN), everything else exactly.
func CompareTensors(got, want *canonical.Tensor, rtol, atol float64) error {
	if got.DataType != want.DataType {
		return fmt.Errorf("type %v, expected %v", got.DataType, want.DataType)
	}
	if len(got.Dims) != len(want.Dims) {
		return fmt.Errorf("shape %v, expected %v", got.Dims, want.Dims)
	}
	for i := range got.Dims {
		if got.Dims[i] != want.Dims[i] {
			return fmt.Errorf("shape %v, expected %v", got.Dims, want.Dims)
		}
	}
	if want.DataType == canonical.String {
		a, err := got.Strings()
		if err != nil {
			return err
		}
		b, err := want.Strings()
		if err != nil {
			return err
		}
		for i := range b {
			if string(a[i]) != string(b[i]) {
				return fmt.Errorf("element %d is %q, expected %q", i, a[i], b[i])
			}
		}
		return nil
	}
	a, err := got.Float64s()
	if err != nil {
		return err
	}
	b, err := want.Float64s()
	if err != nil {
		return err
	}
	exact := !canonical.IsFloatType(want.DataType)
	bad, worst, worstI := 0, 0.0, -1
	for i := range b {
		x, y := a[i], b[i]
		if exact {
			if x != y {
				bad++
				if worstI < 0 {
					worstI = i
				}
			}
			continue
		}
		if math.IsNaN(y) {
			if !math.IsNaN(x) {
				bad++
				if worstI < 0 {
					worstI = i
				}
			}
			continue
		}
		if math.IsInf(y, 0) {
			if x != y {
				bad++
				worstI = i
			}
			continue
		}
		d := math.Abs(x - y)
		if math.IsNaN(x) || d > atol+rtol*math.Abs(y) {
			bad++
			if math.IsNaN(d) || d > worst || worstI < 0 {
				worst, worstI = d, i
			}
		}
	}
	if bad > 0 {
		exp := "exactly"
		if !exact {
			exp = fmt.Sprintf("rtol %g, atol %g", rtol, atol)
		}
		return fmt.Errorf("%d of %d elements differ (%s); e.g. element %d is %v, expected %v", bad, len(b), exp, worstI, a[worstI], b[worstI])
	}
	return nil
}

// tolerances returns the rtol and atol of a case: the defaults, or the
// per-test overrides of the ONNX backend runners.
func tolerances(name string) (float64, float64) {
	rtol, atol := DefaultRTol, DefaultATol
	for prefix, o := range overrides {
		if strings.HasPrefix(name, prefix) {
			if o[0] > 0 {
				rtol = o[0]
			}
			if o[1] > 0 {
				atol = o[1]
			}
		}
	}
	return rtol, atol
}

// overrides holds {rtol, atol} per test-name prefix (0 keeps the default).
// Models exported from PyTorch are compared with atol 1e-5 by the ONNX
// runner's model tests; a few node tests compute in reduced precision.
var overrides = map[string][2]float64{}
