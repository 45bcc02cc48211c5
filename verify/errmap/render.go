package errmap

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// MaxDrawn is the largest graph SVG draws; larger maps are given as
// tables only.
const MaxDrawn = 3000

// Colours of the picture, by status (see docs/verify.md).
const (
	colourUnmatched = "#e0e0e0"
	colourClose     = "#a6d96a" // within a tenth of the tolerance
	colourWithin    = "#fee08b" // within tolerance
	colourDiverged  = "#f46d43" // beyond tolerance, its inputs too
	colourJump      = "#7b2cbf" // beyond tolerance, its inputs within it
	colourPath      = "#d7191c"
)

// Colour returns the fill of a node in the picture.
func Colour(ne *NodeError) string {
	switch {
	case ne.Status != "match" && ne.Status != "diverged":
		return colourUnmatched
	case ne.Jump:
		return colourJump
	case ne.Status == "diverged":
		return colourDiverged
	case ne.Ratio <= 0.1:
		return colourClose
	}
	return colourWithin
}

// layout places the nodes in layers (longest path from the graph inputs)
// ordered within a layer by the mean position of their producers.
func layout(m *Map) (layer []int, pos []float64, layers [][]int) {
	layer = make([]int, len(m.Nodes))
	for i := range m.Nodes {
		for _, j := range m.Nodes[i].From {
			layer[i] = max(layer[i], layer[j]+1)
		}
		for len(layers) <= layer[i] {
			layers = append(layers, nil)
		}
		layers[layer[i]] = append(layers[layer[i]], i)
	}
	pos = make([]float64, len(m.Nodes))
	for _, l := range layers {
		key := map[int]float64{}
		for k, i := range l {
			from := m.Nodes[i].From
			if len(from) == 0 {
				key[i] = float64(k)
				continue
			}
			s := 0.0
			for _, j := range from {
				s += pos[j]
			}
			key[i] = s / float64(len(from))
		}
		sort.SliceStable(l, func(x, y int) bool { return key[l[x]] < key[l[y]] })
		for k, i := range l {
			pos[i] = float64(k)
		}
	}
	return layer, pos, layers
}

// SVG draws the map as a layered graph: nodes coloured by error ratio, the
// divergence path in red, and for each node a panel with both tensors'
// statistics that shows while the node is focused (clicked). It uses no
// script and no link; "" for graphs above MaxDrawn nodes.
func SVG(m *Map) string {
	if len(m.Nodes) == 0 || len(m.Nodes) > MaxDrawn {
		return ""
	}
	const w, h, gx, gy, pad = 132, 30, 14, 34, 10
	layer, pos, layers := layout(m)
	width := 0
	for _, l := range layers {
		width = max(width, len(l))
	}
	W := max(pad*2+width*(w+gx), 420)
	H := pad*2 + len(layers)*(h+gy) + 150 // room for a panel under the last layer
	x := func(i int) int {
		n := len(layers[layer[i]])
		off := (W - n*(w+gx)) / 2
		return off + int(pos[i])*(w+gx)
	}
	y := func(i int) int { return pad + layer[i]*(h+gy) }
	onPath := map[int]bool{}
	for _, i := range m.Path {
		onPath[i] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="errmap" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="error map">`, W, H, W, H)
	b.WriteString("<style>.emt{display:none}.emn{cursor:pointer}.emn:focus{outline:none}.emn:focus rect{stroke:#000;stroke-width:3}")
	for i := range m.Nodes {
		fmt.Fprintf(&b, "#emn-%d:focus~#emt-%d{display:inline}", i, i)
	}
	b.WriteString("</style>")
	for i := range m.Nodes {
		for _, j := range m.Nodes[i].From {
			col, sw := "#999", 1
			if onPath[i] && onPath[j] {
				col, sw = colourPath, 3
			}
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%d"/>`,
				x(j)+w/2, y(j)+h, x(i)+w/2, y(i), col, sw)
		}
	}
	for i := range m.Nodes {
		ne := &m.Nodes[i]
		stroke, sw, text := "#666", 1, "#000"
		if onPath[i] {
			stroke, sw = colourPath, 3
		}
		if ne.Jump {
			text = "#fff"
		}
		fmt.Fprintf(&b, `<g class="emn" id="emn-%d" tabindex="0"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="%s" stroke="%s" stroke-width="%d"/>`,
			i, html.EscapeString(nodeTitle(ne)), x(i), y(i), w, h, Colour(ne), stroke, sw)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="middle" fill="%s">%s</text>`, x(i)+w/2, y(i)+12, text, html.EscapeString(clip(ne.OpType, 22)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9" text-anchor="middle" fill="%s">%s</text></g>`, x(i)+w/2, y(i)+24, text, html.EscapeString(clipHead(ne.Node, 24)))
	}
	for i := range m.Nodes {
		ne := &m.Nodes[i]
		lines := panelLines(ne)
		pw, ph := 360, 14*len(lines)+8
		px := min(max(x(i), 0), W-pw)
		py := y(i) + h + 2
		if py+ph > H {
			py = max(y(i)-ph-2, 0)
		}
		fmt.Fprintf(&b, `<g class="emt" id="emt-%d"><rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#333"/>`, i, px, py, pw, ph)
		for k, l := range lines {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" font-family="monospace">%s</text>`, px+6, py+14*(k+1), html.EscapeString(l))
		}
		b.WriteString("</g>")
	}
	b.WriteString("</svg>")
	return b.String()
}

func nodeTitle(ne *NodeError) string {
	return strings.Join(panelLines(ne), "\n")
}

// panelLines are the lines of a node's statistics panel.
func panelLines(ne *NodeError) []string {
	l := []string{fmt.Sprintf("%s (%s) #%d: %s", ne.Node, ne.OpType, ne.Index, ne.Status)}
	if ne.Status == "match" || ne.Status == "diverged" {
		unit := ""
		if ne.Integer {
			unit = " steps"
		}
		l = append(l, fmt.Sprintf("max %.3g%s, mean %.3g%s, ratio %.3g, growth %.3g", ne.MaxAbs, unit, ne.MeanAbs, unit, ne.Ratio, ne.Growth))
	}
	if ne.Detail != "" {
		l = append(l, ne.Detail)
	}
	if len(ne.Weights) > 0 {
		l = append(l, "weights differ: "+strings.Join(ne.Weights, ", "))
	}
	if ne.Source != nil {
		l = append(l, "source "+clip(ne.SourceTensor, 30)+": "+statsText(ne.Source))
	}
	if ne.Result != nil {
		l = append(l, "result "+clip(ne.Output, 30)+": "+statsText(ne.Result))
	}
	return l
}

func statsText(s *Stats) string {
	t := fmt.Sprintf("%s%v min %.3g max %.3g mean %.3g std %.3g", s.DType, s.Shape, s.Min, s.Max, s.Mean, s.Std)
	if s.NonFinite > 0 {
		t += fmt.Sprintf(" non-finite %d", s.NonFinite)
	}
	return t
}

// clipHead keeps the end of s (a node name's last scopes say most).
func clipHead(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Summary says in one line where the error starts.
func (m *Map) Summary() string {
	if m.First < 0 {
		return fmt.Sprintf("error map: %d node(s) compared (%d without a counterpart in the source), none where the error starts beyond tolerance", m.Compared, m.Unmatched)
	}
	f := &m.Nodes[m.First]
	s := fmt.Sprintf("error map: the error starts at %s (%s), %.3g× the tolerance with its inputs within it; %d of %d compared node(s) beyond tolerance",
		f.Node, f.OpType, f.Ratio, m.Diverged, m.Compared)
	if len(f.Weights) > 0 {
		s += "; its weights differ from the source's: " + strings.Join(f.Weights, ", ")
	}
	return s
}

// Markdown writes the top ranked nodes as a table.
func Markdown(m *Map, top int) string {
	var b strings.Builder
	b.WriteString(m.Summary() + "\n\n")
	b.WriteString("| rank | node | op | source tensor | status | max abs | mean abs | ratio | input ratio | growth |\n|---:|---|---|---|---|---:|---:|---:|---:|---:|\n")
	for k, ne := range m.Top(top) {
		st := ne.Status
		if ne.Jump {
			st = "**starts here**"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | `%s` | %s | %.3g | %.3g | %.3g | %.3g | %.3g |\n", k+1,
			strings.ReplaceAll(ne.Node, "|", `\|`), ne.OpType, strings.ReplaceAll(ne.SourceTensor, "|", `\|`), st,
			ne.MaxAbs, ne.MeanAbs, ne.Ratio, ne.InputRatio, ne.Growth)
	}
	if rows := m.StepsTable(); len(rows) > 0 {
		b.WriteString("\nSteps per integer tensor (elements per difference in quantization steps; quantized: the source's float quantized with the node's scale and zero point):\n\n")
		b.WriteString("| node | op | source tensor |")
		for _, bin := range NewStepHistogram() {
			b.WriteString(" " + bin.Label + " |")
		}
		b.WriteString("\n|---|---|---|" + strings.Repeat("---:|", len(NewStepHistogram())) + "\n")
		for _, ne := range rows {
			src := strings.ReplaceAll(ne.SourceTensor, "|", `\|`)
			if ne.Quantized {
				src += " (quantized)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s` |", strings.ReplaceAll(ne.Node, "|", `\|`), ne.OpType, src)
			for _, bin := range ne.Steps {
				fmt.Fprintf(&b, " %d |", bin.Count)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Text is the map for people: the summary, the top ranked nodes, and
// the steps of every integer tensor, one line each.
func (m *Map) Text(top int) string {
	var b strings.Builder
	b.WriteString(m.Summary() + "\n")
	for k, ne := range m.Top(top) {
		st := ne.Status
		if ne.Jump {
			st = "starts here"
		}
		fmt.Fprintf(&b, "  %d. %s (%s) %s: max %.3g, ratio %.3g, growth %.3g\n", k+1, ne.Node, ne.OpType, st, ne.MaxAbs, ne.Ratio, ne.Growth)
	}
	if rows := m.StepsTable(); len(rows) > 0 {
		b.WriteString("  steps per integer tensor (elements per difference in quantization steps):\n")
		for _, ne := range rows {
			q := ""
			if ne.Quantized {
				q = ", against the source's " + ne.SourceTensor + " quantized alike"
			}
			fmt.Fprintf(&b, "    %s (%s%s): %s\n", ne.Node, ne.OpType, q, StepsText(ne.Steps))
		}
	}
	return b.String()
}

// StepsTable returns the nodes compared in quantization steps, in
// topological order: the per-tensor steps table of an integer model.
func (m *Map) StepsTable() []NodeError {
	var out []NodeError
	for _, ne := range m.Nodes {
		if len(ne.Steps) > 0 {
			out = append(out, ne)
		}
	}
	return out
}

// StepsText is one line of a node's steps histogram ("0:120 1:3"),
// the bins that hold elements.
func StepsText(bins []StepBin) string {
	var parts []string
	for _, s := range bins {
		if s.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", s.Label, s.Count))
		}
	}
	return strings.Join(parts, " ")
}

// ModelExplorer returns the map as Model Explorer's per-node data JSON
// (one graph, "main"): each compared node's error ratio keyed by node id
// (the node name, else "#INDEX OP"), with a gradient from green (0) to red
// (the worst ratio, at least 1), to load with "Add per-node data".
func ModelExplorer(m *Map) ([]byte, error) {
	type value struct {
		Value float64 `json:"value"`
	}
	type stop struct {
		Stop    float64 `json:"stop"`
		BgColor string  `json:"bgColor"`
	}
	type graph struct {
		Results  map[string]value `json:"results"`
		Gradient []stop           `json:"gradient"`
	}
	g := graph{Results: map[string]value{}}
	for i := range m.Nodes {
		ne := &m.Nodes[i]
		if ne.Status != "match" && ne.Status != "diverged" {
			continue
		}
		g.Results[ne.Node] = value{Value: min(ne.Ratio, math.MaxFloat32)}
	}
	g.Gradient = []stop{{0, colourClose}, {0.5, colourWithin}, {1, colourPath}}
	return json.MarshalIndent(map[string]graph{"main": g}, "", "  ")
}
