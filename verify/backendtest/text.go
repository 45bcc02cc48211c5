package backendtest

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Line is the result as 'onnxconv test' prints it: the status in
// capitals, the case name and the reason on one line, cut at 300 bytes.
func (r Result) Line() string {
	line := fmt.Sprintf("%-5s %s", strings.ToUpper(string(r.Status)), r.Name)
	if r.Reason != "" {
		line += ": " + oneLine(r.Reason, 300)
	}
	return line
}

// String is the last line of 'onnxconv test': "N passed, N failed, N
// skipped".
func (t Totals) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", t.Passed, t.Failed, t.Skipped)
}

// MarkdownCommand is the command a conformance report of dirs names in
// its header: the folders with slashes, and ../shared/... for the backend
// tests beside the repository.
func MarkdownCommand(dirs []string) string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.ToSlash(d)
		if j := strings.Index(out[i], "shared/"); j >= 0 {
			out[i] = "../" + out[i][j:]
		}
	}
	return "onnxconv test --markdown docs/conformance.md " + strings.Join(out, " ")
}

func oneLine(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
