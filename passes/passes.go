// Package passes holds onnxconv's graph transforms that keep numerics:
// constant folding, dead code, no-op elimination, common subexpressions,
// fusions, float16 conversion and int8 quantization.
//
// A pass is a function over a canonical model (Func). Run applies a list of
// passes one by one, each on a Clone of the model accepted so far; when a
// Check is given, the model after the pass is run by the built-in executor
// on the verification inputs and compared (verify.Compare) with the model
// before it. A pass that changes an output beyond the tolerance, that
// leaves a model the executor cannot run, or that fails is rolled back and
// reported by name, with the first diverging node found by bisection. The
// Report lists, per pass, nodes and bytes before and after and the error the
// pass introduced.
//
// Float16 conversion (Float16) and quantization (Quantize) are transforms
// that change numerics on purpose; they have their own entry points with
// the same report style and are checked against looser profiles.
package passes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// Options tune the optimization passes. The zero value is the default.
type Options struct {
	// FoldLimit is the largest tensor, in bytes, that constant folding
	// writes into the model (default DefaultFoldLimit); folding a node
	// whose output is larger is skipped, so that folding never inflates
	// a model (an Expand or Tile of a small constant).
	FoldLimit int64
	// Opset is the ai.onnx opset the fusions may use ops of (0: the
	// model's). LayerNormalization needs 17, Gelu 20, Attention 23.
	Opset int64
}

// DefaultFoldLimit is the default Options.FoldLimit: 1 MiB.
const DefaultFoldLimit = 1 << 20

func (o Options) foldLimit() int64 {
	if o.FoldLimit > 0 {
		return o.FoldLimit
	}
	return DefaultFoldLimit
}

func (o Options) opset(m *canonical.Model) int64 {
	if o.Opset > 0 {
		return o.Opset
	}
	return m.Opset("")
}

// Func is a pass: it rewrites m in place and reports whether it changed
// anything. It must leave a valid model (use-def links right; Run sorts the
// nodes topologically afterwards) or return an error, after which Run
// discards m.
type Func func(m *canonical.Model, opts Options) (changed bool, err error)

// Pass is a named transform.
type Pass struct {
	Name string
	// Doc says in one line what the pass does.
	Doc string
	Run Func
}

// Builtin returns the optimization passes in the order Default runs them.
func Builtin() []Pass {
	return []Pass{
		{"constant-to-initializer", "Constant nodes become initializers", constantToInitializer},
		{"eliminate-noop", "Identity, Dropout (inference), Cast to the same type, Reshape/Flatten/Squeeze/Unsqueeze to the same shape, Transpose pairs and identity permutations, Add 0, Mul/Div by 1, Pow 1 removed", eliminateNoop},
		{"fold-constants", "nodes whose inputs are all constant are computed (up to Options.FoldLimit bytes per output); Shape and shape arithmetic of static shapes become constants", foldConstants},
		{"cse", "nodes computing the same op on the same inputs with the same attributes are merged", cse},
		{"fuse-conv-bn", "Conv followed by BatchNormalization (inference) folds into the Conv weights and bias", fuseConvBN},
		{"fuse-conv-add-mul", "Conv followed by Add or Mul of a per-channel constant folds into the Conv bias or weights", fuseConvAddMul},
		{"fuse-matmul-add", "MatMul of a 2-D constant followed by Add of a constant becomes Gemm; a static N-D input is flattened to 2-D and the result reshaped back (Reshape pairs left around unary ops collapse)", fuseMatMulAdd},
		{"fuse-layernorm", "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add becomes LayerNormalization (opset >= 17)", fuseLayerNorm},
		{"fuse-gelu", "Div/Erf/Add/Mul/Mul becomes Gelu (opset >= 20)", fuseGelu},
		{"fuse-rmsnorm", "Pow/ReduceMean/Add/Sqrt/Div(1, ·)/Mul/Mul (torch.onnx's RMSNorm) becomes RMSNormalization (opset >= 23)", fuseRMSNorm},
		{"fuse-rotary", "x·Unsqueeze(Cos(Concat(f, f))) + rotate_half(x)·Unsqueeze(Sin(…)) (torch.onnx's rotate-half RoPE) becomes RotaryEmbedding (opset >= 23)", fuseRotary},
		{"fuse-attention", "MatMul(Q, Kᵀ)·scale (+mask) → Softmax → MatMul(·, V), with its head split/merge Reshapes and Transposes, becomes Attention (opset >= 23)", fuseAttention},
		{"fuse-swiglu", "Mul(Mul(a, Sigmoid(a)), b) (torch.onnx's SiLU-gated MLP, a and b of one shape) becomes SwiGLU (opset >= 28)", fuseSwiGLU},
		{"eliminate-dead", "nodes whose outputs nothing uses, and unused initializers, removed", eliminateDead},
	}
}

// Names returns the names of the built-in passes in order.
func Names() []string {
	var out []string
	for _, p := range Builtin() {
		out = append(out, p.Name)
	}
	return out
}

// UnknownPassError is a pass name that Lookup does not know.
type UnknownPassError struct{ Name string }

func (e *UnknownPassError) Error() string {
	return fmt.Sprintf("unknown pass %q (known: %s)", e.Name, strings.Join(Names(), ", "))
}

// Lookup returns the built-in passes named in names, in the order given
// (a name may repeat). An empty list gives Builtin().
func Lookup(names []string) ([]Pass, error) {
	if len(names) == 0 {
		return Builtin(), nil
	}
	by := map[string]Pass{}
	for _, p := range Builtin() {
		by[p.Name] = p
	}
	var out []Pass
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		p, ok := by[n]
		if !ok {
			return nil, &UnknownPassError{Name: n}
		}
		out = append(out, p)
	}
	return out, nil
}

// Stats are the size of a model.
type Stats struct {
	Nodes int   `json:"nodes"`
	Bytes int64 `json:"bytes"` // initializer data
	// Ops counts the nodes of the main graph per op type.
	Ops map[string]int `json:"ops,omitempty"`
}

// StatsOf measures m (main graph and subgraphs for nodes; initializers of
// the main graph and subgraphs for bytes).
func StatsOf(m *canonical.Model) Stats {
	s := Stats{Ops: map[string]int{}}
	_ = canonical.WalkGraphs(m.Graph, func(g *canonical.Graph, _ string) error {
		s.Nodes += len(g.Nodes)
		for _, n := range g.Nodes {
			if g == m.Graph {
				s.Ops[n.OpType]++
			}
		}
		for _, v := range g.Initializers {
			if b, err := v.Const.ByteSize(); err == nil {
				s.Bytes += b
			}
		}
		return nil
	})
	return s
}

// OpsString lists op counts as "Conv 20, Relu 17", most frequent first.
func (s Stats) OpsString() string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range s.Ops {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", e.k, e.v)
	}
	return b.String()
}
