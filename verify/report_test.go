package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	for name, rep := range map[string]*Report{"equivalent": same, "failing": failingReport(t)} {
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
		"--screenshot="+shot, "--window-size=1200,900", "file://"+abs)
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

func findChromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("ONNXCONV_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found and ONNXCONV_REQUIRE_CHROMIUM=1")
	}
	t.Skip("chromium not installed (apt-get install chromium; set ONNXCONV_REQUIRE_CHROMIUM=1 to require it)")
	return ""
}

func TestHTMLRendersInChromium(t *testing.T) {
	rep := failingReport(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// Self-contained: no scripts, no external resources.
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
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

	// The console scan is real: a page with a script error is caught.
	broken := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(broken, []byte("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs := renderHTML(t, chromium, broken); len(errs) == 0 {
		t.Error("a page with an uncaught script error showed no console error")
	}
}
