package sklearn

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// graph emits the nodes and constants of the ONNX graph into a canonical
// builder; names are made unique with a counter.
type graph struct {
	b *build.Builder
	n int
	// prefix names the current pipeline step ("step1_").
	prefix string
	// err is the first error met while emitting.
	err error
}

// fail records the first error met while emitting.
func (g *graph) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

func (g *graph) name(base string) string {
	for {
		g.n++
		if s := fmt.Sprintf("%s%s_%d", g.prefix, base, g.n); !g.b.Used(s) {
			g.b.Reserve(s)
			return s
		}
	}
}

// op adds a node with one output and returns the output's name.
func (g *graph) op(opType string, in []string, attrs ...*canonical.Attribute) string {
	out := g.name(opType)
	g.b.NodeIn("", opType, out, in, []string{out}, attrs...)
	return out
}

// opTo adds a node whose output is named out.
func (g *graph) opTo(out, opType string, in []string, attrs ...*canonical.Attribute) {
	g.b.NodeIn("", opType, g.name(opType), in, []string{out}, attrs...)
}

// double adds a DOUBLE constant of the given dims.
func (g *graph) double(base string, dims []int64, v []float64) string {
	return g.b.ConstNamed(canonical.Float64Tensor(g.name(base), dims, v))
}

func (g *graph) scalar(v float64) string { return g.double("c", nil, []float64{v}) }

// row adds a [1, len(v)] constant, broadcast over the rows.
func (g *graph) row(base string, v []float64) string {
	return g.double(base, []int64{1, int64(len(v))}, v)
}

// matrix adds m as a [r, c] constant.
func (g *graph) matrix(base string, m *mat) string {
	return g.double(base, []int64{int64(m.r), int64(m.c)}, m.d)
}

func (g *graph) int64s(base string, dims []int64, v []int64) string {
	return g.b.ConstNamed(canonical.Int64Tensor(g.name(base), dims, v))
}

// affine is x w + b (w [F,K], b [K] or nil).
func (g *graph) affine(x string, w *mat, b []float64) string {
	y := g.op("MatMul", []string{x, g.matrix("W", w)})
	if b != nil {
		y = g.op("Add", []string{y, g.row("B", b)})
	}
	return y
}

// sumRows is ReduceSum over axis 1, keeping it ([N,1]).
func (g *graph) sumRows(x string) string {
	return g.op("ReduceSum", []string{x, g.int64s("axes", []int64{1}, []int64{1})}, canonical.IntAttr("keepdims", 1))
}

// pick is classes[idx] for int64 indices idx of any shape.
func (g *graph) pick(classes []int64, idx string) string {
	return g.op("Gather", []string{g.int64s("classes", []int64{int64(len(classes))}, classes), idx}, canonical.IntAttr("axis", 0))
}

// labelArgmax is classes[argmax(scores, axis 1)], [N].
func (g *graph) labelArgmax(classes []int64, scores string) string {
	return g.pick(classes, g.op("ArgMax", []string{scores}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0)))
}

// labelPositive is classes[scores > thr] for scores [N,1], as [N].
func (g *graph) labelPositive(classes []int64, scores string, thr float64) string {
	gt := g.op("Greater", []string{scores, g.scalar(thr)})
	idx := g.op("Cast", []string{gt}, canonical.IntAttr("to", int64(canonical.Int64)))
	return g.flatten(g.pick(classes, idx))
}

// flatten reshapes to [N].
func (g *graph) flatten(x string) string {
	return g.op("Reshape", []string{x, g.int64s("shape", []int64{1}, []int64{-1})})
}

// twoColumns is [1-p, p] for p [N,1].
func (g *graph) twoColumns(p string) string {
	q := g.op("Sub", []string{g.scalar(1), p})
	return g.op("Concat", []string{q, p}, canonical.IntAttr("axis", 1))
}
