//go:build cgo

package ort

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// TestKernelTableMatchesORT checks the onnxruntime-1.30 profile's CPU
// kernel table (exporters/profiles, generated from ONNX Runtime's
// published docs/OperatorKernels.md) against the installed ONNX Runtime
// 1.30: for a sample of operators, opsets and element types that the ONNX
// schema allows, a one-node model loads exactly when the table says a CPU
// kernel implements the type, and otherwise ONNX Runtime refuses it with
// "Could not find an implementation". Negative entries (Where on bool,
// Add-13 on int8, Max on int8 ...) are part of the sample.
func TestKernelTableMatchesORT(t *testing.T) {
	rt := openForTest(t)
	if v := rt.Version(); !strings.HasPrefix(v, "1.30.") {
		t.Fatalf("the table is checked against ONNX Runtime 1.30; this is %s", v)
	}
	p, err := profiles.Get("onnxruntime-1.30")
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.CPUKernels()
	if err != nil || k == nil {
		t.Fatalf("onnxruntime-1.30 has no CPU kernel table: %v", err)
	}
	ops := []string{"Abs", "Neg", "Relu", "Sign", "Sqrt", "Exp", "Floor", "Sigmoid", "Not", "Identity",
		"Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater", "And", "Where", "Clip",
		"ReduceMax", "ReduceSum", "ArgMax", "Transpose", "Concat", "MatMul", "Softmax",
		"ReduceMin", "ReduceProd", "ReduceMean", "Mean", "Sum", "Reciprocal", "Round", "Erf", "Tanh", "Cos", "Log",
		"LessOrEqual", "GreaterOrEqual", "Or", "Xor", "Tile", "Expand", "TopK", "Trilu", "Flatten", "Reshape"}
	types := []canonical.DataType{canonical.Bool, canonical.Int8, canonical.Uint8, canonical.Int16, canonical.Int32,
		canonical.Int64, canonical.Float16, canonical.Float, canonical.Double}
	dir := t.TempDir()
	var checked, refused int
	var bad, newer, refusedList []string
	done := map[string]bool{}
	for _, op := range ops {
		for _, ver := range []int{9, 11, 13, 14, 17, 21} {
			s, ok := onnxspec.Lookup("", op, ver)
			if !ok || s.SinceVersion != lastSince(op, ver) {
				continue
			}
			for _, dt := range types {
				m, param, ok := oneNode(s, ver, dt)
				if !ok {
					continue
				}
				if _, found := k.Lookup("", op, s.SinceVersion); !found || done[fmt.Sprint(op, s.SinceVersion, dt)] {
					continue
				}
				done[fmt.Sprint(op, s.SinceVersion, dt)] = true
				want, allowed := k.Implements("", op, s.SinceVersion, param, dt)
				path := filepath.Join(dir, fmt.Sprintf("%s_%d_%s.onnx", op, ver, dt))
				if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
					t.Fatal(err)
				}
				sess, err := rt.NewSession(path, WithoutOptimization())
				got := err == nil
				if sess != nil {
					_ = sess.Close()
				}
				checked++
				if !got {
					refused++
					refusedList = append(refusedList, fmt.Sprintf("%s-%d(%s)", op, s.SinceVersion, strings.ToLower(dt.String())))
				}
				switch {
				case got == want:
				case want:
					bad = append(bad, fmt.Sprintf("%s-%d %s=%s: the table has a kernel, ONNX Runtime refuses: %v", op, s.SinceVersion, param, dt, err))
				default:
					// The table is a lower bound for 1.30 (see the
					// profile's notes): a kernel added since is logged.
					newer = append(newer, fmt.Sprintf("%s-%d %s=%s (table: %s)", op, s.SinceVersion, param, strings.ToLower(dt.String()), allowed))
				}
				if !got && want == got && !strings.Contains(err.Error(), "Could not find an implementation") {
					bad = append(bad, fmt.Sprintf("%s-%d %s=%s: refused for another reason: %v", op, s.SinceVersion, param, dt, err))
				}
			}
		}
	}
	t.Logf("%d one-node models in ONNX Runtime %s: %d load, %d refused for want of a CPU kernel: %s", checked, rt.Version(), checked-refused, refused, strings.Join(refusedList, " "))
	t.Logf("%d load although the table (a lower bound for 1.30) has no kernel for them: %s", len(newer), strings.Join(newer, "; "))
	for _, b := range bad {
		t.Error(b)
	}
	if len(newer) > checked/50 {
		t.Errorf("the table misses %d of %d kernels that ONNX Runtime 1.30 has: regenerate it from a newer OperatorKernels.md", len(newer), checked)
	}
	if checked < 500 || refused < 25 {
		t.Errorf("the sample is too small: %d models, %d refused", checked, refused)
	}
	for _, c := range []struct {
		op   string
		ver  int
		dt   canonical.DataType
		want bool
	}{{"Where", 17, canonical.Bool, false}, {"Where", 17, canonical.Float, true}, {"Add", 13, canonical.Int8, false}, {"Add", 14, canonical.Int8, true}} {
		s, _ := onnxspec.Lookup("", c.op, c.ver)
		vars, _ := k.Lookup("", c.op, s.SinceVersion)
		if got := vars["T"].Has(c.dt); got != c.want {
			t.Errorf("table: %s-%d T=%s: %v, want %v", c.op, s.SinceVersion, c.dt, got, c.want)
		}
	}
}

// lastSince is the since-version of op in force at opset ver.
func lastSince(op string, ver int) int {
	s, ok := onnxspec.Lookup("", op, ver)
	if !ok {
		return 0
	}
	return s.SinceVersion
}

// oneNode builds a model of one node of schema s at opset ver whose first
// type variable is dt (every input of that variable has dt; other inputs
// take their fixed type). ok is false when the schema does not allow dt or
// the node needs inputs of another variable. The variable is the first
// one of the inputs that allows more than one type.
func oneNode(s *onnxspec.Schema, ver int, dt canonical.DataType) (*canonical.Model, string, bool) {
	tname := "tensor(" + strings.ToLower(dt.String()) + ")"
	allowed := map[string][]string{}
	for _, tc := range s.TypeConstraints {
		allowed[tc.Param] = tc.Allowed
	}
	var param string
	for _, in := range s.Inputs {
		if len(allowed[in.TypeStr]) > 1 {
			param = in.TypeStr
			break
		}
	}
	if param == "" || !contains(allowed[param], tname) {
		return nil, "", false
	}
	typeOf := func(ts string) (canonical.DataType, bool) {
		if ts == param {
			return dt, true
		}
		if a, ok := allowed[ts]; ok {
			if len(a) != 1 {
				return 0, false
			}
			ts = a[0]
		}
		for _, c := range []canonical.DataType{canonical.Bool, canonical.Int64, canonical.Float} {
			if ts == "tensor("+strings.ToLower(c.String())+")" {
				return c, true
			}
		}
		return 0, false
	}
	m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("one")}
	m.SetOpset("", int64(ver))
	shape := []int64{2, 3}
	var ins []*canonical.Value
	for i, in := range s.Inputs {
		if in.Option == onnxspec.Optional {
			break
		}
		it, ok := typeOf(in.TypeStr)
		if !ok {
			return nil, "", false
		}
		sh := shape
		if in.TypeStr == "tensor(int64)" { // shapes, repeats, K: 1-D
			sh = []int64{2}
			if s.Name == "TopK" {
				sh = []int64{1}
			}
		}
		v, err := m.Graph.AddInput(fmt.Sprintf("x%d", i), canonical.TensorType(it, sh))
		if err != nil {
			return nil, "", false
		}
		ins = append(ins, v)
	}
	var attrs []*canonical.Attribute
	if s.Name == "Transpose" {
		attrs = append(attrs, canonical.IntsAttr("perm", 1, 0))
	}
	if s.Name == "TopK" && s.SinceVersion == 1 {
		attrs = append(attrs, canonical.IntAttr("k", 1))
	}
	if s.Name == "Concat" {
		attrs = append(attrs, canonical.IntAttr("axis", 0))
	}
	if s.Name == "MatMul" {
		in1 := m.Graph.Inputs[1]
		in1.Type = canonical.TensorType(dt, []int64{3, 2})
	}
	outs := []string{}
	for i := range s.Outputs {
		if s.Outputs[i].Option == onnxspec.Optional {
			break
		}
		outs = append(outs, fmt.Sprintf("y%d", i))
	}
	n, err := m.Graph.AddNode("n", "", s.Name, ins, outs, attrs...)
	if err != nil {
		return nil, "", false
	}
	for i, o := range n.Outputs {
		ot, ok := typeOf(s.Outputs[i].TypeStr)
		if !ok {
			return nil, "", false
		}
		o.Type = canonical.TensorType(ot, nil)
		m.Graph.Outputs = append(m.Graph.Outputs, o)
	}
	return m, param, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
