package ortnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
)

// Sequences and optionals at the graph's inputs and outputs: onnxruntime-node
// passes tensors only, so ONNX Runtime runs copies of the model whose
// graph inputs and outputs are tensors, built for each sample:
//
//   - a sequence input of n tensors becomes n tensor inputs and a
//     SequenceConstruct (SequenceEmpty for none); an optional input a
//     tensor input (or those of its sequence) and an Optional node, or an
//     Optional with no input and its type for a None;
//   - an output is learnt in rounds, each a copy run on the same inputs:
//     an optional gives OptionalHasElement first, then (when it has one)
//     its element; a sequence gives SequenceLength first, then its n
//     elements through SequenceAt.
//
// A model whose outputs are all known after the first round runs once;
// one with sequence or optional outputs two or three times (the model is
// deterministic: a model that draws random numbers is not run this way).
// Each copy is loaded once per signature (the sequences' lengths and the
// optionals' presence) and serves every sample of that signature. Maps and
// sequences of sequences or maps are refused (a *RunError of kind "type").

// valueKind is what a graph input or output holds.
type valueKind int

const (
	kindTensor valueKind = iota
	kindSeq
	kindOpt    // optional(tensor)
	kindOptSeq // optional(sequence(tensor))
)

// valueKindOf classifies tp; elem is the tensor type of the tensor, or of
// the sequence's elements.
func valueKindOf(tp *onnxpb.TypeProto) (valueKind, *onnxpb.TypeProto, bool) {
	switch {
	case tp.GetTensorType() != nil:
		return kindTensor, tp, true
	case tp.GetSequenceType() != nil:
		e := tp.GetSequenceType().GetElemType()
		return kindSeq, e, e.GetTensorType() != nil
	case tp.GetOptionalType() != nil:
		e := tp.GetOptionalType().GetElemType()
		switch {
		case e.GetTensorType() != nil:
			return kindOpt, e, true
		case e.GetSequenceType().GetElemType().GetTensorType() != nil:
			return kindOptSeq, e.GetSequenceType().GetElemType(), true
		}
	}
	return 0, nil, false
}

// outKnown is what the rounds have learnt of one graph output.
type outKnown struct {
	hasKnown, has bool
	n             int // elements of a sequence; -1: not known yet
}

// valueSession runs a model with sequence or optional graph inputs or
// outputs in ONNX Runtime under Node, through copies (see above).
type valueSession struct {
	env         Env
	model       string // the path opened
	threads     int
	unoptimized bool
	tmp         string
	sessions    map[string]*Session // by copy signature
	notes       []string
}

func newValueSession(env Env, modelPath string, threads int, unoptimized bool) (*valueSession, error) {
	tmp, err := tempDir()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime (under Node): %s: %w", modelPath, err)
	}
	return &valueSession{env: env, model: modelPath, threads: threads, unoptimized: unoptimized, tmp: tmp, sessions: map[string]*Session{}}, nil
}

// Close ends every copy's node process and removes the copies.
func (s *valueSession) Close() error {
	var first error
	for _, ss := range s.sessions {
		if err := ss.Close(); err != nil && first == nil {
			first = err
		}
	}
	removeTemp(s.tmp)
	return first
}

// Note says that ONNX Runtime ran copies (runtimes.SessionNoter).
func (s *valueSession) Note() string {
	notes := []string{"sequences and optionals crossed as tensors through copies of the model"}
	for _, n := range s.notes {
		if n != "" && !strings.Contains(strings.Join(notes, "; "), n) {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

func (s *valueSession) errorf(format string, args ...any) error {
	return &RunError{Model: s.model, Kind: "type", Detail: fmt.Sprintf(format, args...)}
}

// RunValues computes the model on one sample of values, in the order of
// its graph inputs (initializers excluded), and returns its outputs in
// order (verify.ValueRunner).
func (s *valueSession) RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error) {
	m, err := canonical.Load(s.model, canonical.LoadOptions{SkipDataChecks: true})
	if err != nil {
		return nil, fmt.Errorf("onnxruntime (under Node): %s: %w", s.model, err)
	}
	outs := make([]outKnown, len(m.Graph.Outputs))
	kinds := make([]valueKind, len(m.Graph.Outputs))
	elems := make([]canonical.DataType, len(m.Graph.Outputs))
	for i, v := range m.Graph.Outputs {
		k, elem, ok := valueKindOf(v.Type)
		if !ok {
			m.Close()
			return nil, s.errorf("graph output %q is a map or a sequence of sequences or maps, which cannot cross to ONNX Runtime as tensors", v.Name)
		}
		kinds[i], outs[i].n = k, -1
		elems[i], _, _, _ = canonical.TensorTypeOf(elem)
	}
	m.Close()
	for round := 0; round < 3; round++ {
		res, err := s.runCopy(ctx, inputs, outs)
		if err != nil {
			return nil, err
		}
		done := true
		vals := make([]*executor.Value, len(outs))
		for i, k := range kinds {
			o := &outs[i]
			name := fmt.Sprintf("output %d", i)
			if k == kindTensor {
				vals[i] = executor.TensorValue(res[i][0])
				continue
			}
			if (k == kindOpt || k == kindOptSeq) && !o.hasKnown {
				o.hasKnown, o.has, done = true, scalarInt(res[i][0]) != 0, false
				continue
			}
			if (k == kindOpt || k == kindOptSeq) && !o.has {
				vals[i] = &executor.Value{None: true, ElemType: elems[i]}
				continue
			}
			if k == kindOpt {
				vals[i] = executor.TensorValue(res[i][0])
				continue
			}
			if o.n < 0 {
				o.n, done = int(scalarInt(res[i][0])), false
				if o.n < 0 || o.n > 1<<20 {
					return nil, s.errorf("%s: ONNX Runtime gave a sequence length of %d", name, o.n)
				}
				continue
			}
			vals[i] = &executor.Value{IsSequence: true, ElemType: elems[i], Sequence: append([]*canonical.Tensor{}, res[i]...)}
		}
		if done {
			return vals, nil
		}
	}
	return nil, s.errorf("outputs not resolved after three rounds")
}

// scalarInt is the first element of an int64 or bool tensor (0 when it
// has none).
func scalarInt(t *canonical.Tensor) int64 {
	v, err := t.Float64s()
	if err != nil || len(v) == 0 {
		return 0
	}
	return int64(v[0])
}

// runCopy builds (or reuses) the copy for inputs and what is known of the
// outputs, runs it, and returns per graph output the tensors it gave.
func (s *valueSession) runCopy(ctx context.Context, inputs []*executor.Value, outs []outKnown) ([][]*canonical.Tensor, error) {
	var sig strings.Builder
	for _, v := range inputs {
		switch {
		case v == nil:
			sig.WriteString("nil,")
		case v.None:
			sig.WriteString("none,")
		case v.IsSequence:
			fmt.Fprintf(&sig, "seq%d,", len(v.Sequence))
		default:
			sig.WriteString("t,")
		}
	}
	sig.WriteString("|")
	for _, o := range outs {
		fmt.Fprintf(&sig, "%t%t%d,", o.hasKnown, o.has, o.n)
	}
	key := sig.String()
	ss, ok := s.sessions[key]
	path := filepath.Join(s.tmp, "copy"+strconv.Itoa(len(s.sessions))+".onnx")
	feeds, names, err := s.writeCopy(path, inputs, outs, !ok)
	if err != nil {
		return nil, err
	}
	fetch := 0
	for _, ns := range names {
		fetch += len(ns)
	}
	if fetch == 0 {
		return make([][]*canonical.Tensor, len(names)), nil
	}
	if !ok {
		if ss, err = Open(ctx, s.env, path, s.threads, s.unoptimized); err != nil {
			return nil, err
		}
		s.sessions[key] = ss
		s.notes = append(s.notes, ss.Note())
	}
	res, err := ss.RunProtos(ctx, feeds)
	if err != nil {
		return nil, err
	}
	byName := map[string]*onnxpb.TensorProto{}
	for _, tp := range res {
		byName[tp.GetName()] = tp
	}
	got := make([][]*canonical.Tensor, len(names))
	for i, ns := range names {
		for _, n := range ns {
			tp, ok := byName[n]
			if !ok {
				return nil, &RunError{Model: s.model, Kind: "protocol", Detail: fmt.Sprintf("the copy gave no output %q", n)}
			}
			t, err := canonical.TensorFromProto(tp)
			if err != nil {
				return nil, &RunError{Model: s.model, Kind: "protocol", Detail: fmt.Sprintf("output %q: %v", n, err)}
			}
			got[i] = append(got[i], t)
		}
	}
	return got, nil
}

// writeCopy returns the tensors to feed the copy for inputs and the names
// of its outputs per graph output; with write, it also writes the copy to
// path.
func (s *valueSession) writeCopy(path string, inputs []*executor.Value, outs []outKnown, write bool) ([]*onnxpb.TensorProto, [][]string, error) {
	m, err := canonical.Load(s.model, canonical.LoadOptions{SkipDataChecks: true})
	if err != nil {
		return nil, nil, fmt.Errorf("onnxruntime (under Node): %s: %w", s.model, err)
	}
	defer m.Close()
	g := m.Graph
	var ins []*canonical.Value
	for _, v := range g.Inputs {
		if !v.IsConst() {
			ins = append(ins, v)
		}
	}
	if len(inputs) != len(ins) {
		return nil, nil, &RunError{Model: s.model, Kind: "inputs", Detail: fmt.Sprintf("%d input values for %d graph inputs", len(inputs), len(ins))}
	}
	var feeds []*onnxpb.TensorProto
	feed := func(name string, t *canonical.Tensor) error {
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return fmt.Errorf("onnxruntime (under Node): %s: input %q: %w", s.model, name, err)
		}
		tp.Name = proto.String(name)
		feeds = append(feeds, tp)
		return nil
	}
	var front []*canonical.Node
	newInputs := []*canonical.Value{}
	for _, v := range g.Inputs {
		if v.IsConst() {
			newInputs = append(newInputs, v)
			continue
		}
		k := indexOf(ins, v)
		val := inputs[k]
		kind, elem, ok := valueKindOf(v.Type)
		if !ok {
			return nil, nil, s.errorf("graph input %q is a map or a sequence of sequences or maps, which cannot cross to ONNX Runtime as tensors", v.Name)
		}
		if val == nil {
			return nil, nil, &RunError{Model: s.model, Kind: "inputs", Detail: fmt.Sprintf("input %q: no value", v.Name)}
		}
		if kind == kindTensor {
			if val.Tensor == nil || val.IsSequence || val.None {
				return nil, nil, &RunError{Model: s.model, Kind: "inputs", Detail: fmt.Sprintf("input %q: a tensor is wanted", v.Name)}
			}
			if err := feed(v.Name, val.Tensor); err != nil {
				return nil, nil, err
			}
			newInputs = append(newInputs, v)
			continue
		}
		name := v.Name
		if err := g.RenameValue(v, "ortnode_value_in/"+name); err != nil {
			return nil, nil, err
		}
		var made *canonical.Value
		seq := kind == kindSeq || (kind == kindOptSeq && !val.None)
		switch {
		case (kind == kindOpt || kind == kindOptSeq) && val.None:
			inner := v.Type.GetOptionalType().GetElemType()
			n, err := g.AddNode("ortnode_value_in/"+name, "", "Optional", nil, []string{name + "/ortnode_none"}, &canonical.Attribute{Name: "type", Type: canonical.AttrTypeProto, TP: inner})
			if err != nil {
				return nil, nil, err
			}
			front, made = append(front, n), n.Outputs[0]
		case seq:
			if !val.IsSequence {
				return nil, nil, &RunError{Model: s.model, Kind: "inputs", Detail: fmt.Sprintf("input %q: a sequence is wanted", name)}
			}
			var parts []*canonical.Value
			for j, t := range val.Sequence {
				pn := fmt.Sprintf("%s/ortnode_seq/%d", name, j)
				p, err := g.NewValue(pn, elem)
				if err != nil {
					return nil, nil, err
				}
				if err := feed(pn, t); err != nil {
					return nil, nil, err
				}
				parts, newInputs = append(parts, p), append(newInputs, p)
			}
			var n *canonical.Node
			if len(parts) == 0 {
				et, _, _, _ := canonical.TensorTypeOf(elem)
				n, err = g.AddNode("ortnode_value_in/"+name, "", "SequenceEmpty", nil, []string{name + "/ortnode_seq"}, canonical.IntAttr("dtype", int64(et)))
			} else {
				n, err = g.AddNode("ortnode_value_in/"+name, "", "SequenceConstruct", parts, []string{name + "/ortnode_seq"})
			}
			if err != nil {
				return nil, nil, err
			}
			n.Outputs[0].Type = canonical.SequenceType(elem)
			front, made = append(front, n), n.Outputs[0]
			if kind == kindOptSeq {
				o, err := g.AddNode("ortnode_value_opt/"+name, "", "Optional", []*canonical.Value{made}, []string{name + "/ortnode_opt"})
				if err != nil {
					return nil, nil, err
				}
				front, made = append(front, o), o.Outputs[0]
			}
		default: // optional tensor with a value
			if val.Tensor == nil || val.IsSequence {
				return nil, nil, &RunError{Model: s.model, Kind: "inputs", Detail: fmt.Sprintf("input %q: a tensor or None is wanted", name)}
			}
			p, err := g.NewValue(name+"/ortnode_tensor", elem)
			if err != nil {
				return nil, nil, err
			}
			if err := feed(p.Name, val.Tensor); err != nil {
				return nil, nil, err
			}
			newInputs = append(newInputs, p)
			n, err := g.AddNode("ortnode_value_in/"+name, "", "Optional", []*canonical.Value{p}, []string{name + "/ortnode_opt"})
			if err != nil {
				return nil, nil, err
			}
			front, made = append(front, n), n.Outputs[0]
		}
		made.Type = v.Type
		g.ReplaceAllUsesWith(v, made)
	}
	g.Inputs = newInputs
	if len(front) > 0 && len(g.Nodes) > len(front) {
		g.MoveNodes(front, g.Nodes[0])
	}

	// Outputs, as far as they are known.
	names := make([][]string, len(g.Outputs))
	var newOutputs []*canonical.Value
	// add computes op over in into a new value out of type typ; with
	// output i >= 0 it is fetched as graph output i's.
	add := func(i int, op string, in []*canonical.Value, out string, typ *onnxpb.TypeProto) (*canonical.Value, error) {
		n, err := g.AddNode("ortnode_value_out/"+out, "", op, in, []string{out})
		if err != nil {
			return nil, err
		}
		n.Outputs[0].Type = typ
		if i >= 0 {
			newOutputs, names[i] = append(newOutputs, n.Outputs[0]), append(names[i], out)
		}
		return n.Outputs[0], nil
	}
	for i, v := range g.Outputs {
		kind, elem, _ := valueKindOf(v.Type)
		o := outs[i]
		base := fmt.Sprintf("ortnode_out%d", i)
		names[i] = []string{}
		src := v
		var err error
		switch {
		case kind == kindTensor:
			newOutputs, names[i] = append(newOutputs, v), []string{v.Name}
			continue
		case (kind == kindOpt || kind == kindOptSeq) && !o.hasKnown:
			_, err = add(i, "OptionalHasElement", []*canonical.Value{v}, base+"/has", canonical.TensorTypeDims(canonical.Bool, nil))
		case (kind == kindOpt || kind == kindOptSeq) && !o.has:
		case kind == kindOpt:
			_, err = add(i, "OptionalGetElement", []*canonical.Value{v}, base+"/elem", elem)
		case kind == kindOptSeq:
			src, err = add(-1, "OptionalGetElement", []*canonical.Value{v}, base+"/elem", canonical.SequenceType(elem))
		}
		if err != nil {
			return nil, nil, err
		}
		if kind == kindOpt || ((kind == kindOptSeq) && (!o.hasKnown || !o.has)) {
			continue
		}
		if o.n < 0 {
			if _, err := add(i, "SequenceLength", []*canonical.Value{src}, base+"/len", canonical.TensorTypeDims(canonical.Int64, nil)); err != nil {
				return nil, nil, err
			}
			continue
		}
		for j := range o.n {
			idx, err := g.AddInitializer(canonical.NumberTensor(fmt.Sprintf("%s/at%d/index", base, j), canonical.Int64, nil, []float64{float64(j)}))
			if err != nil {
				return nil, nil, err
			}
			if _, err := add(i, "SequenceAt", []*canonical.Value{src, idx}, fmt.Sprintf("%s/at%d", base, j), elem); err != nil {
				return nil, nil, err
			}
		}
	}
	g.Outputs = newOutputs
	if !write || len(g.Outputs) == 0 {
		// (No output left to fetch: every one is known to be a None or
		// an empty sequence, and nothing runs.)
		return feeds, names, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	if err := canonical.Save(path, m, canonical.SaveOptions{ExternalData: hasExternal(m)}); err != nil {
		return nil, nil, fmt.Errorf("onnxruntime (under Node): writing the copy of %s ONNX Runtime runs: %w", s.model, err)
	}
	return feeds, names, nil
}

func indexOf(vs []*canonical.Value, v *canonical.Value) int {
	for i, w := range vs {
		if w == v {
			return i
		}
	}
	return -1
}
