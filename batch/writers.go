package batch

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
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
}

func rows(m *Merged, base string) []mergedRow {
	out := make([]mergedRow, 0, len(m.Jobs))
	for _, r := range m.Jobs {
		row := mergedRow{Status: string(r.Status), ID: r.ID, Model: r.Model, What: what(r), Kind: r.Kind,
			Message: firstLine(r.Message), Opsets: opsets(r), MaxAbs: worst(r), Seconds: fmt.Sprintf("%.2f", r.DurationMS/1000),
			Cached: r.Cached, Shard: r.Shard, Links: reportLinks(r, base)}
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

var htmlPage = template.Must(template.New("batch").Parse(`<!DOCTYPE html>
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
<thead><tr><th>Status</th><th>Job</th><th>Action</th><th>Opset</th><th>Worst max abs</th><th>Seconds</th><th>Shard</th><th>Report</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{if ne .Status "pass"}}failed{{end}}" data-status="{{.Status}}" data-text="{{.Search}}">
<td><span class="badge s-{{.Status}}">{{.Status}}</span></td>
<td><code>{{.Model}}</code>{{if .Kind}}<div class="msg">{{.Kind}}: {{.Message}}</div>{{end}}</td>
<td>{{.What}}</td><td>{{.Opsets}}</td><td class="num">{{.MaxAbs}}</td><td class="num">{{.Seconds}}{{if .Cached}} (cached){{end}}</td><td>{{.Shard}}</td>
<td>{{range .Links}}<a href="{{.}}">report</a> {{end}}</td>
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
	data := map[string]any{
		"Title": "onnxconv batch: " + fmt.Sprint(t.Jobs) + " job(s)", "Failed": m.Failed(), "Bad": t.Fail + t.Error + t.Missing,
		"T": t, "Rows": rows(m, base), "Conflicts": m.Conflicts, "Tool": m.Tool, "Dirs": m.Dirs, "Shards": m.Shards,
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
	b.WriteString("| status | model | action | opset | worst max abs | s | report |\n| --- | --- | --- | --- | ---: | ---: | --- |\n")
	rs := rows(m, base)
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
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s |\n", status, strings.ReplaceAll(r.Model, "`", "'"), mdEscape(r.What), r.Opsets, r.MaxAbs, r.Seconds, strings.Join(links, " "))
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
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr"`
	Failure   *junitIssue `xml:"failure,omitempty"`
	Error     *junitIssue `xml:"error,omitempty"`
	SystemOut string      `xml:"system-out,omitempty"`
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
