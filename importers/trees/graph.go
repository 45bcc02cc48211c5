package trees

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// graph emits an ensemble's nodes into a canonical builder under the
// names the package chooses (unique within one ensemble's graph).
type graph struct {
	b      *build.Builder
	double bool
	// usesML is set when a node of ai.onnx.ml is added.
	usesML bool
	// input is what the graph reads ("" means InputName); treeIn is what
	// the tree op reads ("" means input).
	input, treeIn string
}

func (g *graph) in() string {
	if g.input == "" {
		return InputName
	}
	return g.input
}

func (g *graph) treeInput() string {
	if g.treeIn == "" {
		return g.in()
	}
	return g.treeIn
}

func (g *graph) add(op, domain, name string, in, out []string, attrs ...*canonical.Attribute) {
	if domain != "" {
		g.usesML = true
	}
	g.b.NodeIn(domain, op, name, in, out, attrs...)
}

func (g *graph) init(t *canonical.Tensor) string { return g.b.ConstNamed(t) }

// elem is the model's floating-point element type.
func (g *graph) elem() canonical.DataType {
	if g.double {
		return canonical.Double
	}
	return canonical.Float
}

// scalar is a constant of the model's element type.
func (g *graph) scalar(name string, v float64) string {
	return g.init(realTensor(name, nil, []float64{v}, g.double))
}

func f32s(v []float64) []float32 {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return f
}

// realTensor is a float (or, when double, double) tensor of v.
func realTensor(name string, dims []int64, v []float64, double bool) *canonical.Tensor {
	if double {
		return canonical.Float64Tensor(name, dims, v)
	}
	return canonical.Float32Tensor(name, dims, f32s(v))
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
