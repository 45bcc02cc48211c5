package serve

import (
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// scrubber takes the server's own folders out of what a client reads:
// the reports, records and errors batch writes name files by absolute
// path (DATA/jobs/ID/input/model.tflite), which would tell a client where
// the server keeps its data and, through a cached report, another job's
// ID. Each such path becomes relative to its job's folder
// (input/model.tflite, out/outputs/KEY/model.onnx); any other mention of
// the data or cache folder becomes DATA or CACHE.
type scrubber struct {
	jobPath *regexp.Regexp
	folders *strings.Replacer
}

func newScrubber(data, cache string) (*scrubber, error) {
	absData, err := filepath.Abs(data)
	if err != nil {
		return nil, fmt.Errorf("the data folder: %w", err)
	}
	absCache, err := filepath.Abs(cache)
	if err != nil {
		return nil, fmt.Errorf("the cache folder: %w", err)
	}
	var alts []string
	for _, d := range []string{absData, html.EscapeString(absData)} {
		alts = append(alts, regexp.QuoteMeta(filepath.ToSlash(d)))
	}
	// The cache folder first: it may lie inside the data folder.
	var pairs []string
	for _, p := range [][2]string{{absCache, "CACHE"}, {absData, "DATA"}} {
		pairs = append(pairs, filepath.ToSlash(p[0]), p[1], html.EscapeString(filepath.ToSlash(p[0])), p[1])
	}
	return &scrubber{
		jobPath: regexp.MustCompile(`(?:` + strings.Join(alts, "|") + `)/jobs/[0-9a-f]+/`),
		folders: strings.NewReplacer(pairs...),
	}, nil
}

// text scrubs one text.
func (sc *scrubber) text(s string) string {
	return sc.folders.Replace(sc.jobPath.ReplaceAllString(s, ""))
}

// files scrubs every record and report under a job's output folder
// (.json, .html, .md, .xml, .txt; not the models).
func (sc *scrubber) files(out string) error {
	return filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".json", ".html", ".md", ".xml", ".txt":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("scrubbing a report: %w", err)
		}
		if clean := sc.text(string(b)); clean != string(b) {
			// Replaced, never written in place: the file may be a hard
			// link into batch's cache.
			if err := canonical.WriteFileAtomic(p, func(w io.Writer) error {
				_, err := io.WriteString(w, clean)
				return err
			}); err != nil {
				return fmt.Errorf("scrubbing a report: %w", err)
			}
		}
		return nil
	})
}
