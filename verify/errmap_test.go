package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// plantedMap compares resnet_small with a copy whose weight of the n-th
// Conv (topological order) is scaled by 1.5, with the error map, and
// returns the report and the planted node's name.
func plantedMap(t *testing.T, n int) (*Report, string, string) {
	t.Helper()
	ref := loadFixture(t, "resnet_small")
	order, err := ref.Graph.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	var node, weight string
	for _, nd := range order {
		if nd.OpType == "Conv" {
			if n--; n == 0 {
				node, weight = nd.Name, nd.Inputs[1].Name
				break
			}
		}
	}
	if node == "" {
		t.Fatal("resnet_small has too few Conv nodes")
	}
	cand := scaledCopy(t, "resnet_small", weight, 1.5)
	rep, err := Compare(context.Background(), ModelSide("resnet_small/model.onnx", ref), ModelSide("planted.onnx", cand),
		Options{Samples: 1, Gen: GenOptions{Seed: 3}, Map: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Map == nil {
		t.Fatalf("no error map; notes %q", rep.Notes)
	}
	return rep, node, weight
}

// The error map names the Conv whose weight was changed first, as the
// node where the error starts, with the weight; every other diverged node
// is downstream of it (its inputs already differ).
func TestMapNamesPlantedWeight(t *testing.T) {
	rep, node, weight := plantedMap(t, 4)
	m := rep.Map
	if m.Compared != 49 || m.Unmatched != 0 {
		t.Errorf("compared %d, unmatched %d; want all 49 nodes of resnet_small compared", m.Compared, m.Unmatched)
	}
	first := m.Nodes[m.Ranked[0]]
	if first.Node != node || !first.Jump || m.First != first.Index {
		t.Fatalf("first ranked %s (jump %v, first %d), want %s: %s", first.Node, first.Jump, m.First, node, m.Summary())
	}
	if !slices.Contains(first.Weights, weight) {
		t.Errorf("weights %q, want %q named", first.Weights, weight)
	}
	if first.InputRatio > 1 || first.Ratio <= 1 {
		t.Errorf("input ratio %g, ratio %g: want inputs within tolerance and the output beyond", first.InputRatio, first.Ratio)
	}
	jumps := 0
	for _, ne := range m.Nodes {
		if ne.Jump {
			jumps++
		}
		if ne.Index < first.Index && ne.Status != "match" {
			t.Errorf("%s, upstream of the planted node, is %s", ne.Node, ne.Status)
		}
	}
	if jumps != 1 {
		t.Errorf("%d nodes where the error starts, want 1", jumps)
	}
	if len(m.Path) < 2 || m.Path[0] != first.Index || rep.Outputs[0].Pass {
		t.Errorf("path %v from %d; output pass %v", m.Path, first.Index, rep.Outputs[0].Pass)
	}
	// The reports: JSON valid against the schema, Markdown and text
	// naming the node, Model Explorer data giving it a ratio beyond 1.
	checkSchema(t, rep)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "## Error map") || !strings.Contains(md, "| 1 | `"+node+"` | Conv |") {
		t.Errorf("Markdown does not rank %s first:\n%s", node, md)
	}
	dir := t.TempDir()
	if err := WriteReport(filepath.Join(dir, "r.json"), rep); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.modelexplorer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]struct {
		Results map[string]struct{ Value float64 }
	}
	if err := json.Unmarshal(data, &me); err != nil {
		t.Fatal(err)
	}
	if v := me["main"].Results[node].Value; v <= 1 || len(me["main"].Results) != 49 {
		t.Errorf("Model Explorer data: %s = %g over %d nodes", node, v, len(me["main"].Results))
	}
}

// The same model on both sides: every node matches to the bit and no node
// is where an error starts.
func TestMapSelfMatches(t *testing.T) {
	m := loadFixture(t, "resnet_small")
	rep, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), Options{Samples: 1, Map: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Map.First != -1 || rep.Map.Diverged != 0 || rep.Map.Compared != 49 {
		t.Fatalf("%s", rep.Map.Summary())
	}
	for _, ne := range rep.Map.Nodes {
		if ne.MaxAbs != 0 {
			t.Errorf("%s: max abs %g on the same model", ne.Node, ne.MaxAbs)
		}
	}
}

// TestMapHTMLInChromium draws the map of the planted weight in headless
// Chromium: the graph is drawn (green nodes that agree) and the planted
// node is marked (purple, where the error starts).
func TestMapHTMLInChromium(t *testing.T) {
	rep, node, _ := plantedMap(t, 2)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	selfContained(t, page)
	if n := strings.Count(page, `class="emn"`); n != 49 {
		t.Errorf("%d nodes drawn, want 49", n)
	}
	chromium := findChromium(t)
	path := filepath.Join(t.TempDir(), "map.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, errs := renderHTMLSize(t, chromium, path, 1200, 4000)
	if len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	near := func(c [3]uint32, r, g, b uint32) bool {
		d := func(x, y uint32) uint32 { return max(x, y) - min(x, y) }
		return d(c[0], r) < 12 && d(c[1], g) < 12 && d(c[2], b) < 12
	}
	var purple, green int
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			c := [3]uint32{r >> 8, g >> 8, b >> 8}
			switch {
			case near(c, 0x7b, 0x2c, 0xbf):
				purple++
			case near(c, 0xa6, 0xd9, 0x6a):
				green++
			}
		}
	}
	// A node box is 132×30 pixels: about 990 samples at a stride of 2.
	if purple < 500 || green < 2000 {
		t.Errorf("screenshot has %d purple and %d green samples: the graph or the mark of %s is missing", purple, green, node)
	}
	if dst := os.Getenv("ONNXCONV_VERIFY_SCREENSHOT"); dst != "" {
		_ = os.WriteFile(dst+".map.png", shot, 0o644)
	}
}

// A quantized tensor in the map: its steps table is in the text and the
// Markdown, and the JSON report with it validates against the schema.
func TestMapStepsTableReport(t *testing.T) {
	b := build.New(17)
	b.Node("QuantizeLinear", []string{"x", b.F32("s", nil, []float32{0.05}), b.Init("z", canonical.Int8, nil, []byte{3})}, []string{"q"})
	b.Node("DequantizeLinear", []string{"q", "s", "z"}, []string{"y"})
	m, err := b.Model("qdq", []build.Info{build.TensorInfo("x", canonical.Float, []int64{2, 8}, false)},
		[]build.Info{build.TensorInfo("y", canonical.Float, []int64{2, 8}, false)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), Options{Samples: 1, Map: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Map == nil || len(rep.Map.StepsTable()) != 1 || rep.Map.StepsTable()[0].Steps[0].Count != 16 {
		t.Fatalf("steps table %+v", rep.Map)
	}
	checkSchema(t, rep)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "Steps per integer tensor") || !strings.Contains(md, "| `q` | QuantizeLinear | `q` | 16 |") {
		t.Errorf("Markdown lacks the steps table:\n%s", md)
	}
	if txt := rep.Map.Text(5); !strings.Contains(txt, "q (QuantizeLinear): 0:16") {
		t.Errorf("text lacks the steps table:\n%s", txt)
	}
}

// checkSchema writes rep as JSON and validates it against the report
// schema.
func checkSchema(t *testing.T, rep *Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var inst any
	if err := json.Unmarshal(buf.Bytes(), &inst); err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t).Validate(inst); err != nil {
		t.Errorf("the JSON report does not validate: %v", err)
	}
}
