package canonical

import "strconv"

// Namer hands out value and node names that nothing in a model uses yet.
// One Namer serves the whole model: ONNX lets a subgraph see the names of
// its enclosing graphs, so a name fresh for the model is fresh everywhere.
//
// A Namer is not safe for concurrent use. Names added to the model by other
// means after NewNamer are not seen: Reserve them.
type Namer struct {
	used map[string]bool
	n    int
}

// NewNamer returns a Namer that avoids every name m uses: graph inputs,
// outputs, initializers, sparse initializers and value_info, node names,
// node inputs and outputs, in the main graph, in every subgraph and in the
// bodies of the model's functions. m may be nil (an empty Namer).
func NewNamer(m *Model) *Namer {
	nm := &Namer{used: map[string]bool{}}
	if m == nil {
		return nm
	}
	nm.ReserveGraph(m.Graph)
	for _, f := range m.Functions {
		nm.ReserveGraph(f.Body)
	}
	return nm
}

// ReserveGraph marks every name used in g and its subgraphs as taken.
func (nm *Namer) ReserveGraph(g *Graph) {
	_ = WalkGraphs(g, func(g *Graph, _ string) error {
		for _, list := range [][]*Value{g.Inputs, g.Outputs, g.Initializers, g.ValueInfo} {
			for _, v := range list {
				if v != nil {
					nm.Reserve(v.Name)
				}
			}
		}
		for _, sp := range g.SparseInitializers {
			nm.Reserve(sp.GetValues().GetName())
		}
		for _, n := range g.Nodes {
			nm.Reserve(n.Name)
			for _, list := range [][]*Value{n.Inputs, n.Outputs} {
				for _, v := range list {
					if v != nil {
						nm.Reserve(v.Name)
					}
				}
			}
		}
		return nil
	})
}

// Reserve marks names as taken ("" is ignored).
func (nm *Namer) Reserve(names ...string) {
	for _, s := range names {
		if s != "" {
			nm.used[s] = true
		}
	}
}

// Release makes name available again (for a node or value that was
// removed or renamed).
func (nm *Namer) Release(name string) { delete(nm.used, name) }

// Used reports whether name is taken.
func (nm *Namer) Used(name string) bool { return nm.used[name] }

// Fresh returns base when it is free, else base_N for the next counter
// value N that makes it free, and marks the result as taken. An empty base
// stands for "onnxconv".
func (nm *Namer) Fresh(base string) string {
	if base == "" {
		base = "onnxconv"
	}
	if !nm.used[base] {
		nm.used[base] = true
		return base
	}
	for {
		nm.n++
		s := base + "_" + strconv.Itoa(nm.n)
		if !nm.used[s] {
			nm.used[s] = true
			return s
		}
	}
}
