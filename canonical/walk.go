package canonical

import "fmt"

// MainPath is the path Walk and WalkGraphs give the graph they start from.
const MainPath = "main"

// Walk calls fn on every node of g and of every subgraph below it (If
// branches, Loop and Scan bodies, at any depth). A node's subgraphs are
// visited before the node itself, so that fn sees a node after everything it
// holds; nodes of a graph are visited in order.
//
// path names the graph a node is in: "main" for g, and for a subgraph the
// path of its graph, "/", the holding node's label (its name, or
// OpType_index when it has none), "." and the attribute name, with "[k]"
// appended for the k-th graph of a GRAPHS attribute:
// "main/loop1.body", "main/If_3.then_branch", "main/scan.graphs[1]".
// index is the node's position in its graph's Nodes.
//
// Each graph's node list is read once, before its nodes are visited: fn may
// add or remove nodes of the graph it is given (they are not visited). The
// walk stops at the first error fn returns and returns it unchanged, so
// callers can classify it with errors.As.
func Walk(g *Graph, fn func(g *Graph, path string, index int, n *Node) error) error {
	return WalkFrom(g, MainPath, fn)
}

// WalkFrom is Walk with path as the name of g (for example "function F" for
// a function body).
func WalkFrom(g *Graph, path string, fn func(g *Graph, path string, index int, n *Node) error) error {
	if g == nil {
		return nil
	}
	nodes := append([]*Node(nil), g.Nodes...)
	for idx, n := range nodes {
		for _, a := range n.Attributes {
			if a.G != nil {
				if err := WalkFrom(a.G, SubgraphPath(path, n, idx, a.Name, -1), fn); err != nil {
					return err
				}
			}
			for k, sg := range a.Graphs {
				if err := WalkFrom(sg, SubgraphPath(path, n, idx, a.Name, k), fn); err != nil {
					return err
				}
			}
		}
		if err := fn(g, path, idx, n); err != nil {
			return err
		}
	}
	return nil
}

// WalkGraphs calls fn on g and then on every subgraph below it, depth
// first in node and attribute order, with the paths Walk uses. It stops at
// the first error fn returns and returns it unchanged.
func WalkGraphs(g *Graph, fn func(g *Graph, path string) error) error {
	return walkGraphs(g, MainPath, fn)
}

// WalkGraphsFrom is WalkGraphs with path as the name of g.
func WalkGraphsFrom(g *Graph, path string, fn func(g *Graph, path string) error) error {
	return walkGraphs(g, path, fn)
}

func walkGraphs(g *Graph, path string, fn func(g *Graph, path string) error) error {
	if g == nil {
		return nil
	}
	if err := fn(g, path); err != nil {
		return err
	}
	nodes := append([]*Node(nil), g.Nodes...)
	for idx, n := range nodes {
		for _, a := range n.Attributes {
			if a.G != nil {
				if err := walkGraphs(a.G, SubgraphPath(path, n, idx, a.Name, -1), fn); err != nil {
					return err
				}
			}
			for k, sg := range a.Graphs {
				if err := walkGraphs(sg, SubgraphPath(path, n, idx, a.Name, k), fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SubgraphPath is the path Walk gives the subgraph held by attribute attr
// of n, the index-th node of the graph at path; k is the position in a
// GRAPHS attribute, or -1 for a GRAPH attribute.
func SubgraphPath(path string, n *Node, index int, attr string, k int) string {
	if k < 0 {
		return path + "/" + NodeLabel(n, index) + "." + attr
	}
	return fmt.Sprintf("%s/%s.%s[%d]", path, NodeLabel(n, index), attr, k)
}

// NodeLabel names the index-th node of a graph in paths: its name, or
// OpType_index when it has none.
func NodeLabel(n *Node, index int) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("%s_%d", n.OpType, index)
}

// HasExternalData reports whether any tensor of m (initializers and node
// attribute tensors, in subgraphs too) still lives in an external data
// file: the model was read with external data and keeps some of it.
func HasExternalData(m *Model) bool {
	found := false
	_ = WalkGraphs(m.Graph, func(g *Graph, _ string) error {
		for _, v := range g.Initializers {
			if v.Const != nil && v.Const.IsExternal() {
				found = true
			}
		}
		for _, n := range g.Nodes {
			for _, a := range n.Attributes {
				if a.T != nil && a.T.IsExternal() {
					found = true
				}
			}
		}
		return nil
	})
	return found
}
