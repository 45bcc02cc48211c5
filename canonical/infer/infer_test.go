package infer

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

var writeDoc = flag.Bool("write-doc", false, "write docs/inference.md from TestBackendInference")

// minMatched is the floor of matched outputs among those whose shape does
// not depend on input values (measured; raise it when inference improves).
const minMatched = 1828

// minMatchedWithValues is the floor of matched outputs (all of them) when
// the test's input values are given to Infer.
const minMatchedWithValues = 2126

func repoRoot(t testing.TB) string { return testpaths.RepoRoot(t) }

func backendDir(t testing.TB, folder string) string {
	d := filepath.Join(repoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", folder)
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("ONNX backend tests not found (../shared must sit beside the repository): %v", err)
	}
	return d
}

// valueInputs lists, per op, the inputs whose values (not only types)
// decide the output shape.
var valueInputs = map[string][]int{
	"Reshape": {1}, "Expand": {1}, "Tile": {1}, "Slice": {1, 2, 3, 4}, "Unsqueeze": {1},
	"Squeeze": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2}, "Pad": {1, 3}, "Resize": {2, 3},
	"Upsample": {1}, "TopK": {1}, "Split": {1}, "OneHot": {1}, "ReduceMax": {1}, "ReduceMin": {1},
	"ReduceMean": {1}, "ReduceSum": {1}, "ReduceProd": {1}, "ReduceL1": {1}, "ReduceL2": {1},
	"ReduceLogSum": {1}, "ReduceLogSumExp": {1}, "ReduceSumSquare": {1}, "CenterCropPad": {1},
	"Col2Im": {1, 2}, "AffineGrid": {1}, "MaxUnpool": {2}, "DFT": {1, 2}, "STFT": {1, 3},
	"HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0}, "MelWeightMatrix": {0, 1},
	"SplitToSequence": {1}, "Loop": {0, 1}, "SequenceAt": {1},
}

// valueOps always have a shape that depends on the data.
var valueOps = map[string]bool{
	"NonZero": true, "Unique": true, "NonMaxSuppression": true, "Compress": true, "StringSplit": true,
	"ImageDecoder": true, "StringNormalizer": true, "ConcatFromSequence": true,
}

// valueDependent marks the values of g whose shape depends on the values
// (not only the shapes) of graph inputs. tainted values carry data derived
// from graph inputs.
func valueDependent(g *canonical.Graph) map[*canonical.Value]bool {
	tainted := map[*canonical.Value]bool{}
	vdep := map[*canonical.Value]bool{}
	for _, v := range g.Inputs {
		if v.Const == nil {
			tainted[v] = true
		}
	}
	var walk func(g *canonical.Graph)
	walk = func(g *canonical.Graph) {
		for _, n := range g.Nodes {
			t, d := false, valueOps[n.OpType]
			for _, in := range n.Inputs {
				if in != nil {
					t = t || tainted[in]
					d = d || vdep[in]
				}
			}
			for _, i := range valueInputs[n.OpType] {
				if in := n.Input(i); in != nil && tainted[in] && emptyValue(in.Type) == nil {
					d = true
				}
			}
			for _, in := range n.OuterValues() {
				t = t || tainted[in]
				d = d || vdep[in]
			}
			for _, sg := range n.Subgraphs() {
				for _, v := range sg.Inputs {
					tainted[v] = true
				}
				walk(sg)
				for _, o := range sg.Outputs {
					if o != nil && vdep[o] {
						d = true
					}
				}
			}
			if n.OpType == "If" && tainted[n.Input(0)] {
				// Branches of different shapes: the condition decides.
				subs := n.Subgraphs()
				if len(subs) == 2 {
					for i := range n.Outputs {
						if i < len(subs[0].Outputs) && i < len(subs[1].Outputs) &&
							typeString(subs[0].Outputs[i].Type) != typeString(subs[1].Outputs[i].Type) {
							d = true
						}
					}
				}
			}
			if n.OpType == "Shape" || n.OpType == "Size" {
				t = false
			}
			for _, o := range n.Outputs {
				if o != nil {
					tainted[o] = t
					vdep[o] = d
				}
			}
		}
	}
	walk(g)
	return vdep
}

type outcome struct {
	test, output string
	vdep, ok     bool
	why          string
}

// expectedType reads output_N.pb as the kind declared in the model.
func expectedType(path string, declared *onnxpb.TypeProto) (*onnxpb.TypeProto, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case declared.GetSequenceType() != nil:
		var sp onnxpb.SequenceProto
		if err := proto.Unmarshal(b, &sp); err != nil {
			return nil, err
		}
		var e *onnxpb.TypeProto
		for _, t := range sp.TensorValues {
			e = unify(e, canonical.TensorType(canonical.DataType(t.GetDataType()), t.Dims))
		}
		if e == nil {
			e = stripShape(declared.GetSequenceType().ElemType)
		}
		return seqTP(e), nil
	case declared.GetOptionalType() != nil:
		var op onnxpb.OptionalProto
		if err := proto.Unmarshal(b, &op); err != nil {
			return nil, err
		}
		if t := op.TensorValue; t != nil {
			return optTP(canonical.TensorType(canonical.DataType(t.GetDataType()), t.Dims)), nil
		}
		return declared, nil
	case declared.GetMapType() != nil:
		return declared, nil
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(b, &tp); err != nil {
		return nil, err
	}
	return canonical.TensorType(canonical.DataType(tp.GetDataType()), tp.Dims), nil
}

// matches compares an inferred type with the expected one: element types
// equal and every dim known and equal. For sequences the inferred element
// shape may be unranked or have unknown dims where elements differ.
func matches(got, want *onnxpb.TypeProto) bool {
	if got == nil {
		return false
	}
	if ws := want.GetSequenceType(); ws != nil {
		gs := got.GetSequenceType()
		if gs == nil {
			return false
		}
		gdt, gsh, ok1 := tensorOf(gs.ElemType)
		wdt, wsh, ok2 := tensorOf(ws.ElemType)
		if !ok1 || !ok2 {
			return typeString(gs.ElemType) == typeString(ws.ElemType)
		}
		if gdt != wdt {
			return false
		}
		if !gsh.ranked || !wsh.ranked {
			return true
		}
		m, conflict := mergeShape(gsh, wsh)
		_ = m
		return conflict == ""
	}
	if wo := want.GetOptionalType(); wo != nil {
		goT := got.GetOptionalType()
		return goT != nil && matches(goT.ElemType, wo.ElemType)
	}
	if want.GetMapType() != nil {
		return typeString(got) == typeString(want)
	}
	gdt, gs, ok := tensorOf(got)
	wdt, ws, _ := tensorOf(want)
	if !ok || gdt != wdt || !gs.ranked || gs.rank() != ws.rank() {
		return false
	}
	for i := range gs.dims {
		if !gs.dims[i].Known || gs.dims[i].Value != ws.dims[i].Value {
			return false
		}
	}
	return true
}

// inputValues reads test_data_set_0/input_N.pb for the graph inputs that
// are tensors.
func inputValues(dir string, g *canonical.Graph) (map[string]*canonical.Tensor, error) {
	vals := map[string]*canonical.Tensor{}
	for i, in := range g.Inputs {
		if in.Type.GetTensorType() == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		var tp onnxpb.TensorProto
		if err := proto.Unmarshal(b, &tp); err != nil {
			return nil, err
		}
		mp := &onnxpb.ModelProto{IrVersion: proto.Int64(10), Graph: &onnxpb.GraphProto{Name: proto.String("v"), Initializer: []*onnxpb.TensorProto{&tp}}}
		if tp.Name == nil || tp.GetName() == "" {
			tp.Name = proto.String(in.Name)
		}
		vm, err := canonical.FromProto(mp, "")
		if err != nil {
			return nil, err
		}
		vals[in.Name] = vm.Graph.Initializers[0].Const
	}
	return vals, nil
}

func runBackendCase(t *testing.T, dir string, withValues bool) ([]outcome, error) {
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	g := m.Graph
	declared := make([]*onnxpb.TypeProto, len(g.Outputs))
	for i, o := range g.Outputs {
		declared[i] = o.Type
		o.Type = nil
	}
	for _, v := range g.ValueInfo {
		v.Type = nil
	}
	g.ValueInfo = nil
	var opts Options
	if withValues {
		if opts.InputValues, err = inputValues(dir, g); err != nil {
			return nil, err
		}
	}
	res, err := Infer(m, opts)
	if err != nil {
		return nil, err
	}
	if !withValues {
		// A valid model must not raise issues (conflicts with declared
		// subgraph types, broken shape rules).
		for _, is := range res.Issues {
			t.Errorf("%s: issue: %s", filepath.Base(dir), is)
		}
	}
	if !withValues {
		// The written model must read back valid, and the inferred types
		// must meet the operators' type constraints.
		mp, err := m.ToProto()
		if err != nil {
			return nil, err
		}
		m2, err := canonical.FromProto(mp, dir)
		if err != nil {
			return nil, fmt.Errorf("reading back the inferred model: %w", err)
		}
		for _, p := range canonical.Validate(m2) {
			t.Errorf("%s: after inference: %s", filepath.Base(dir), p.Error())
		}
		for _, p := range check.Check(m2) {
			t.Errorf("%s: after inference: %s", filepath.Base(dir), p)
		}
	}
	vdep := valueDependent(g)
	name := filepath.Base(dir)
	var outs []outcome
	for i, o := range g.Outputs {
		want, err := expectedType(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)), declared[i])
		if err != nil {
			return nil, err
		}
		oc := outcome{test: name, output: o.Name, vdep: vdep[o], ok: matches(o.Type, want)}
		if !oc.ok {
			got := "nothing"
			if o.Type != nil {
				got = typeString(o.Type)
			}
			oc.why = fmt.Sprintf("inferred %s, expected %s", got, typeString(want))
			if p, _ := o.Producer(); p != nil {
				oc.why = fmt.Sprintf("%s: %s", p.OpType, oc.why)
			}
		}
		outs = append(outs, oc)
	}
	return outs, nil
}

func TestBackendInference(t *testing.T) {
	root := backendDir(t, "node")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var all, withVals []outcome
	for _, e := range entries {
		outs, err := runBackendCase(t, filepath.Join(root, e.Name()), false)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		all = append(all, outs...)
		// Again with the input values known: value-dependent shapes are
		// then resolved by constant evaluation.
		outs, err = runBackendCase(t, filepath.Join(root, e.Name()), true)
		if err != nil {
			t.Errorf("%s (with input values): %v", e.Name(), err)
			continue
		}
		withVals = append(withVals, outs...)
	}
	valMatched := 0
	var valMiss []outcome
	for _, o := range withVals {
		if o.ok {
			valMatched++
		} else {
			valMiss = append(valMiss, o)
		}
	}
	t.Logf("with the test's input values given as Options.InputValues: %d of %d outputs matched", valMatched, len(withVals))
	if valMatched < minMatchedWithValues {
		t.Errorf("with input values: matched %d outputs, floor is %d", valMatched, minMatchedWithValues)
	}
	total, indep, matched, matchedDep := len(all), 0, 0, 0
	for _, o := range all {
		if !o.vdep {
			indep++
			if o.ok {
				matched++
			}
		} else if o.ok {
			matchedDep++
		}
	}
	t.Logf("outputs: %d total, %d whose shape does not depend on input values, %d of those matched (%.2f%%); %d value-dependent outputs, %d of them matched anyway",
		total, indep, matched, 100*float64(matched)/float64(max(indep, 1)), total-indep, matchedDep)
	if matched < minMatched {
		t.Errorf("matched %d outputs, floor is %d", matched, minMatched)
	}
	if total < 1900 {
		t.Errorf("only %d outputs found", total)
	}
	if *writeDoc {
		if err := writeInferenceDoc(t, all, valMiss, total, indep, matched, valMatched); err != nil {
			t.Fatal(err)
		}
	}
}

func writeInferenceDoc(t *testing.T, all, valMiss []outcome, total, indep, matched, valMatched int) error {
	var b strings.Builder
	b.WriteString("# Type and shape inference: backend-test coverage\n\n")
	b.WriteString("Generated by `go test ./canonical/infer -run TestBackendInference -args -write-doc`.\n\n")
	b.WriteString("Each node test of `onnx-v1.22/backend-tests/node` is loaded, its graph outputs' types and\n")
	b.WriteString("value_info are removed, `infer.Infer` runs from the inputs' types (and initializers and\n")
	b.WriteString("Constant values), and each output's element type and dims are compared with\n")
	b.WriteString("`test_data_set_0/output_N.pb`. A symbolic or unknown dim counts as a miss.\n\n")
	b.WriteString("Library: `infer.Infer(model, infer.Options{})` sets `Value.Type` on every value it can and\n")
	b.WriteString("lists them in `Graph.ValueInfo`; `Options.InputValues` supplies known input values,\n")
	b.WriteString("`Options.SymbolicNames` names new unknown dims `unk__N`, `Options.Strict` turns\n")
	b.WriteString("conflicts with declared types into errors. Command line: `onnxconv infer MODEL -o OUT`.\n\n")
	fmt.Fprintf(&b, "- outputs: %d\n- outputs whose shape does not depend on input values: %d\n- matched among those: %d (%.2f%%)\n\n",
		total, indep, matched, 100*float64(matched)/float64(max(indep, 1)))
	b.WriteString("An output is value-dependent when it is (transitively) computed by an op whose output\n")
	b.WriteString("shape depends on data (NonZero, Unique, NonMaxSuppression, Compress, StringSplit,\n")
	b.WriteString("ImageDecoder, StringNormalizer, ConcatFromSequence) or by an op whose shape input\n")
	b.WriteString("(Reshape shape, Expand shape, Slice starts/ends/axes/steps, Tile repeats, Pad pads,\n")
	b.WriteString("Resize scales/sizes, TopK k, Split split, Reduce axes, Range bounds, Loop trip count,\n")
	b.WriteString("...) is fed from a graph input rather than a constant.\n\n")
	b.WriteString("## Outputs whose shape does not depend on input values and that are not inferred\n\n")
	var miss, dep []outcome
	for _, o := range all {
		switch {
		case !o.vdep && !o.ok:
			miss = append(miss, o)
		case o.vdep && !o.ok:
			dep = append(dep, o)
		}
	}
	sort.Slice(miss, func(i, j int) bool { return miss[i].test < miss[j].test })
	if len(miss) == 0 {
		b.WriteString("None.\n")
	}
	for _, o := range miss {
		fmt.Fprintf(&b, "- `%s` output `%s`: %s\n", o.test, o.output, o.why)
	}
	fmt.Fprintf(&b, "\n## With input values known\n\nWhen the test's input values are passed as `Options.InputValues`, %d of %d outputs match.\nThe others:\n\n", valMatched, total)
	for _, o := range valMiss {
		fmt.Fprintf(&b, "- `%s` output `%s`: %s\n", o.test, o.output, o.why)
	}
	b.WriteString("\n## Value-dependent outputs not inferred from types alone (expected)\n\n")
	for _, o := range dep {
		fmt.Fprintf(&b, "- `%s` output `%s`: %s\n", o.test, o.output, o.why)
	}
	path := filepath.Join(repoRoot(t), "docs", "inference.md")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// TestOtherBackendFolders runs inference over the simple and PyTorch
// backend tests (whole networks), from the inputs' types only.
func TestOtherBackendFolders(t *testing.T) {
	floors := map[string]int{"simple": 14, "pytorch-converted": 82, "pytorch-operator": 38}
	for _, folder := range []string{"simple", "pytorch-converted", "pytorch-operator"} {
		root := backendDir(t, folder)
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		total, indep, ok := 0, 0, 0
		var misses []string
		for _, e := range entries {
			outs, err := runBackendCase(t, filepath.Join(root, e.Name()), false)
			if err != nil {
				t.Errorf("%s/%s: %v", folder, e.Name(), err)
				continue
			}
			for _, o := range outs {
				total++
				if !o.vdep {
					indep++
				}
				switch {
				case o.ok && !o.vdep:
					ok++
				case !o.ok:
					misses = append(misses, fmt.Sprintf("%s (value-dependent: %v): %s", o.test, o.vdep, o.why))
				}
			}
		}
		t.Logf("%s: %d outputs, %d whose shape does not depend on input values, %d of those matched; misses: %v", folder, total, indep, ok, misses)
		if ok < floors[folder] {
			t.Errorf("%s: matched %d, floor %d", folder, ok, floors[folder])
		}
	}
}
