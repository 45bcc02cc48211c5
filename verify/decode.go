package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// A decoder with a KV cache (a transformer exported by torch.onnx or
// Optimum with past_key_values.* inputs and present.* outputs) runs as a
// loop: a prefill over the prompt with empty caches, then one token per
// step, each step's present fed back as the next step's past. One call
// with generated caches checks little of that, so such a model is
// verified over the loop: both sides run the prefill and the decode steps,
// each feeding its own caches back, the same token going into both (the
// reference's greedy choice), and every output is compared at every step.

// DefaultDecodeSteps is the number of decode steps after the prefill when
// a model with a KV cache is verified and none is given.
const DefaultDecodeSteps = 3

// DefaultPrompt is the number of prompt tokens of the prefill.
const DefaultPrompt = 7

// CachePair is one cache of a decoder: the graph input that takes it
// (past) and the graph output that gives it back grown by the step
// (present).
type CachePair struct {
	Past    string `json:"past"`
	Present string `json:"present"`
}

// Decode configures verification over a prefill and decode steps.
type Decode struct {
	// Steps is the number of decode steps after the prefill.
	Steps int
	// Prompt is the prefill's length in tokens (DefaultPrompt when 0);
	// ignored when Options.Inputs gives the prefill.
	Prompt int
	// Caches pairs past inputs with present outputs; nil finds them by
	// name (DetectCaches).
	Caches []CachePair
}

// cacheName matches the cache names torch.onnx, Optimum and
// onnxruntime-genai write: past_key_values.0.key, past.0.value,
// past_key_0, present.0.key, present_key_values.0.value, present_value_0.
var cacheName = regexp.MustCompile(`^(past_key_values|past_key_value|present_key_values|present_key_value|past|present)([._]?)(.*)$`)

// cacheSuffix returns what names a cache apart from its past/present
// prefix (".0.key", "_key_0"), and whether name is a past (true) or a
// present name.
func cacheSuffix(name string) (suffix string, past bool, ok bool) {
	m := cacheName.FindStringSubmatch(name)
	if m == nil || m[3] == "" {
		return "", false, false
	}
	return m[2] + m[3], strings.HasPrefix(m[1], "past"), true
}

// DetectCaches pairs the graph inputs named like a cache's past with the
// graph outputs named like its present (the same name after the prefix).
// It returns nil when the model has no such pair.
func DetectCaches(m *canonical.Model) []CachePair {
	if m == nil || m.Graph == nil {
		return nil
	}
	presents := map[string]string{}
	for _, o := range m.Graph.Outputs {
		if s, past, ok := cacheSuffix(o.Name); ok && !past {
			presents[s] = o.Name
		}
	}
	var pairs []CachePair
	for _, in := range GraphInputs(m) {
		if s, past, ok := cacheSuffix(in.Name); ok && past {
			if out, ok := presents[s]; ok {
				pairs = append(pairs, CachePair{Past: in.Name, Present: out})
			}
		}
	}
	return pairs
}

// decoderIO is what the decode loop needs to know of a model's inputs
// and outputs, as indexes into GraphInputs and the graph outputs.
type decoderIO struct {
	ids, mask, positions int // -1 when absent
	logits               int
	caches               []cacheIO
	vocab                int64
}

type cacheIO struct {
	in, out int
	axis    int // the sequence axis of the past input
}

// decoderOf finds a decoder's inputs and outputs in m.
func decoderOf(m *canonical.Model, caches []CachePair) (*decoderIO, error) {
	ins := GraphInputs(m)
	inIdx := map[string]int{}
	for i, v := range ins {
		inIdx[v.Name] = i
	}
	outIdx := map[string]int{}
	for i, v := range m.Graph.Outputs {
		outIdx[v.Name] = i
	}
	d := &decoderIO{ids: -1, mask: -1, positions: -1, logits: -1}
	isCache := map[string]bool{}
	for _, p := range caches {
		i, ok := inIdx[p.Past]
		if !ok {
			return nil, fmt.Errorf("the KV cache input %q is not an input of the model", p.Past)
		}
		o, ok := outIdx[p.Present]
		if !ok {
			return nil, fmt.Errorf("the KV cache output %q is not an output of the model", p.Present)
		}
		axis, err := cacheAxis(ins[i], m.Graph.Outputs[o])
		if err != nil {
			return nil, err
		}
		d.caches = append(d.caches, cacheIO{in: i, out: o, axis: axis})
		isCache[p.Past], isCache[p.Present] = true, true
	}
	for i, v := range ins {
		switch {
		case isCache[v.Name]:
		case v.Name == "input_ids":
			d.ids = i
		case v.Name == "attention_mask":
			d.mask = i
		case v.Name == "position_ids":
			d.positions = i
		}
	}
	if d.ids < 0 {
		return nil, fmt.Errorf("a decoder with a KV cache is verified over decode steps through its input_ids input, and %s has none (give the prefill with --inputs and --decode-steps 0 to verify one call)", valueList(ins))
	}
	for i, v := range m.Graph.Outputs {
		if !isCache[v.Name] && (d.logits < 0 || v.Name == "logits") {
			d.logits = i
		}
	}
	if d.logits < 0 {
		return nil, fmt.Errorf("a decoder with a KV cache needs an output besides its caches (the logits)")
	}
	d.vocab = vocabOf(m, ins[d.ids], m.Graph.Outputs[d.logits])
	return d, nil
}

// cacheAxis returns the axis a cache grows along: the one whose dim the
// present declares differently from the past (past_sequence_length
// against total_sequence_length), else the second to last.
func cacheAxis(past, present *canonical.Value) (int, error) {
	_, pd, okP, _ := canonical.TensorTypeOf(past.Type)
	_, qd, okQ, _ := canonical.TensorTypeOf(present.Type)
	if !okP || len(pd) < 2 {
		return 0, fmt.Errorf("the KV cache input %q has no declared shape of rank 2 or more", past.Name)
	}
	if okQ && len(qd) == len(pd) {
		for i := range pd {
			if !pd[i].Known && pd[i].Param != "" && pd[i].Param != qd[i].Param && i > 0 {
				return i, nil
			}
		}
	}
	return len(pd) - 2, nil
}

// vocabOf returns the number of token ids: the rows of the embedding
// table input_ids indexes, else the last dim of the logits, else 2.
func vocabOf(m *canonical.Model, ids, logits *canonical.Value) int64 {
	for _, u := range ids.Uses() {
		if u.Node.OpType == "Gather" && u.Index == 1 && u.Node.Inputs[0].Const != nil {
			if d := u.Node.Inputs[0].Const.Dims; len(d) > 0 && d[0] > 0 {
				return d[0]
			}
		}
	}
	if _, ds, ok, _ := canonical.TensorTypeOf(logits.Type); ok && len(ds) > 0 && ds[len(ds)-1].Known && ds[len(ds)-1].Value > 0 {
		return ds[len(ds)-1].Value
	}
	return 2
}

// decodeState is one side's inputs for the next step, in the order of the
// reference's graph inputs.
type decodeState struct {
	in   []*canonical.Tensor
	past int64 // tokens in the caches
}

// Applies reports whether m is verified over a prefill and decode steps
// under dec: steps asked for and caches declared or found by name.
func (dec *Decode) Applies(m *canonical.Model) bool {
	if dec == nil || dec.Steps <= 0 {
		return false
	}
	if dec.Caches != nil {
		return true
	}
	// Caches found by name count only on a decoder fed token ids (an
	// Attention node test with past_key/present_key is not one).
	found := DetectCaches(m)
	if found == nil {
		return false
	}
	_, err := decoderOf(m, found)
	return err == nil
}

func (dec *Decode) caches(m *canonical.Model) []CachePair {
	if dec.Caches != nil {
		return dec.Caches
	}
	return DetectCaches(m)
}

func (dec *Decode) prompt() int {
	if dec.Prompt > 0 {
		return dec.Prompt
	}
	return DefaultPrompt
}

// PrefillInputs generates sample k of a decoder's prefill: a batch of one
// prompt of random token ids, empty caches, a mask of ones and positions
// from 0; any other input from gen with its dims fitted to the prompt.
func PrefillInputs(m *canonical.Model, dec *Decode, gen GenOptions, k int) ([]*canonical.Tensor, error) {
	d, err := decoderOf(m, dec.caches(m))
	if err != nil {
		return nil, err
	}
	prompt := dec.prompt()
	in, err := GenerateInputs(m, decodeGen(m, d, gen, prompt), k)
	if err != nil {
		return nil, err
	}
	ins := GraphInputs(m)
	batch := int64(1)
	rng := rand.New(rand.NewPCG(gen.Seed, uint64(k)<<20|0xdec0de))
	ids := make([]int64, batch*int64(prompt))
	for i := range ids {
		ids[i] = rng.Int64N(d.vocab)
	}
	if in[d.ids], err = intTensor(ins[d.ids], []int64{batch, int64(prompt)}, ids); err != nil {
		return nil, err
	}
	for _, c := range d.caches {
		v := ins[c.in]
		dt, ds, _, _ := canonical.TensorTypeOf(v.Type)
		dims := make([]int64, len(ds))
		for i, dim := range ds {
			switch {
			case i == c.axis:
				dims[i] = 0
			case i == 0 && !dim.Known:
				dims[i] = batch
			case dim.Known:
				dims[i] = dim.Value
			default:
				n, ok := gen.Dims[dim.Param]
				if !ok {
					return nil, fmt.Errorf("the KV cache input %q has dim %d %q undeclared: set it with --dim %s=SIZE", v.Name, i, dim.Param, dim.Param)
				}
				dims[i] = n
			}
		}
		in[c.in] = canonical.NewTensor(v.Name, dt, dims, nil)
	}
	if err := d.stepInputs(ins, in, batch, 0, int64(prompt)); err != nil {
		return nil, err
	}
	return in, nil
}

// stepInputs sets the mask (ones over past+n tokens) and the positions
// (past to past+n-1) of a step.
func (d *decoderIO) stepInputs(ins []*canonical.Value, in []*canonical.Tensor, batch, past, n int64) error {
	var err error
	if d.mask >= 0 {
		ones := make([]int64, batch*(past+n))
		for i := range ones {
			ones[i] = 1
		}
		if in[d.mask], err = intTensor(ins[d.mask], []int64{batch, past + n}, ones); err != nil {
			return err
		}
	}
	if d.positions >= 0 {
		pos := make([]int64, 0, batch*n)
		for range batch {
			for k := range n {
				pos = append(pos, past+k)
			}
		}
		if in[d.positions], err = intTensor(ins[d.positions], []int64{batch, n}, pos); err != nil {
			return err
		}
	}
	return nil
}

// next returns the following step's inputs: the tokens, and each cache
// from out (the outputs of this step on the side whose state s is).
func (d *decoderIO) next(ins []*canonical.Value, s decodeState, out []*canonical.Tensor, tokens []int64) (decodeState, error) {
	in := append([]*canonical.Tensor(nil), s.in...)
	batch := int64(len(tokens))
	var err error
	if in[d.ids], err = intTensor(ins[d.ids], []int64{batch, 1}, tokens); err != nil {
		return s, err
	}
	grown := s.past
	for _, c := range d.caches {
		t := out[c.out]
		if c.axis >= len(t.Dims) {
			return s, fmt.Errorf("the KV cache output %q has shape %v, its input takes rank > %d", t.Name, t.Dims, c.axis)
		}
		cp := *t
		cp.Name = ins[c.in].Name
		in[c.in] = &cp
		grown = t.Dims[c.axis]
	}
	if err := d.stepInputs(ins, in, batch, grown, 1); err != nil {
		return s, err
	}
	return decodeState{in: in, past: grown}, nil
}

// greedy returns, per batch row, the arg max of the logits at the last
// position.
func greedy(logits *canonical.Tensor) ([]int64, error) {
	v, err := logits.Float64s()
	if err != nil {
		return nil, fmt.Errorf("logits: %w", err)
	}
	if len(logits.Dims) < 1 || len(v) == 0 {
		return nil, fmt.Errorf("logits %q are empty (shape %v)", logits.Name, logits.Dims)
	}
	vocab := logits.Dims[len(logits.Dims)-1]
	batch := int64(1)
	if len(logits.Dims) >= 2 {
		batch = logits.Dims[0]
	}
	if vocab <= 0 || batch <= 0 || int64(len(v))%(batch*vocab) != 0 {
		return nil, fmt.Errorf("logits %q of shape %v cannot be read as batch × positions × vocabulary", logits.Name, logits.Dims)
	}
	per := int64(len(v)) / batch
	out := make([]int64, batch)
	for b := range batch {
		row := v[b*per+per-vocab : b*per+per]
		best, arg := math.Inf(-1), 0
		for i, x := range row {
			if x > best {
				best, arg = x, i
			}
		}
		out[b] = int64(arg)
	}
	return out, nil
}

// intTensor makes an integer tensor of v's element type (int64 when the
// model does not say).
func intTensor(v *canonical.Value, dims []int64, vals []int64) (*canonical.Tensor, error) {
	dt, _, _, ok := canonical.TensorTypeOf(v.Type)
	if !ok || dt == canonical.Undefined {
		dt = canonical.Int64
	}
	var raw []byte
	switch dt {
	case canonical.Int64:
		raw = make([]byte, 8*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
		}
	case canonical.Int32:
		raw = make([]byte, 4*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(x)))
		}
	case canonical.Bool:
		raw = make([]byte, len(vals))
		for i, x := range vals {
			if x != 0 {
				raw[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("input %q takes %s; the decode loop writes token ids, masks and positions as int64, int32 or bool", v.Name, canonical.ElemTypeName(dt))
	}
	return canonical.NewTensor(v.Name, dt, dims, raw), nil
}

// compareDecode is Compare for a decoder with a KV cache: every sample is
// a prefill followed by opts.Decode.Steps decode steps.
func compareDecode(ctx context.Context, a, b *Side, opts Options, rep *Report, run func(ctx context.Context, in []*canonical.Tensor, side int) ([]*canonical.Tensor, error), pairs []outPair, outA, outB []string) error {
	caches := opts.Decode.caches(a.Model)
	d, err := decoderOf(a.Model, caches)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", a.Name, err)
	}
	ins := GraphInputs(a.Model)
	steps := opts.Decode.Steps
	samples := opts.Inputs
	if samples == nil {
		k := opts.Samples
		if k <= 0 {
			k = DefaultSamples
		}
		for s := range k {
			in, err := PrefillInputs(a.Model, opts.Decode, opts.Gen, s)
			if err != nil {
				return fmt.Errorf("verify: generating the prefill of %s: %w", a.Name, err)
			}
			samples = append(samples, in)
		}
		rep.Options.InputSource = "generated"
	}
	k := len(samples)
	accs := make([][]*accumulator, steps+1)
	for step := range accs {
		accs[step] = make([]*accumulator, len(pairs))
	}
	rep.Samples = k
	for si := range k {
		first := samples[si]
		if len(first) != len(ins) {
			return fmt.Errorf("verify: sample %d has %d inputs, %s takes %d", si, len(first), a.Name, len(ins))
		}
		var past int64
		if c := d.caches; len(c) > 0 && c[0].axis < len(first[c[0].in].Dims) {
			past = first[c[0].in].Dims[c[0].axis]
		}
		if si == 0 {
			rep.Inputs = rep.Inputs[:0]
			for i, v := range ins {
				rep.Inputs = append(rep.Inputs, InputInfo{Name: v.Name, DType: canonical.ElemTypeName(first[i].DataType), Shape: nonNil(first[i].Dims)})
			}
		}
		sa, sb := decodeState{in: first, past: past}, decodeState{in: first, past: past}
		for step := 0; step <= steps; step++ {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("verify: %w", err)
			}
			ya, err := run(ctx, sa.in, 0)
			if err != nil {
				return &SideError{Name: a.Name, Where: fmt.Sprintf("on sample %d, %s", si, stepName(step)), Err: err}
			}
			yb, err := run(ctx, sb.in, 1)
			if err != nil {
				return &SideError{B: true, Name: b.Name, Where: fmt.Sprintf("on sample %d, %s", si, stepName(step)), Err: err}
			}
			if err := checkCounts(a.Name, b.Name, len(ya), len(yb), outA, pairs); err != nil {
				return err
			}
			for pi, p := range pairs {
				if accs[step][pi] == nil {
					res := &OutputResult{Name: outA[p.a] + " (" + stepName(step) + ")", BName: outB[p.b] + " (" + stepName(step) + ")", Pass: true}
					accs[step][pi] = newAccumulator(res, opts.toleranceFor(ya[p.a].DataType, yb[p.b].DataType), k)
					// The logits' top-1 agreement per position.
					accs[step][pi].lastAxis = p.a == d.logits
				}
				if err := accs[step][pi].add(ya[p.a], yb[p.b]); err != nil {
					return fmt.Errorf("verify: sample %d, %s: %w", si, stepName(step), err)
				}
			}
			if step == steps {
				break
			}
			tokens, err := greedy(ya[d.logits])
			if err != nil {
				return fmt.Errorf("verify: %s, %s: %w", a.Name, stepName(step), err)
			}
			if sa, err = d.next(ins, sa, ya, tokens); err != nil {
				return fmt.Errorf("verify: %s, %s: %w", a.Name, stepName(step+1), err)
			}
			// B's caches in the reference's output order.
			ybA := make([]*canonical.Tensor, len(outA))
			for _, p := range pairs {
				ybA[p.a] = yb[p.b]
			}
			for _, c := range d.caches {
				if ybA[c.out] == nil {
					return fmt.Errorf("verify: %s has no output %q to feed back as %q", b.Name, outA[c.out], ins[c.in].Name)
				}
			}
			if sb, err = d.next(ins, sb, ybA, tokens); err != nil {
				return fmt.Errorf("verify: %s, %s: %w", b.Name, stepName(step+1), err)
			}
		}
		if opts.Progress != nil {
			opts.Progress(si+1, k)
		}
	}
	var all []*accumulator
	for _, row := range accs {
		all = append(all, row...)
	}
	rep.finishOutputs(len(rep.Unmatched) == 0 && len(pairs) > 0, all)
	names := make([]string, len(d.caches))
	for i, c := range d.caches {
		names[i] = ins[c.in].Name
	}
	src := fmt.Sprintf("a prefill of %d tokens", samples[0][d.ids].Dims[len(samples[0][d.ids].Dims)-1])
	rep.Decode = &DecodeInfo{Steps: steps, Caches: caches}
	rep.Notes = append(rep.Notes, fmt.Sprintf("a decoder with a KV cache (%s): verified over %s and %d decode step(s), each side feeding its own present outputs back as its past inputs and both given the reference's greedy token; every output compared at every step",
		cacheList(names), src, steps))
	return nil
}

// decodeGen sets the generator's dims so that the inputs besides the
// decoder's own fit a prefill of prompt tokens on a batch of one.
func decodeGen(m *canonical.Model, d *decoderIO, g GenOptions, prompt int) GenOptions {
	ins := GraphInputs(m)
	dims := make(map[string]int64, len(g.Dims)+4)
	for k, v := range g.Dims {
		dims[k] = v
	}
	g.Dims = dims
	set := func(v *canonical.Value, axis int, n int64) {
		if _, ds, ok, _ := canonical.TensorTypeOf(v.Type); ok && axis < len(ds) && !ds[axis].Known && ds[axis].Param != "" {
			if _, has := g.Dims[ds[axis].Param]; !has {
				g.Dims[ds[axis].Param] = n
			}
		}
	}
	set(ins[d.ids], 0, 1)
	set(ins[d.ids], 1, int64(prompt))
	if d.mask >= 0 {
		set(ins[d.mask], 1, int64(prompt))
	}
	for _, c := range d.caches {
		set(ins[c.in], c.axis, 1)
	}
	return g
}

func stepName(step int) string {
	if step == 0 {
		return "prefill"
	}
	return fmt.Sprintf("step %d", step)
}

func cacheList(names []string) string {
	if len(names) <= 2 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … %s, %d inputs", names[0], names[len(names)-1], len(names))
}

// DecodeInfo says how a decoder was verified.
type DecodeInfo struct {
	Steps  int         `json:"steps"`
	Caches []CachePair `json:"caches"`
}

// phrase is what the summary adds for a decoder verified over steps:
// ", each a prefill and 3 decode steps"; empty for single calls.
func (d *DecodeInfo) phrase() string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf(", each a prefill and %d decode step(s)", d.Steps)
}

// RunDecode runs a decoder on r the way a framework's generation loop
// does: first (a prefill's inputs, in the order of GraphInputs(m)), then
// one step per row of tokens (the token ids of each batch row), each
// step's caches fed back as the next step's past. It returns every step's
// outputs, the prefill's first. Tests hold it against a framework's
// stored logits.
func RunDecode(ctx context.Context, r Runner, m *canonical.Model, caches []CachePair, first []*canonical.Tensor, tokens [][]int64) ([][]*canonical.Tensor, error) {
	if caches == nil {
		caches = DetectCaches(m)
	}
	d, err := decoderOf(m, caches)
	if err != nil {
		return nil, err
	}
	ins := GraphInputs(m)
	s := decodeState{in: first}
	if c := d.caches; len(c) > 0 && c[0].axis < len(first[c[0].in].Dims) {
		s.past = first[c[0].in].Dims[c[0].axis]
	}
	var outs [][]*canonical.Tensor
	for step := 0; ; step++ {
		y, err := r.Run(ctx, s.in)
		if err != nil {
			return outs, fmt.Errorf("%s: %w", stepName(step), err)
		}
		outs = append(outs, y)
		if step == len(tokens) {
			return outs, nil
		}
		if s, err = d.next(ins, s, y, tokens[step]); err != nil {
			return outs, fmt.Errorf("%s: %w", stepName(step+1), err)
		}
	}
}
