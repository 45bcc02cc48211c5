package passes

import (
	"errors"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// permOf returns n's Transpose perm when n is a Transpose.
func permOf(n *canonical.Node) ([]int64, bool) {
	if !isOp(n, "Transpose") {
		return nil, false
	}
	p := n.AttrInts("perm", nil)
	return p, p != nil
}

func samePerm(p []int64, q ...int64) bool { return sameDims(p, q) }

// headSplit reports whether x4 ([B, h, L, d]) is Transpose(Reshape(x3,
// [B, L, h, d]), [0, 2, 1, 3]) of a static 3-D x3 [B, L, h*d], each used
// only there (keyT: x4 is Kᵀ [B, h, d, L], perm [0, 2, 3, 1]), and returns
// x3 and the nodes that go with the fusion.
func headSplit(x4 *canonical.Value, keyT bool) (*canonical.Value, []*canonical.Node, bool) {
	tr := producer(x4)
	p, ok := permOf(tr)
	want := []int64{0, 2, 1, 3}
	if keyT {
		want = []int64{0, 2, 3, 1}
	}
	if !ok || !samePerm(p, want...) || !singleUse(x4) {
		return nil, nil, false
	}
	rs := producer(tr.Input(0))
	if !isOp(rs, "Reshape") || !singleUse(tr.Input(0)) || rs.AttrInt("allowzero", 0) != 0 {
		return nil, nil, false
	}
	x3 := rs.Input(0)
	d3, _, ok3 := tensorDims(x3)
	d4, _, ok4 := tensorDims(rs.Output(0))
	if !ok3 || !ok4 || len(d3) != 3 || len(d4) != 4 || d3[0] != d4[0] || d3[1] != d4[1] || d3[2] != d4[2]*d4[3] {
		return nil, nil, false
	}
	return x3, []*canonical.Node{tr, rs}, true
}

// fuseAttention replaces scaled dot-product attention,
//
//	Y = MatMul(Softmax(MatMul(Q, Kᵀ) · scale [+ mask], axis -1), V)
//
// on 4-D [B, heads, L, d] tensors (scale a constant Mul, or Div, or none),
// by ONNX's Attention (opset >= 23) with that scale and the mask as
// attn_mask. Kᵀ given as a Transpose of K loses the Transpose. When Q, K
// and V are split into heads from 3-D [B, L, heads*d] tensors (Reshape,
// Transpose) and Y merged back (Transpose, Reshape), Attention takes and
// gives the 3-D tensors (q_num_heads, kv_num_heads) and those nodes go too.
func fuseAttention(m *canonical.Model, opts Options) (bool, error) {
	g, nm, nodes := fusionScope(m, opts, 23, "Softmax")
	changed := false
	for _, sm := range nodes {
		if sm.Graph != g {
			continue
		}
		if _, ok := floatDims4(sm.Output(0)); !ok {
			continue
		}
		if ax := sm.AttrInt("axis", -1); ax != -1 && ax != 3 {
			continue
		}
		pv := consumer(sm.Output(0))
		if !isOp(pv, "MatMul") || pv.Input(0) != sm.Output(0) {
			continue
		}
		var removed []*canonical.Node
		cur := sm.Input(0)
		// Optional mask, added after the scaling.
		var mask *canonical.Value
		if add := producer(cur); isOp(add, "Add") && singleUse(cur) {
			for i := range 2 {
				p := producer(add.Input(i))
				if (isOp(p, "Mul") || isOp(p, "Div") || isOp(p, "MatMul")) && singleUse(add.Input(i)) {
					mask = add.Input(1 - i)
					cur = add.Input(i)
					removed = append(removed, add)
					break
				}
			}
			if mask == nil {
				continue
			}
			if mt, md, ok, _ := canonical.TensorTypeOf(mask.Type); !ok || mt != canonical.Float || len(md) > 4 {
				continue
			}
		}
		scale := 1.0
		if sc := producer(cur); (isOp(sc, "Mul") || isOp(sc, "Div")) && singleUse(cur) {
			c, ok := scalarValue(constOf(sc.Input(1)))
			x := sc.Input(0)
			if !ok && isOp(sc, "Mul") {
				c, ok = scalarValue(constOf(sc.Input(0)))
				x = sc.Input(1)
			}
			if !ok || c == 0 {
				continue
			}
			if isOp(sc, "Div") {
				c = 1 / c
			}
			scale = c
			cur = x
			removed = append(removed, sc)
		}
		qk := producer(cur)
		if !isOp(qk, "MatMul") || !singleUse(cur) {
			continue
		}
		removed = append(removed, qk, sm, pv)
		q4, kt4, v4 := qk.Input(0), qk.Input(1), pv.Input(1)
		// Dims may be symbolic (a decoder's batch and sequence): each
		// pair must be the same known size or the same named dim.
		qd, ok1 := floatDims4(q4)
		kd, ok2 := floatDims4(kt4)
		vd, ok3 := floatDims4(v4)
		if !ok1 || !ok2 || !ok3 || !qd[0].Same(kd[0]) || !qd[0].Same(vd[0]) || !qd[1].Known ||
			!qd[1].Same(kd[1]) || !qd[1].Same(vd[1]) || !qd[3].Same(kd[2]) || !kd[3].Same(vd[2]) {
			continue
		}
		heads := qd[1].Value
		// The 3-D form: heads split from [B, L, heads*d] and merged back.
		var inputs []*canonical.Value
		var attrs []*canonical.Attribute
		out := pv.Output(0)
		q3, qn, okq := headSplit(q4, false)
		k3, kn, okk := headSplit(kt4, true)
		v3, vn, okv := headSplit(v4, false)
		var merge []*canonical.Node
		if okq && okk && okv {
			if tr := consumer(out); tr != nil {
				if p, ok := permOf(tr); ok && samePerm(p, 0, 2, 1, 3) {
					if rs := consumer(tr.Output(0)); isOp(rs, "Reshape") {
						yd, _, ok := tensorDims(rs.Output(0))
						if ok && len(yd) == 3 && qd[0].Known && qd[2].Known && vd[3].Known &&
							yd[0] == qd[0].Value && yd[1] == qd[2].Value && yd[2] == heads*vd[3].Value {
							merge = []*canonical.Node{tr, rs}
						}
					}
				}
			}
		}
		name := qk.Name
		if name == "" {
			name = "Attention"
		}
		e := build.On(g, nm, name)
		if merge != nil {
			inputs = []*canonical.Value{q3, k3, v3}
			attrs = append(attrs, canonical.IntAttr("q_num_heads", heads), canonical.IntAttr("kv_num_heads", heads))
			out = merge[1].Output(0)
			removed = append(removed, merge...)
			removed = append(removed, qn...)
			removed = append(removed, kn...)
			removed = append(removed, vn...)
		} else {
			k4 := kt4
			if tr := producer(kt4); tr != nil && singleUse(kt4) {
				if p, ok := permOf(tr); ok && len(p) == 4 {
					k4 = nil
					pk := []int64{p[0], p[1], p[3], p[2]}
					if samePerm(pk, 0, 1, 2, 3) {
						k4 = tr.Input(0)
					} else {
						k4 = e.Op("Transpose", []*canonical.Value{tr.Input(0)}, canonical.IntsAttr("perm", pk...))
					}
					removed = append(removed, tr)
				}
			}
			if k4 == kt4 {
				k4 = e.Op("Transpose", []*canonical.Value{kt4}, canonical.IntsAttr("perm", 0, 1, 3, 2))
			}
			inputs = []*canonical.Value{q4, k4, v4}
		}
		if mask != nil {
			// Attention pads a mask shorter than the keys with -inf where
			// Add broadcast it: unless its last dim is the keys' length,
			// it is expanded to that length first.
			if _, md, ok, _ := canonical.TensorTypeOf(mask.Type); !ok || len(md) == 0 || !md[len(md)-1].Same(kd[3]) {
				keys, from := inputs[1], int64(2) // [B, H, T, d]
				if merge != nil {
					from = 1 // [B, T, H·d]
				}
				t := e.Op("Shape", []*canonical.Value{keys}, canonical.IntAttr("start", from), canonical.IntAttr("end", from+1))
				shape := e.Op("Concat", []*canonical.Value{e.Int64s([]int64{3}, 1, 1, 1), t}, canonical.IntAttr("axis", 0))
				mask = e.Op("Expand", []*canonical.Value{mask, shape})
			}
			inputs = append(inputs, mask)
		}
		attrs = append(attrs, canonical.FloatAttr("scale", float32(scale)))
		at := e.Op("Attention", inputs, attrs...)
		if err := e.Err(); err != nil {
			return changed, err
		}
		at.Type = out.Type
		if !bypass(g, out, at) {
			return changed, errAttention
		}
		// Outputs first: each removed node's consumers are gone.
		for i := len(removed) - 1; i >= 0; i-- {
			g.RemoveNode(removed[i])
		}
		changed = true
	}
	return changed, nil
}

// errAttention: the fused Attention could not replace the pattern's
// output (Run rolls the pass back).
var errAttention = errors.New("fuse-attention: cannot replace the attention output")

// floatDims4 returns the dims of a float tensor of rank 4, known or
// symbolic.
func floatDims4(v *canonical.Value) ([]canonical.Dim, bool) {
	if t := constOf(v); t != nil {
		return nil, false
	}
	if v == nil {
		return nil, false
	}
	dt, ds, has, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !has || dt != canonical.Float || len(ds) != 4 {
		return nil, false
	}
	return ds, true
}
