package passes

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// fuseRotary replaces the rotate-half rotary position embedding that
// torch.onnx writes for Llama-style models by RotaryEmbedding (opset >= 23):
//
//	E = Concat(f, f, -1)                 f: [B, S, D/2] angles
//	y = Add(Mul(x, Unsqueeze(Cos(E), 1)),
//	        Mul(Concat(Neg(Slice(x, D/2:)), Slice(x, :D/2), -1), Unsqueeze(Sin(E), 1)))
//
// with x [B, heads, S, D]; it becomes RotaryEmbedding(x, Cos(f), Sin(f))
// (caches of shape [B, S, D/2], no position_ids, not interleaved).
func fuseRotary(m *canonical.Model, opts Options) (bool, error) {
	g, nm, nodes := fusionScope(m, opts, 23, "Add")
	changed := false
	for _, add := range nodes {
		if add.Graph != g {
			continue
		}
		r, ok := matchRotary(add)
		if !ok {
			continue
		}
		e := build.On(g, nm, add.Name)
		cos := e.Op("Cos", []*canonical.Value{r.angles})
		sin := e.Op("Sin", []*canonical.Value{r.angles})
		y := e.Op("RotaryEmbedding", []*canonical.Value{r.x, cos, sin}, canonical.IntAttr("interleaved", 0))
		if err := e.Err(); err != nil {
			return changed, err
		}
		y.Type = add.Output(0).Type
		if !bypass(g, add.Output(0), y) {
			removeNodes(g, e.Added...)
			continue
		}
		removeNodes(g, add)
		for _, n := range r.own {
			if len(n.Output(0).Uses()) == 0 && !isGraphOutput(n.Output(0)) {
				removeNodes(g, n)
			}
		}
		changed = true
	}
	return changed, nil
}

// rotary is a matched rotate-half rotary embedding.
type rotary struct {
	x, angles *canonical.Value
	// own are the nodes of the pattern that go when nothing else reads
	// them, consumers first.
	own []*canonical.Node
}

// matchRotary matches the pattern of fuseRotary ending at add.
func matchRotary(add *canonical.Node) (rotary, bool) {
	var none rotary
	for i := range 2 {
		mc, ms := producer(add.Input(i)), producer(add.Input(1-i))
		if !isOp(mc, "Mul") || !isOp(ms, "Mul") {
			continue
		}
		for j := range 2 {
			x, cosU := mc.Input(j), mc.Input(1-j)
			ang, ok := trigOf(cosU, "Cos")
			if !ok {
				continue
			}
			_, xd, okx, _ := canonical.TensorTypeOf(x.Type)
			if !okx || len(xd) != 4 || !xd[3].Known || xd[3].Value%2 != 0 {
				continue
			}
			half := xd[3].Value / 2
			for k := range 2 {
				rot, sinU := ms.Input(k), ms.Input(1-k)
				ang2, ok := trigOf(sinU, "Sin")
				if !ok || ang2 != ang {
					continue
				}
				cat := producer(rot)
				if !isOp(cat, "Concat") || len(cat.Inputs) != 2 || !lastAxis(cat.AttrInt("axis", 0), 4) {
					continue
				}
				neg := producer(cat.Input(0))
				if !isOp(neg, "Neg") || !sliceOf(producer(neg.Input(0)), x, half, -1) || !sliceOf(producer(cat.Input(1)), x, 0, half) {
					continue
				}
				own := []*canonical.Node{mc, ms, cat, neg, producer(neg.Input(0)), producer(cat.Input(1))}
				return rotary{x: x, angles: ang, own: own}, true
			}
		}
	}
	return none, false
}

// trigOf returns f when v is Unsqueeze(op(Concat(f, f, -1)), [1]).
func trigOf(v *canonical.Value, op string) (*canonical.Value, bool) {
	u := producer(v)
	if !isOp(u, "Unsqueeze") {
		return nil, false
	}
	axes := u.AttrInts("axes", nil)
	if axes == nil {
		if t := constOf(u.Input(1)); t != nil {
			axes, _ = t.Int64s()
		}
	}
	if len(axes) != 1 || axes[0] != 1 {
		return nil, false
	}
	t := producer(u.Input(0))
	if !isOp(t, op) {
		return nil, false
	}
	cat := producer(t.Input(0))
	if !isOp(cat, "Concat") || len(cat.Inputs) != 2 || cat.Input(0) != cat.Input(1) {
		return nil, false
	}
	f := cat.Input(0)
	_, fd, ok, _ := canonical.TensorTypeOf(f.Type)
	if !ok || len(fd) != 3 || !lastAxis(cat.AttrInt("axis", 0), 3) {
		return nil, false
	}
	return f, true
}

func lastAxis(axis int64, rank int) bool { return axis == -1 || axis == int64(rank-1) }

// sliceOf reports whether n is Slice(x, [from], [to], [last axis]) with
// unit step; to < 0 means to the end.
func sliceOf(n *canonical.Node, x *canonical.Value, from, to int64) bool {
	if !isOp(n, "Slice") || n.Input(0) != x || len(n.Inputs) < 4 {
		return false
	}
	ints := func(i int) []int64 {
		t := constOf(n.Input(i))
		if t == nil {
			return nil
		}
		v, err := t.Int64s()
		if err != nil {
			return nil
		}
		return v
	}
	s, e, a := ints(1), ints(2), ints(3)
	if len(s) != 1 || len(e) != 1 || len(a) != 1 || !lastAxis(a[0], 4) || s[0] != from {
		return false
	}
	if len(n.Inputs) > 4 && n.Input(4) != nil {
		if st := ints(4); len(st) != 1 || st[0] != 1 {
			return false
		}
	}
	if to < 0 {
		return e[0] >= 1<<31
	}
	return e[0] == to
}
