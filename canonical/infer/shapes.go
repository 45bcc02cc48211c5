package infer

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// broadcastDims applies multidirectional (numpy) broadcasting to two dims.
func broadcastDim(a, b dim) dim {
	switch {
	case a.Known && a.Value == 1:
		return b
	case b.Known && b.Value == 1:
		return a
	case a.Known && b.Known:
		if a.Value == b.Value {
			return a
		}
		return dim{}
	case a.Known:
		return a // b must be a.Value (or 1, which would give a)
	case b.Known:
		return b
	case a.Param != "" && a.Param == b.Param:
		return a
	}
	return dim{}
}

// broadcast returns the broadcast shape of ss, unranked when one is.
func broadcast(ss ...shape) shape {
	r := 0
	for _, s := range ss {
		if !s.ranked {
			return unranked
		}
		if s.rank() > r {
			r = s.rank()
		}
	}
	out := make([]dim, r)
	for i := range out {
		out[i] = kd(1)
	}
	for _, s := range ss {
		off := r - s.rank()
		for i, d := range s.dims {
			out[off+i] = broadcastDim(out[off+i], d)
		}
	}
	return ranked(out)
}

// broadcastConflict describes two known dims that cannot broadcast, or "".
func broadcastConflict(ss ...shape) string {
	r := 0
	for _, s := range ss {
		if !s.ranked {
			return ""
		}
		r = max(r, s.rank())
	}
	for i := 1; i <= r; i++ {
		var seen int64 = 1
		for _, s := range ss {
			if s.rank() < i {
				continue
			}
			d := s.dims[s.rank()-i]
			if !d.Known || d.Value == 1 {
				continue
			}
			if seen != 1 && d.Value != seen {
				return fmt.Sprintf("shapes %s cannot be broadcast: dim %d is %d and %d", shapesString(ss), r-i, seen, d.Value)
			}
			seen = d.Value
		}
	}
	return ""
}

func shapesString(ss []shape) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		ds := make([]string, len(s.dims))
		for k, d := range s.dims {
			ds[k] = dimString(d)
		}
		parts[i] = "[" + strings.Join(ds, ",") + "]"
	}
	return strings.Join(parts, " and ")
}

func normAxis(a int64, r int) int {
	if a < 0 {
		a += int64(r)
	}
	return int(a)
}

func validAxis(a, r int) bool { return a >= 0 && a < r }

// dimMul multiplies dims: known products, x*1 = x.
func dimMul(a, b dim) dim {
	switch {
	case a.Known && b.Known:
		return kd(a.Value * b.Value)
	case a.Known && a.Value == 1:
		return b
	case b.Known && b.Value == 1:
		return a
	case a.Known && a.Value == 0, b.Known && b.Value == 0:
		return kd(0)
	}
	return dim{}
}

func dimAdd(a, b dim) dim {
	switch {
	case a.Known && b.Known:
		return kd(a.Value + b.Value)
	case a.Known && a.Value == 0:
		return b
	case b.Known && b.Value == 0:
		return a
	}
	return dim{}
}

func dimSub(a, b dim) dim {
	switch {
	case a.Known && b.Known:
		return kd(a.Value - b.Value)
	case b.Known && b.Value == 0:
		return a
	}
	return dim{}
}

func dimDiv(a, b dim) dim {
	switch {
	case a.Known && b.Known && b.Value != 0:
		return kd(floorDiv(a.Value, b.Value))
	case b.Known && b.Value == 1:
		return a
	}
	return dim{}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func prod(ds []dim) dim {
	p := kd(1)
	for _, d := range ds {
		p = dimMul(p, d)
	}
	return p
}

func copyDims(ds []dim) []dim { return append([]dim{}, ds...) }

func unknownDims(n int) []dim { return make([]dim, n) }

// symbolicQuotient tries total(in) / prod(others) symbolically: the dims
// of in and others as multisets of symbols and a known product.
func symbolicQuotient(in []dim, others []dim) dim {
	syms := map[string]int{}
	kn := int64(1)
	for _, d := range in {
		switch {
		case d.Known:
			kn *= d.Value
		case d.Param != "":
			syms[d.Param]++
		default:
			return dim{}
		}
	}
	ko := int64(1)
	for _, d := range others {
		switch {
		case d.Known:
			ko *= d.Value
		case d.Param != "":
			if syms[d.Param] == 0 {
				return dim{}
			}
			syms[d.Param]--
		default:
			return dim{}
		}
	}
	var left []string
	for s, n := range syms {
		for ; n > 0; n-- {
			left = append(left, s)
		}
	}
	if ko == 0 || kn%ko != 0 {
		return dim{}
	}
	q := kn / ko
	switch {
	case len(left) == 0:
		return kd(q)
	case len(left) == 1 && q == 1:
		return dim{Param: left[0]}
	}
	return dim{}
}

// --- constant evaluation helpers ---

func (c *cval) isScalarLike() bool { return c.numel() == 1 }

// elemwise evaluates f over broadcast int inputs; nil when shapes do not
// broadcast simply (only equal shapes and single elements are handled).
func elemwiseInts(dt canonical.DataType, f func(ds []dim) dim, in ...*cval) *cval {
	n := 1
	var shp []int64
	for _, x := range in {
		if x == nil || x.ints == nil && x.fl == nil {
			return nil
		}
		if x.numel() != 1 {
			if n != 1 && x.numel() != n {
				return nil
			}
			n = x.numel()
			shp = x.shape
		}
	}
	if shp == nil {
		// All single elements: the result has the largest rank.
		for _, x := range in {
			if len(x.shape) > len(shp) {
				shp = x.shape
			}
		}
	} else {
		for _, x := range in {
			if x.numel() == n && len(x.shape) > len(shp) {
				shp = x.shape
			}
		}
	}
	out := make([]dim, n)
	args := make([]dim, len(in))
	for i := 0; i < n; i++ {
		for k, x := range in {
			j := i
			if x.numel() == 1 {
				j = 0
			}
			if x.ints != nil {
				args[k] = x.ints[j]
			} else {
				args[k] = kd(int64(x.fl[j]))
			}
		}
		out[i] = f(args)
	}
	return intCval(dt, append([]int64{}, shp...), out)
}

func elemwiseFloats(dt canonical.DataType, f func(xs []float64) float64, in ...*cval) *cval {
	n := 1
	var shp []int64
	fs := make([][]float64, len(in))
	for k, x := range in {
		v, ok := x.floats()
		if !ok {
			return nil
		}
		fs[k] = v
		if len(v) != 1 {
			if n != 1 && len(v) != n {
				return nil
			}
			n = len(v)
			shp = x.shape
		}
	}
	if shp == nil {
		for _, x := range in {
			if len(x.shape) > len(shp) {
				shp = x.shape
			}
		}
	}
	out := make([]float64, n)
	args := make([]float64, len(in))
	for i := 0; i < n; i++ {
		for k := range in {
			j := i
			if len(fs[k]) == 1 {
				j = 0
			}
			args[k] = fs[k][j]
		}
		out[i] = f(args)
	}
	return &cval{dt: dt, shape: append([]int64{}, shp...), fl: out}
}
