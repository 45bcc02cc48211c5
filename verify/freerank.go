package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// freeRankRows is the length of the 1-D input generated for an input of
// unknown rank that only elementwise ops with scalar operands read.
const freeRankRows = 64

// freeRankShape is the shape generated for a graph input of unknown rank
// (a TensorFlow placeholder written without a shape) when how the graph
// uses it fixes no rank: every use, up to the graph's outputs, is an
// elementwise op — one whose output has its input's shape (Relu, Cast,
// Identity, …) or one that broadcasts (Add, Mul, …) with operands of a
// known shape or computed from the input itself. Any shape then computes;
// the one chosen is the broadcast of those operands' shapes, so that each
// of their values is used, or [64] when they are scalars. ok is false
// when a use needs a rank the graph does not declare.
func freeRankShape(v *canonical.Value) (shape []int64, ok bool) {
	shape, _, ok = FreeRankChoice(v)
	return shape, ok
}

// FreeRankChoice is the shape generated for a graph input of unknown rank
// (freeRankShape) and why, in words for the summary ("rank unknown, read
// by Mul, Add only (elementwise) → [64]: their other operands are
// scalars, so any shape computes").
func FreeRankChoice(v *canonical.Value) (shape []int64, why string, ok bool) {
	var ops []string
	var operands [][]int64
	from := map[*canonical.Value]bool{v: true}
	queue := []*canonical.Value{v}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, u := range x.Uses() {
			n := u.Node
			if !slices.Contains(ops, n.OpType) {
				ops = append(ops, n.OpType)
			}
			switch {
			case sameShape[n.OpType] && u.Index == 0 && n.OpType != "BatchNormalization" && n.OpType != "InstanceNormalization":
			case broadcastOps[n.OpType]:
				for _, w := range n.Inputs {
					if w == nil || from[w] {
						continue
					}
					s, known := knownDims(w)
					if c := constTensor(w); c != nil {
						s, known = c.Dims, true
					}
					if !known {
						return nil, "", false
					}
					var okB bool
					if shape, okB = broadcastShapes(shape, s); !okB {
						return nil, "", false
					}
					if len(s) > 0 {
						operands = append(operands, s)
					}
				}
			default:
				return nil, "", false
			}
			if n.Graph != v.Graph() {
				return nil, "", false
			}
			for _, o := range n.Outputs[:1] {
				if o != nil && !from[o] {
					from[o] = true
					queue = append(queue, o)
				}
			}
		}
	}
	read := "rank unknown, only elementwise ops read it (" + strings.Join(ops, ", ") + ")"
	if len(shape) == 0 {
		return []int64{freeRankRows}, fmt.Sprintf("%s → [%d]: their other operands are scalars, so any shape computes", read, freeRankRows), true
	}
	var ss []string
	for _, o := range operands {
		ss = append(ss, shapeText(o))
	}
	return shape, fmt.Sprintf("%s → %s: the broadcast of their operands' shapes (%s)", read, shapeText(shape), strings.Join(ss, ", ")), true
}

// shapeText writes a shape as [1,3].
func shapeText(s []int64) string {
	p := make([]string, len(s))
	for i, d := range s {
		p[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(p, ",") + "]"
}

// broadcastShapes is numpy's broadcast of a and b.
func broadcastShapes(a, b []int64) ([]int64, bool) {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := append([]int64(nil), a...)
	for i := range b {
		j := len(a) - len(b) + i
		switch {
		case b[i] == out[j] || b[i] == 1:
		case out[j] == 1:
			out[j] = b[i]
		default:
			return nil, false
		}
	}
	return out, true
}
