package batch

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Models, references and inputs outside the manifest's folder are
// refused unless AllowOutside: absolute patterns, "..", and symbolic
// links leading out, each an *OutsideError naming the path.
func TestManifestConfined(t *testing.T) {
	outside := tree(t, "x.onnx", "ref/output_0.pb")
	dir := tree(t, "models/a/model.onnx", "models/a/ref/output_0.pb")
	if err := os.Symlink(filepath.Join(outside, "x.onnx"), filepath.Join(dir, "models", "link.onnx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "models", "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "ref"), filepath.Join(dir, "models", "a", "outref")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, filepath.Join(outside, "x.onnx"))
	for _, src := range []string{
		"jobs:\n  - models: [\"" + filepath.Join(outside, "x.onnx") + "\"]\n    check: true\n",
		"jobs:\n  - models: [\"" + filepath.ToSlash(rel) + "\"]\n    check: true\n",
		"jobs:\n  - models: [\"models/link.onnx\"]\n    check: true\n",
		"jobs:\n  - models: [\"models/linkdir/x.onnx\"]\n    check: true\n",
		"jobs:\n  - models: [\"/etc/passwd\"]\n    check: true\n",
		"jobs:\n  - models: [\"models/a/model.onnx\"]\n    reference: ../../../" + filepath.Base(outside) + "/ref\n",
		"jobs:\n  - models: [\"models/a/model.onnx\"]\n    reference: outref\n",
		"jobs:\n  - models: [\"models/a/model.onnx\"]\n    opset: 17\n    inputs: /etc\n",
	} {
		m, err := ParseManifest([]byte(src), dir)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		_, err = m.Expand()
		var oe *OutsideError
		if !errors.As(err, &oe) {
			t.Errorf("%s: Expand = %v, want an *OutsideError", src, err)
			continue
		}
		if !strings.Contains(err.Error(), "--allow-outside") {
			t.Errorf("%s: %v does not name --allow-outside", src, err)
		}
		// With --allow-outside the paths that exist are taken.
		m.AllowOutside = true
		if _, err := m.Expand(); err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "matches no file") {
			t.Errorf("%s with AllowOutside: %v", src, err)
		}
	}
	// Inside the folder, links that stay inside are fine.
	if err := os.Symlink("a/model.onnx", filepath.Join(dir, "models", "inside.onnx")); err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest([]byte("jobs:\n  - models: [\"models/inside.onnx\", \"models/**/*.onnx\"]\n    reference: ref\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Expand()
	if err != nil || len(jobs) != 2 {
		t.Fatalf("inside: %d jobs, %v", len(jobs), err)
	}
}

// matchSegs agrees with a plain recursive matcher on patterns with
// several "**", including ones the recursive matcher takes exponential
// time on (those are kept short here).
func TestMatchSegs(t *testing.T) {
	var ref func(pat, segs []string) bool
	ref = func(pat, segs []string) bool {
		if len(pat) == 0 {
			return len(segs) == 0
		}
		if pat[0] == "**" {
			for k := 0; k <= len(segs); k++ {
				if ref(pat[1:], segs[k:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		ok, _ := path.Match(pat[0], segs[0])
		return ok && ref(pat[1:], segs[1:])
	}
	pats := []string{"**", "**/*.onnx", "a/**/b/*.onnx", "**/**/x", "a/**", "**/a/**/a/**/b", "*/*", "a", "**/b/**"}
	paths := []string{"a", "a/b", "a/b/c.onnx", "a/x/y/b/m.onnx", "x", "a/a/a/b", "b/a/b", "c/d/x", "a/b/x", ""}
	for _, p := range pats {
		for _, s := range paths {
			ps, ss := strings.Split(p, "/"), strings.Split(s, "/")
			if s == "" {
				ss = nil
			}
			if got, want := matchSegs(ps, ss), ref(ps, ss); got != want {
				t.Errorf("matchSegs(%q, %q) = %v, want %v", p, s, got, want)
			}
		}
	}
	// 40 "**" against 60 segments that never match: a backtracking
	// matcher tries C(100, 40) splits; this one answers.
	pat := strings.Split(strings.Repeat("**/", 40)+"z", "/")
	segs := strings.Split(strings.Repeat("a/", 59)+"b", "/")
	if matchSegs(pat, segs) {
		t.Error("matched a path without z")
	}
}
