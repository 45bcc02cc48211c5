package trees

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// Source computes an Ensemble directly: it walks the trees (not the ONNX
// graph Build makes) and applies the objective, giving the outputs Build's
// model gives, with the same names, shapes and element types. It
// implements importers.Source.
type Source struct {
	e    *Ensemble
	raw  bool
	what string
	all  []Tree
	maps []map[uint64]float64
}

// NewSource returns the direct predictor of e; raw gives the margin alone
// (as Build with BuildOptions.Raw). what completes the description
// ("lightgbm trees").
func NewSource(e *Ensemble, raw bool, what string) (*Source, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &Source{e: e, raw: raw, what: what, all: e.allTrees(), maps: e.lookupMaps()}, nil
}

// Describe says what computes the model.
func (s *Source) Describe() string {
	return s.what + ", direct Go predictor (onnxconv importers/trees)"
}

// Close releases nothing; it is there for importers.Source.
func (s *Source) Close() error { return nil }

// Ensemble returns the ensemble s computes.
func (s *Source) Ensemble() *Ensemble { return s.e }

// goesTrue applies a node's test to x, with TreeEnsemble's semantics: a
// NaN goes True when MissingTrue, else the comparison decides.
func goesTrue(nd *Node, x float64, f32 bool) bool {
	if math.IsNaN(x) && nd.MissingTrue {
		return true
	}
	th := nd.Threshold
	if f32 {
		x, th = float64(float32(x)), float64(float32(th))
	}
	switch nd.Mode {
	case LEQ:
		return x <= th
	case LT:
		return x < th
	case GTE:
		return x >= th
	case GT:
		return x > th
	case EQ:
		return x == th
	case NEQ:
		return x != th
	case Member:
		for _, c := range nd.Set {
			if f32 {
				c = float64(float32(c))
			}
			if x == c {
				return true
			}
		}
	}
	return false
}

// Leaf returns the index in t.Nodes of the leaf row reaches.
func (t *Tree) Leaf(row []float64, f32 bool) int {
	i := 0
	for steps := 0; steps <= len(t.Nodes); steps++ {
		nd := &t.Nodes[i]
		if nd.Leaf {
			return i
		}
		if goesTrue(nd, row[nd.Feature], f32) {
			i = nd.True
		} else {
			i = nd.False
		}
	}
	return i // unreachable for a validated tree
}

// Margin computes the margin of one row (NumFeatures values) into out
// (NumTargets values): the trees in order, then the base, summed in
// float64, or in float32 when the ensemble is not Double.
func (s *Source) Margin(row, out []float64) {
	e := s.e
	f32 := !e.Double
	if e.Linear != nil {
		s.linear(row, out)
		return
	}
	for t := range out {
		out[t] = 0
	}
	row = e.extend(row, s.maps)
	for ti := range s.all {
		t := &s.all[ti]
		v := leafValue(&t.Nodes[t.Leaf(row, f32)], row)
		if f32 {
			out[t.Target] = float64(float32(out[t.Target]) + float32(v))
		} else {
			out[t.Target] += v
		}
	}
}

func (s *Source) linear(row, out []float64) {
	e := s.e
	F, T := e.NumFeatures, e.NumTargets
	for t := 0; t < T; t++ {
		acc := 0.0
		for f := 0; f < F; f++ {
			x := row[f]
			if math.IsNaN(x) {
				continue
			}
			acc += x * e.Linear.Weights[f*T+t]
		}
		b := e.Linear.Bias[t]
		if e.Base != nil {
			b += e.Base[t]
		}
		out[t] = acc + b
		if !e.Double {
			out[t] = float64(float32(out[t]))
		}
	}
}

func softmax(m, out []float64) {
	mx := math.Inf(-1)
	for _, v := range m {
		mx = math.Max(mx, v)
	}
	sum := 0.0
	for i, v := range m {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// Run computes the outputs for inputs: one tensor [N, NumFeatures] (float,
// or double for a Double ensemble; any real type is read).
func (s *Source) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	e := s.e
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs given, the model has 1 (%q)", s.what, len(inputs), InputName)
	}
	in := inputs[0]
	F, T := e.NumFeatures, e.NumTargets
	var n int64
	switch {
	case len(in.Dims) == 2 && in.Dims[1] == int64(F) && in.Dims[0] >= 0:
		n = in.Dims[0]
	case len(in.Dims) == 1 && in.Dims[0] == int64(F):
		n = 1
	default:
		return nil, fmt.Errorf("%s: input %q has shape %v, want [N, %d]", s.what, in.Name, in.Dims, F)
	}
	x, err := in.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s: input %q: %w", s.what, in.Name, err)
	}
	if int64(len(x)) != n*int64(F) {
		return nil, fmt.Errorf("%s: input %q has %d values for shape %v", s.what, in.Name, len(x), in.Dims)
	}
	names := e.OutputNames(s.raw)
	margin := make([]float64, n*int64(T))
	for r := int64(0); r < n; r++ {
		if r%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row := x[r*int64(F) : (r+1)*int64(F)]
		if !e.Double {
			row = append([]float64(nil), row...)
			for i := range row {
				row[i] = float64(float32(row[i]))
			}
		}
		s.Margin(row, margin[r*int64(T):(r+1)*int64(T)])
	}
	vec := func(name string, v []float64) *canonical.Tensor {
		if T == 1 {
			return s.real(name, []int64{n}, v)
		}
		return s.real(name, []int64{n, int64(T)}, v)
	}
	if s.raw {
		return []*canonical.Tensor{vec(OutputMargin, margin)}, nil
	}
	var pred []float64
	var probs []float64
	var probDims []int64
	labels := make([]int64, n)
	switch e.Objective {
	case Identity:
		pred = margin
	case Logistic, Exp, Hinge:
		pred = make([]float64, len(margin))
		k := e.Sigmoid
		if k == 0 {
			k = 1
		}
		for i, m := range margin {
			switch e.Objective {
			case Logistic:
				pred[i] = 1 / (1 + math.Exp(-k*m))
			case Exp:
				pred[i] = math.Exp(m)
			default:
				if m > 0 {
					pred[i] = 1
				}
			}
		}
		if !e.Double {
			for i := range pred {
				pred[i] = float64(float32(pred[i]))
			}
		}
		if T == 1 {
			probs, probDims = make([]float64, 2*n), []int64{n, 2}
			for r := int64(0); r < n; r++ {
				p := pred[r]
				probs[2*r], probs[2*r+1] = 1-p, p
				if !e.Double {
					probs[2*r] = float64(float32(1) - float32(p))
				}
				labels[r] = int64(argmax(probs[2*r : 2*r+2]))
			}
		} else {
			probs, probDims = pred, []int64{n, int64(T)}
			for r := int64(0); r < n; r++ {
				labels[r] = int64(argmax(pred[r*int64(T) : (r+1)*int64(T)]))
			}
		}
	case Softprob, SoftmaxLabel:
		probs, probDims = make([]float64, len(margin)), []int64{n, int64(T)}
		for r := int64(0); r < n; r++ {
			m := margin[r*int64(T) : (r+1)*int64(T)]
			softmax(m, probs[r*int64(T):(r+1)*int64(T)])
			labels[r] = int64(argmax(m))
		}
		pred = probs
		if e.Objective == SoftmaxLabel {
			pred = make([]float64, n)
			for r := range pred {
				pred[r] = float64(labels[r])
			}
		}
	default:
		return nil, fmt.Errorf("%s: unknown objective %d", s.what, e.Objective)
	}
	var outs []*canonical.Tensor
	for _, name := range names {
		switch name {
		case OutputPredict:
			if e.Objective == Softprob {
				outs = append(outs, s.real(name, []int64{n, int64(T)}, pred))
			} else if e.Objective == SoftmaxLabel {
				outs = append(outs, s.real(name, []int64{n}, pred))
			} else {
				outs = append(outs, vec(name, pred))
			}
		case OutputLabel:
			raw := make([]byte, 8*len(labels))
			for i, l := range labels {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(l))
			}
			outs = append(outs, canonical.NewTensor(name, canonical.Int64, []int64{n}, raw))
		case OutputProbabilities:
			outs = append(outs, s.real(name, probDims, probs))
		}
	}
	return outs, nil
}

// real is a float or double tensor, as the model computes.
func (s *Source) real(name string, dims []int64, v []float64) *canonical.Tensor {
	return realTensor(name, dims, v, s.e.Double)
}
