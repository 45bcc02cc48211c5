package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// failingReport compares mlp_opset17 with a copy whose second hidden
// weight is scaled by 1.01, with bisection.
func failingReport(t *testing.T) *Report {
	t.Helper()
	ref := loadFixture(t, "mlp_opset17")
	cand := scaledCopy(t, "mlp_opset17", "2.weight", 1.01)
	rep, err := Compare(context.Background(), ModelSide("mlp_opset17/model.onnx", ref), ModelSide("scaled.onnx", cand),
		Options{Samples: 2, Gen: GenOptions{Seed: 5}, Bisect: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent {
		t.Fatal("scaled copy reported equivalent")
	}
	return rep
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ReportSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJSONReportValidates(t *testing.T) {
	sch := compileSchema(t)
	m := loadFixture(t, "mlp_opset9")
	same, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dm, _, _ := torchDecoder(t, "gpt2")
	decoder, err := Compare(context.Background(), ModelSide("a", dm), ModelSide("b", dm), Options{Decode: &Decode{Steps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*Report{"equivalent": same, "failing": failingReport(t), "decoder": decoder} {
		path := filepath.Join(t.TempDir(), "r.json")
		if err := WriteReport(path, rep); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s report does not validate: %v", name, err)
		}
		// The schema is strict: a report missing its verdict, or with an
		// unknown field, is rejected.
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		delete(obj, "equivalent")
		if sch.Validate(obj) == nil {
			t.Errorf("%s: a report without \"equivalent\" validates", name)
		}
		obj["equivalent"], obj["extra"] = true, 1
		if sch.Validate(obj) == nil {
			t.Errorf("%s: a report with an unknown field validates", name)
		}
		// Round trip: the numbers in the file are the report's.
		var back Report
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if back.Equivalent != rep.Equivalent || back.Outputs[0].Float.MaxAbs != rep.Outputs[0].Float.MaxAbs {
			t.Errorf("%s: JSON round trip changed the verdict or max_abs", name)
		}
	}
}

func TestJUnitReport(t *testing.T) {
	rep := failingReport(t)
	// A second, passing output and an unmatched one make three testcases.
	pass := *rep.Outputs[0]
	pass.Name, pass.Pass, pass.Reason = "other", true, ""
	rep.Outputs = append(rep.Outputs, &pass)
	rep.Unmatched = []string{"missing"}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 3 || doc.Tests != 3 || doc.Failures != 2 {
		t.Fatalf("suites %d, tests %d, failures %d; want 1 suite of 3 testcases, 2 failures", len(doc.Suites), doc.Tests, doc.Failures)
	}
	got := map[string]bool{}
	for _, c := range doc.Suites[0].Cases {
		got[c.Name] = c.Failure != nil
	}
	if !got["output"] || got["other"] || !got["missing"] {
		t.Errorf("testcase failures %v, want output and missing failed, other passed", got)
	}
	if !strings.Contains(doc.Suites[0].Cases[0].Failure.Message, "differ beyond tolerance") {
		t.Errorf("failure message %q", doc.Suites[0].Cases[0].Failure.Message)
	}
}

func TestMarkdownReport(t *testing.T) {
	rep := failingReport(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"### ❌", "| `output` | float | [4 10] | **FAIL** |", "first divergent node is `/2/Gemm` (Gemm)", "input `2.weight` (initializer): differs"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// consoleError matches the lines Chromium logs for page errors. The report
// has no scripts, so any console line at all (":CONSOLE:1]" in current
// Chromium, "CONSOLE(1)" in older ones) is a problem, as is a resource the
// Content-Security-Policy refused.
var consoleError = regexp.MustCompile(`Uncaught|:CONSOLE[:(]|CONSOLE\(\d+\)|Refused to (load|apply|execute|connect)`)

// renderHTML opens path in headless Chromium and returns the screenshot
// and the console errors found in its log.
func renderHTML(t *testing.T, chromium, path string) ([]byte, []string) {
	t.Helper()
	return renderHTMLSize(t, chromium, path, 1200, 900)
}

// renderHTMLSize is renderHTML in a window of w×h pixels.
func renderHTMLSize(t *testing.T, chromium, path string, w, h int) ([]byte, []string) {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), "file://"+abs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var errs []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if consoleError.MatchString(line) {
			errs = append(errs, line)
		}
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	return png, errs
}

// findChromium returns Chromium's path, or skips the test (counted and
// reported by TestMain, which fails the package unless
// ONNXCONV_SKIP_CHROMIUM=1).
func findChromium(t *testing.T) string {
	t.Helper()
	return testpaths.Chromium(t)
}

// selfContained checks that an HTML report has no scripts and no
// external resources.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
}

func TestHTMLRendersInChromium(t *testing.T) {
	rep := failingReport(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	selfContained(t, page)
	if n := strings.Count(page, "<svg"); n != 3 {
		t.Errorf("HTML holds %d SVG plots, want 3 (bars, histogram, bisection path)", n)
	}
	chromium := findChromium(t)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, errs := renderHTML(t, chromium, path)
	if len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot %v, want 1200x900", b)
	}
	// Not blank: the page draws the red verdict and bar and the amber
	// histogram bars of errors beyond atol.
	var red, amber int
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r > 180 && g < 80 && b < 80 {
				red++
			}
			if r > 160 && g > 100 && g < 160 && b < 40 {
				amber++
			}
		}
	}
	if red < 50 || amber < 50 {
		t.Errorf("screenshot has %d red and %d amber samples: the plots are missing", red, amber)
	}
	if dst := os.Getenv("ONNXCONV_VERIFY_SCREENSHOT"); dst != "" {
		_ = os.WriteFile(dst, shot, 0o644)
		_ = os.WriteFile(dst+".html", buf.Bytes(), 0o644)
	}

	// The report of a conversion (provenance, conversion facts, the node
	// diff) renders as cleanly.
	var conv bytes.Buffer
	if err := WriteHTML(&conv, convertReport(t)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(conv.String(), "<svg"); n != 3 {
		t.Errorf("conversion HTML holds %d SVG plots, want 3", n)
	}
	convPath := filepath.Join(t.TempDir(), "convert.html")
	if err := os.WriteFile(convPath, conv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, errs = renderHTML(t, chromium, convPath)
	if len(errs) > 0 {
		t.Errorf("conversion report: console errors:\n%s", strings.Join(errs, "\n"))
	}
	if img, err = png.Decode(bytes.NewReader(shot)); err != nil {
		t.Fatalf("conversion report: screenshot is not a PNG: %v", err)
	}
	red = 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 180 && g>>8 < 80 && b>>8 < 80 {
				red++
			}
		}
	}
	if red < 50 {
		t.Errorf("conversion report screenshot has %d red samples: the verdict is missing", red)
	}
	if dst := os.Getenv("ONNXCONV_VERIFY_SCREENSHOT"); dst != "" {
		_ = os.WriteFile(dst+".convert.png", shot, 0o644)
		_ = os.WriteFile(dst+".convert.html", conv.Bytes(), 0o644)
	}

	// The console scan is real: a page with a script error is caught.
	broken := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(broken, []byte("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs := renderHTML(t, chromium, broken); len(errs) == 0 {
		t.Error("a page with an uncaught script error showed no console error")
	}
}

// convertReport is failingReport as `onnxconv convert --report` makes it:
// with provenance and conversion facts.
func convertReport(t *testing.T) *Report {
	t.Helper()
	rep := failingReport(t)
	rep.Provenance = &Provenance{Tool: "onnxconv", Version: "1.4.0", Revision: "1a2b3c4d5e6f",
		Command: []string{"onnxconv", "convert", "model.tflite", "model.onnx", "--report", "my report.html"},
		Time:    time.Date(2025, 6, 1, 12, 30, 0, 0, time.FixedZone("CEST", 2*3600))}
	rep.Conversion = &Conversion{Source: "model.tflite", Output: "model.onnx", SourceFormat: "tflite", Importer: "tflite",
		Target: "onnxruntime-1.15", OpsetBefore: 21, OpsetAfter: 19, MLOpsetBefore: 3, MLOpsetAfter: 2, IRBefore: 10, IRAfter: 8,
		Applied:  []string{`Gelu "blk.gelu": expanded into Erf/Mul/Add (opset 19 lacks Gelu)`, `LayerNormalization "ln": adapted 21 -> 19`},
		Warnings: []string{"tensor names shortened to fit"},
		Timings:  []Timing{{"import", 12.5}, {"convert", 3.25}, {"verify", 140}}}
	return rep
}

func TestReportTitleAndTool(t *testing.T) {
	rep := failingReport(t)
	if rep.Title() != "onnxconv verify: mlp_opset17/model.onnx vs scaled.onnx" || rep.ToolName() != ToolVerify {
		t.Errorf("verify report: title %q tool %q", rep.Title(), rep.ToolName())
	}
	conv := convertReport(t)
	if conv.Title() != "onnxconv convert: model.tflite → model.onnx" || conv.ToolName() != ToolConvert {
		t.Errorf("convert report: title %q tool %q", conv.Title(), conv.ToolName())
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, conv); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Tool != ToolConvert || back.Conversion == nil || back.Conversion.OpsetAfter != 19 || back.Provenance.Revision != "1a2b3c4d5e6f" ||
		!back.Provenance.Time.Equal(conv.Provenance.Time) || len(back.Conversion.Applied) != 2 {
		t.Errorf("JSON round trip: tool %q conversion %+v provenance %+v", back.Tool, back.Conversion, back.Provenance)
	}
	if conv.Tool != ToolVerify {
		t.Errorf("writing JSON changed the report's Tool to %q", conv.Tool)
	}
}

func TestJSONReportWithConversionValidates(t *testing.T) {
	sch := compileSchema(t)
	conv := convertReport(t)
	// Lists nobody filled in are written as empty arrays.
	bare := convertReport(t)
	bare.Conversion.Applied, bare.Conversion.Warnings, bare.Conversion.Timings = nil, nil, nil
	for name, rep := range map[string]*Report{"conversion": conv, "nil lists": bare} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, rep); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: report does not validate: %v", name, err)
		}
		obj := inst.(map[string]any)
		c := obj["conversion"].(map[string]any)
		if _, ok := c["applied"].([]any); !ok {
			t.Errorf("%s: applied is %T, want an array", name, c["applied"])
		}
		if obj["tool"] != "onnxconv convert" {
			t.Errorf("%s: tool %v", name, obj["tool"])
		}
		// The diff of the divergent node is in the file and the schema
		// is strict about it.
		first := obj["bisect"].(map[string]any)["first"].(map[string]any)
		diff := first["diff"].(map[string]any)
		if diff["b_node"] != "/2/Gemm" || diff["same"] != true {
			t.Errorf("%s: diff %v", name, diff)
		}
		diff["extra"] = 1
		if sch.Validate(obj) == nil {
			t.Errorf("%s: a diff with an unknown field validates", name)
		}
		delete(diff, "extra")
		delete(c, "opset_after")
		if sch.Validate(obj) == nil {
			t.Errorf("%s: a conversion without opset_after validates", name)
		}
	}
}

func TestReportsShowProvenanceAndConversion(t *testing.T) {
	rep := convertReport(t)
	render := func(w func(io.Writer, *Report) error) string {
		var buf bytes.Buffer
		if err := w(&buf, rep); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	md := render(WriteMarkdown)
	for _, want := range []string{
		"### ❌ onnxconv convert: model.tflite → model.onnx\n",
		"onnxconv 1.4.0 (rev 1a2b3c4d5e6f)", "time 2025-06-01T10:30:00Z",
		"`onnxconv convert model.tflite model.onnx --report 'my report.html'`",
		"| source → output | `model.tflite → model.onnx` |", "| format / importer | tflite / tflite |",
		"| target | onnxruntime-1.15 |", "| opset | 21 → 19 |", "| ai.onnx.ml opset | 3 → 2 |", "| IR version | 10 → 8 |",
		"| timings | import 12.5 ms, convert 3.2 ms, verify 140 ms |",
		"**Applied** (2)", "- Gelu \"blk.gelu\": expanded into Erf/Mul/Add (opset 19 lacks Gelu)",
		"- LayerNormalization \"ln\": adapted 21 -&gt; 19", "**Warnings** (1)", "tensor names shortened to fit",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	page := render(WriteHTML)
	for _, want := range []string{
		"<title>onnxconv convert: model.tflite → model.onnx</title>", "<h1>onnxconv convert: model.tflite → model.onnx <span",
		"onnxconv 1.4.0 (rev 1a2b3c4d5e6f)", "<code>onnxconv convert model.tflite model.onnx --report &#39;my report.html&#39;</code>",
		"2025-06-01T10:30:00Z", "<h2>Conversion</h2>", "<td class=\"l\">21 → 19</td>", "<td class=\"l\">3 → 2</td>", "<td class=\"l\">10 → 8</td>",
		"<td class=\"l\">onnxruntime-1.15</td>", "<li>Gelu &#34;blk.gelu&#34;: expanded into Erf/Mul/Add (opset 19 lacks Gelu)</li>",
		"<li>tensor names shortened to fit</li>", "import 12.5 ms, convert 3.2 ms, verify 140 ms",
		"<h3>The node in A and in B</h3>", "[0,0]: ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	props := junitProps(t, render(WriteJUnit))
	for k, v := range map[string]string{
		"tool": "onnxconv convert", "title": "onnxconv convert: model.tflite → model.onnx", "version": "1.4.0", "revision": "1a2b3c4d5e6f",
		"command": "onnxconv convert model.tflite model.onnx --report 'my report.html'", "time": "2025-06-01T10:30:00Z",
		"conversion.source": "model.tflite", "conversion.output": "model.onnx", "conversion.source_format": "tflite",
		"conversion.importer": "tflite", "conversion.target": "onnxruntime-1.15",
		"conversion.opset_before": "21", "conversion.opset_after": "19", "conversion.ml_opset_before": "3", "conversion.ml_opset_after": "2",
		"conversion.ir_before": "10", "conversion.ir_after": "8",
		"conversion.applied.1": `Gelu "blk.gelu": expanded into Erf/Mul/Add (opset 19 lacks Gelu)`, "conversion.applied.2": `LayerNormalization "ln": adapted 21 -> 19`,
		"conversion.warning.1": "tensor names shortened to fit", "conversion.timing_ms.import": "12.5", "conversion.timing_ms.verify": "140",
		"bisect.first_node": "/2/Gemm", "bisect.b_node": "/2/Gemm", "bisect.b_op_type": "Gemm",
		"bisect.input.1": "2.weight: float[64,64] vs float[64,64]; values differ first at " + rep.Bisect.First.Diff.Inputs[1].FirstDiff,
	} {
		if props[k] != v {
			t.Errorf("JUnit property %s = %q, want %q", k, props[k], v)
		}
	}
}

// junitProps parses a JUnit document's testsuite properties and name.
func junitProps(t *testing.T, doc string) map[string]string {
	t.Helper()
	var d struct {
		Name   string `xml:"name,attr"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if len(d.Suites) != 1 {
		t.Fatalf("%d suites", len(d.Suites))
	}
	m := map[string]string{"suite name": d.Suites[0].Name, "suites name": d.Name}
	for _, p := range d.Suites[0].Props {
		m[p.Name] = p.Value
	}
	return m
}

func TestReportsWithoutProvenance(t *testing.T) {
	// Older callers set neither Provenance nor Conversion: every format
	// still renders and says "unknown".
	rep := failingReport(t)
	var md, page, junit bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	if want := "**Run** onnxconv unknown · time unknown · command unknown"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	if strings.Contains(md.String(), "| conversion |") || strings.Contains(page.String(), "<h2>Conversion</h2>") {
		t.Error("a report without conversion shows a conversion section")
	}
	for _, want := range []string{"tool: onnxconv unknown", "command: unknown", "time: unknown", "<title>onnxconv verify: mlp_opset17/model.onnx vs scaled.onnx</title>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	props := junitProps(t, junit.String())
	for _, k := range []string{"version", "revision", "command", "time"} {
		if props[k] != "unknown" {
			t.Errorf("JUnit property %s = %q, want unknown", k, props[k])
		}
	}
	if props["suite name"] != "onnxconv verify: mlp_opset17/model.onnx vs scaled.onnx" || props["suites name"] != "onnxconv verify" {
		t.Errorf("suite names %q / %q", props["suite name"], props["suites name"])
	}
	if _, ok := props["conversion.source"]; ok {
		t.Error("JUnit has conversion properties without a conversion")
	}
}

func TestCheckReportPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path   string
		reason ReportPathReason
		fix    string
	}{
		{filepath.Join(dir, "r.pdf"), ReportPathFormat, "end the name with .json, .md, .html, .xml"},
		{dir, ReportPathIsDir, "give a file name inside it, e.g. " + filepath.Join(dir, "report.html")},
		{filepath.Join(dir, "missing", "r.json"), ReportPathNoFolder, "mkdir -p " + filepath.Join(dir, "missing")},
		{filepath.Join(file, "r.json"), ReportPathNoFolder, "is not a folder"},
		{"/proc/r.json", ReportPathNotWritable, "is not writable"},
		{"", ReportPathEmpty, "give a file name"},
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			path   string
			reason ReportPathReason
			fix    string
		}{filepath.Join(ro, "r.md"), ReportPathNotWritable, "fix its permissions"})
	}
	for _, c := range cases {
		err := CheckReportPath(c.path)
		var pe *ReportPathError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v (%T), want *ReportPathError", c.path, err, err)
			continue
		}
		if pe.Reason != c.reason || pe.Path != c.path {
			t.Errorf("%q: reason %q path %q, want %q", c.path, pe.Reason, pe.Path, c.reason)
		}
		if !strings.Contains(err.Error(), c.fix) {
			t.Errorf("%q: message %q does not say %q", c.path, err, c.fix)
		}
	}
	for _, ok := range []string{"r.json", "r.md", "r.HTML", "r.xml"} {
		if err := CheckReportPath(filepath.Join(dir, ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// The check leaves nothing behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "file.txt" && e.Name() != "ro" {
			t.Errorf("CheckReportPath left %s in the folder", e.Name())
		}
	}
}

func TestWriteReportAtomic(t *testing.T) {
	rep := failingReport(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.md")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(path, rep); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteMarkdown(&want, rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want.Bytes()) {
		t.Error("the report file is not the Markdown report")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the folder, want only the report", len(entries))
	}
	var pe *ReportPathError
	if err := WriteReport(filepath.Join(dir, "r.pdf"), rep); !errors.As(err, &pe) || pe.Reason != ReportPathFormat {
		t.Errorf("unknown extension: %v, want a *ReportPathError", err)
	}
	// One atomic writer in the repository: the package writes files only
	// through canonical.WriteFileAtomic.
	fset := token.NewFileSet()
	pkgFiles, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pkgFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				if strings.EqualFold(x.Name.Name, "writeFileAtomic") {
					t.Errorf("%s: %s is a second atomic writer; use canonical.WriteFileAtomic", name, x.Name.Name)
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "os" && (x.Sel.Name == "Rename" || x.Sel.Name == "WriteFile") {
					t.Errorf("%s: os.%s at %v; write through canonical.WriteFileAtomic", name, x.Sel.Name, fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
}
