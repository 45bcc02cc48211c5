package canonical

import "fmt"

// RemoveInitializer deletes initializer v from g (its uses must be gone).
// It reports whether v was an initializer of g.
func (g *Graph) RemoveInitializer(v *Value) bool {
	for i, w := range g.Initializers {
		if w == v {
			g.Initializers = append(g.Initializers[:i], g.Initializers[i+1:]...)
			listed := false
			for _, in := range g.Inputs {
				listed = listed || in == v
			}
			if !listed && g.values[v.Name] == v {
				delete(g.values, v.Name)
			}
			return true
		}
	}
	return false
}

// RenameValue gives v a new name, which must not be defined in v's graph.
func (g *Graph) RenameValue(v *Value, name string) error {
	vg := v.graph
	if vg == nil {
		vg = g
	}
	if w, dup := vg.values[name]; dup && w != v {
		return fmt.Errorf("graph %q: cannot rename %q to %q: the name is taken", vg.Name, v.Name, name)
	}
	if vg.values[v.Name] == v {
		delete(vg.values, v.Name)
	}
	v.Name = name
	if vg.values == nil {
		vg.values = map[string]*Value{}
	}
	vg.values[name] = v
	if v.Const != nil {
		v.Const.Name = name
	}
	return nil
}

// MoveNodes moves nodes (already in g) so that they stand, in the given
// order, right before node at (or at the end when at is nil).
func (g *Graph) MoveNodes(nodes []*Node, at *Node) {
	move := make(map[*Node]bool, len(nodes))
	for _, n := range nodes {
		move[n] = true
	}
	kept := g.Nodes[:0:0]
	for _, n := range g.Nodes {
		if !move[n] {
			kept = append(kept, n)
		}
	}
	pos := len(kept)
	for i, n := range kept {
		if n == at {
			pos = i
			break
		}
	}
	out := make([]*Node, 0, len(kept)+len(nodes))
	out = append(out, kept[:pos]...)
	out = append(out, nodes...)
	out = append(out, kept[pos:]...)
	g.Nodes = out
}

// RemoveInitializers deletes, in one pass, the initializers of g for which
// drop returns true (their uses must be gone).
func (g *Graph) RemoveInitializers(drop func(*Value) bool) {
	kept := g.Initializers[:0]
	for _, v := range g.Initializers {
		if !drop(v) {
			kept = append(kept, v)
			continue
		}
		listed := false
		for _, in := range g.Inputs {
			listed = listed || in == v
		}
		if !listed && g.values[v.Name] == v {
			delete(g.values, v.Name)
		}
	}
	for i := len(kept); i < len(g.Initializers); i++ {
		g.Initializers[i] = nil
	}
	g.Initializers = kept
}
