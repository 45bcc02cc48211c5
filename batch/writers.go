package batch

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"path"
	"strconv"
	"strings"
)

// mergedRow is one job as the HTML and Markdown reports show it.
type mergedRow struct {
	Status  string
	ID      string
	Model   string
	What    string
	Kind    string
	Message string
	Opsets  string
	MaxAbs  string
	Seconds string
	Cached  bool
	Shard   string
	Links   []string
	Search  string
	// Bench is a bench job's figures as shown (nil for other jobs).
	Bench *benchCells
}

// benchCells are a bench job's figures as the HTML and Markdown reports
// show them.
type benchCells struct {
	P50, P90, P99, Throughput, RSS string
	// Runtime is the side timed beside the executor and Ratio the ratio
	// of the medians ("" without one).
	Runtime, Ratio string
}

func newBenchCells(b *BenchFigures) *benchCells {
	if b == nil {
		return nil
	}
	c := &benchCells{P50: msText(b.Executor.P50MS), P90: msText(b.Executor.P90MS), P99: msText(b.Executor.P99MS),
		Throughput: rateText(b.Executor.ThroughputPerS)}
	if b.PeakRSSBytes > 0 {
		c.RSS = fmt.Sprintf("%.0f", float64(b.PeakRSSBytes)/(1<<20))
	}
	if b.Runtime != nil {
		c.Runtime = fmt.Sprintf("%s p50 %s ms", b.Runtime.Name, msText(b.Runtime.P50MS))
		c.Ratio = fmt.Sprintf("%.2f", b.Ratio)
	}
	return c
}

// msText shows milliseconds with 3 significant figures or so.
func msText(v float64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// rateText shows runs per second: whole above 100, else to 0.1.
func rateText(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// benchColumns tells whether any job has bench figures, and any a
// runtime side (the reports show those columns only then).
func benchColumns(rs []mergedRow) (bench, runtime bool) {
	for _, r := range rs {
		if r.Bench != nil {
			bench = true
			runtime = runtime || r.Bench.Runtime != ""
		}
	}
	return bench, runtime
}

func rows(m *Merged, base string) []mergedRow {
	out := make([]mergedRow, 0, len(m.Jobs))
	for _, r := range m.Jobs {
		row := mergedRow{Status: string(r.Status), ID: r.ID, Model: r.Model, What: what(r), Kind: r.Kind,
			Message: firstLine(r.Message), Opsets: opsets(r), MaxAbs: worst(r), Seconds: fmt.Sprintf("%.2f", r.DurationMS/1000),
			Cached: r.Cached, Shard: r.Shard, Links: reportLinks(r, base), Bench: newBenchCells(r.Bench)}
		row.Search = strings.ToLower(strings.Join([]string{row.Status, row.ID, row.What, row.Kind, row.Message}, " "))
		out = append(out, row)
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

var htmlPage = template.Must(template.New("batch").Funcs(template.FuncMap{"base": path.Base}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:20px;margin:0 0 8px}
.verdict{display:inline-block;padding:6px 12px;border-radius:4px;color:#fff;font-weight:600;margin-bottom:12px}
.verdict.bad{background:#d1242f}.verdict.good{background:#1a7f37}
.totals span{margin-right:16px}
.controls{margin:12px 0;display:flex;gap:8px;align-items:center}
input[type=search]{width:320px;padding:4px 8px}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f5;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;min-width:56px;text-align:center;padding:1px 6px;border-radius:3px;color:#fff;font-weight:600}
.s-pass{background:#1a7f37}.s-fail{background:#d1242f}.s-error{background:#b42318}.s-missing{background:#9a6700}
tr.failed td{background:#fff5f5}
.msg{color:#57606a;font-size:12px}
.meta{color:#57606a;font-size:12px;margin-top:16px}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<div class="verdict {{if .Failed}}bad{{else}}good{{end}}">{{if .Failed}}FAILED: {{.Bad}} of {{.T.Jobs}} job(s) did not pass{{else}}PASSED: all {{.T.Jobs}} job(s){{end}}</div>
<div class="totals"><span>pass {{.T.Pass}}</span><span>fail {{.T.Fail}}</span><span>error {{.T.Error}}</span><span>missing {{.T.Missing}}</span><span>cached {{.T.Cached}}</span><span>machine time {{.Machine}}</span></div>
{{if .Conflicts}}<p><b>Conflicting duplicates:</b> {{range .Conflicts}}<code>{{.}}</code> {{end}}</p>{{end}}
<div class="controls">
<label>Filter <input type="search" id="q" placeholder="text in the job, kind or message"></label>
<label>Status <select id="status"><option value="">all</option><option value="failed">not passed</option><option value="pass">pass</option><option value="fail">fail</option><option value="error">error</option><option value="missing">missing</option></select></label>
<span id="shown">{{len .Rows}} shown</span>
</div>
<table id="jobs">
<thead><tr><th>Status</th><th>Job</th><th>Action</th><th>Opset</th><th>Worst max abs</th>{{if .HasBench}}<th title="executor latency: median, 90th and 99th percentile of the timed runs">p50 / p90 / p99 ms</th><th>Runs/s</th><th>Peak RSS MiB</th>{{if .HasRuntime}}<th title="executor p50 / runtime p50">Ratio p50</th>{{end}}{{end}}<th>Seconds</th><th>Shard</th><th>Report</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{if ne .Status "pass"}}failed{{end}}" data-status="{{.Status}}" data-text="{{.Search}}">
<td><span class="badge s-{{.Status}}">{{.Status}}</span></td>
<td><code>{{.Model}}</code>{{if .Kind}}<div class="msg">{{.Kind}}: {{.Message}}</div>{{end}}</td>
<td>{{.What}}</td><td>{{.Opsets}}</td><td class="num">{{.MaxAbs}}</td>{{if $.HasBench}}{{with .Bench}}<td class="num bench">{{.P50}} / {{.P90}} / {{.P99}}</td><td class="num">{{.Throughput}}</td><td class="num">{{.RSS}}</td>{{if $.HasRuntime}}<td class="num"{{if .Runtime}} title="{{.Runtime}}"{{end}}>{{.Ratio}}</td>{{end}}{{else}}<td></td><td></td><td></td>{{if $.HasRuntime}}<td></td>{{end}}{{end}}{{end}}<td class="num">{{.Seconds}}{{if .Cached}} (cached){{end}}</td><td>{{.Shard}}</td>
<td>{{range .Links}}<a href="{{.}}">{{base .}}</a> {{end}}</td>
</tr>
{{end}}</tbody>
</table>
<p class="meta">{{.Tool}} merge of {{range .Dirs}}<code>{{.}}</code> {{end}}at {{.Time}}; shards {{range .Shards}}{{.}} {{end}}</p>
<script>
(function () {
  var q = document.getElementById("q"), st = document.getElementById("status"), shown = document.getElementById("shown");
  var rows = document.querySelectorAll("#jobs tbody tr");
  function apply() {
    var text = q.value.toLowerCase(), want = st.value, n = 0;
    for (var i = 0; i < rows.length; i++) {
      var s = rows[i].getAttribute("data-status");
      var ok = (want === "" || s === want || (want === "failed" && s !== "pass")) &&
        (text === "" || rows[i].getAttribute("data-text").indexOf(text) >= 0);
      rows[i].hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n + " shown";
  }
  // The filter can be given in the address: #status=fail&q=opset
  var params = new URLSearchParams(location.hash.slice(1));
  if (params.has("status")) { st.value = params.get("status"); }
  if (params.has("q")) { q.value = params.get("q"); }
  q.addEventListener("input", apply);
  st.addEventListener("change", apply);
  apply();
})();
</script>
</body>
</html>
`))

// WriteMergedHTML writes m as one self-contained HTML page: the verdict,
// the totals and a filterable table of every job, failures first, each
// linking to its own report (links relative to base, the page's folder).
func WriteMergedHTML(w io.Writer, m *Merged, base string) error {
	t := m.Totals
	rs := rows(m, base)
	hasBench, hasRuntime := benchColumns(rs)
	data := map[string]any{
		"Title": "onnxconv batch: " + fmt.Sprint(t.Jobs) + " job(s)", "Failed": m.Failed(), "Bad": t.Fail + t.Error + t.Missing,
		"T": t, "Rows": rs, "HasBench": hasBench, "HasRuntime": hasRuntime, "Conflicts": m.Conflicts, "Tool": m.Tool, "Dirs": m.Dirs, "Shards": m.Shards,
		"Time": m.Time.Format("2006-01-02 15:04:05 MST"), "Machine": fmt.Sprintf("%.1f s", t.DurationMS/1000),
	}
	if err := htmlPage.Execute(w, data); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

// MarkdownRows is how many jobs the Markdown report lists at most
// (failures first); the rest are counted.
const MarkdownRows = 100

// WriteMergedMarkdown writes m for a pull request comment: the verdict,
// the totals and a table of the jobs, failures first (at most
// MarkdownRows).
func WriteMergedMarkdown(w io.Writer, m *Merged, base string) error {
	var b strings.Builder
	t := m.Totals
	if m.Failed() {
		fmt.Fprintf(&b, "### ❌ onnxconv batch: %d of %d job(s) did not pass\n\n", t.Fail+t.Error+t.Missing, t.Jobs)
	} else {
		fmt.Fprintf(&b, "### ✅ onnxconv batch: all %d job(s) passed\n\n", t.Jobs)
	}
	fmt.Fprintf(&b, "pass %d · fail %d · error %d · missing %d · cached %d · machine time %.1f s\n\n", t.Pass, t.Fail, t.Error, t.Missing, t.Cached, t.DurationMS/1000)
	if len(m.Conflicts) > 0 {
		fmt.Fprintf(&b, "**Conflicting duplicates:** %s\n\n", strings.Join(m.Conflicts, ", "))
	}
	rs := rows(m, base)
	hasBench, hasRuntime := benchColumns(rs)
	head, align := "| status | model | action | opset | worst max abs |", "| --- | --- | --- | --- | ---: |"
	if hasBench {
		head += " p50 / p90 / p99 ms | runs/s | peak RSS MiB |"
		align += " ---: | ---: | ---: |"
		if hasRuntime {
			head += " ratio p50 |"
			align += " ---: |"
		}
	}
	b.WriteString(head + " s | report |\n" + align + " ---: | --- |\n")
	for i, r := range rs {
		if i == MarkdownRows {
			fmt.Fprintf(&b, "\n… and %d more job(s) (see the HTML or JSON report)\n", len(rs)-MarkdownRows)
			break
		}
		status := r.Status
		if status != "pass" {
			status = "**" + strings.ToUpper(status) + "**"
			if r.Kind != "" {
				status += " " + r.Kind
			}
		}
		var links []string
		for _, l := range r.Links {
			links = append(links, "["+mdEscape(l[strings.LastIndex(l, "/")+1:])+"]("+strings.ReplaceAll(l, " ", "%20")+")")
		}
		speed := ""
		if hasBench {
			c := r.Bench
			if c == nil {
				c = &benchCells{}
				speed = " | | |"
			} else {
				speed = fmt.Sprintf(" %s / %s / %s | %s | %s |", c.P50, c.P90, c.P99, c.Throughput, c.RSS)
			}
			if hasRuntime {
				speed += " " + c.Ratio + " |"
			}
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |%s %s | %s |\n", status, strings.ReplaceAll(r.Model, "`", "'"), mdEscape(r.What), r.Opsets, r.MaxAbs, speed, r.Seconds, strings.Join(links, " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

type junitSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []junitSte `xml:"testsuite"`
}

type junitSte struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	Time       string           `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitIssue      `xml:"failure,omitempty"`
	Error      *junitIssue      `xml:"error,omitempty"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// benchProperties are a bench job's figures as JUnit test case
// properties (bench.p50_ms, ...; bench.runtime.* for the runtime side).
func benchProperties(b *BenchFigures) *junitProperties {
	if b == nil {
		return nil
	}
	p := &junitProperties{}
	add := func(name string, v any) {
		p.Property = append(p.Property, junitProperty{Name: "bench." + name, Value: fmt.Sprint(v)})
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	side := func(prefix string, s *BenchSide) {
		add(prefix+"runs", s.Runs)
		add(prefix+"p50_ms", num(s.P50MS))
		add(prefix+"p90_ms", num(s.P90MS))
		add(prefix+"p99_ms", num(s.P99MS))
		add(prefix+"min_ms", num(s.MinMS))
		add(prefix+"mean_ms", num(s.MeanMS))
		add(prefix+"throughput_per_s", num(s.ThroughputPerS))
	}
	add("reps", b.Reps)
	add("warmup", b.Warmup)
	add("threads", b.Threads)
	side("", &b.Executor)
	add("load_ms", num(b.LoadMS))
	add("peak_rss_bytes", b.PeakRSSBytes)
	add("cpus", b.CPUs)
	add("sgemm_kernel", b.Kernel)
	if b.Runtime != nil {
		add("runtime", b.Runtime.Name)
		side("runtime.", b.Runtime)
		add("ratio_p50", num(b.Ratio))
	}
	return p
}

type junitIssue struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteMergedJUnit writes m as JUnit XML: one testcase per job (a failure
// for fail and missing, an error for error).
func WriteMergedJUnit(w io.Writer, m *Merged) error {
	s := junitSte{Name: "onnxconv batch", Time: fmt.Sprintf("%.3f", m.Totals.DurationMS/1000)}
	for _, r := range m.Jobs {
		c := junitCase{Name: r.ID, Classname: "batch." + string(r.Action), Time: fmt.Sprintf("%.3f", r.DurationMS/1000)}
		if r.Action == "" {
			c.Classname = "batch"
		}
		out := what(r)
		if o := opsets(r); o != "" {
			out += ", opset " + o
		}
		if x := worst(r); x != "" {
			out += ", worst max abs " + x
		}
		if b := r.Bench; b != nil {
			out += fmt.Sprintf(", executor p50 %s ms, p90 %s ms, p99 %s ms, %.1f runs/s", msText(b.Executor.P50MS), msText(b.Executor.P90MS), msText(b.Executor.P99MS), b.Executor.ThroughputPerS)
			c.Properties = benchProperties(b)
		}
		if len(r.Reports) > 0 {
			out += "\nreports: " + strings.Join(r.Reports, " ")
		}
		c.SystemOut = out
		issue := &junitIssue{Message: firstLine(r.Message), Type: r.Kind, Text: r.Message + "\n" + strings.Join(r.Notes, "\n")}
		switch r.Status {
		case StatusPass:
		case StatusError:
			c.Error = issue
			s.Errors++
		default:
			c.Failure = issue
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "onnxconv batch", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Time: s.Time, Suites: []junitSte{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
