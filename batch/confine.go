package batch

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// OutsideError is a manifest path (a model pattern, a reference or
// inputs folder) that leads outside the manifest's folder while
// Manifest.AllowOutside is not set.
type OutsideError struct {
	Dir  string
	Name string
	Why  string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%q %s, outside the manifest's folder %s; batch reads only inside it unless --allow-outside is given",
		e.Name, e.Why, e.Dir)
}

// localPattern refuses an absolute pattern or one with "..", unless
// allowed.
func localPattern(dir, pattern string, allowed bool) error {
	if allowed {
		return nil
	}
	p := filepath.ToSlash(pattern)
	switch {
	case path.IsAbs(p) || filepath.IsAbs(pattern) || filepath.VolumeName(pattern) != "":
		return &OutsideError{Dir: dir, Name: pattern, Why: "is an absolute path"}
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		return &OutsideError{Dir: dir, Name: pattern, Why: "leaves the folder (..)"}
	}
	return nil
}

// confined checks that file (a path under dir) resolves, symbolic links
// followed, to a path inside dir, unless allowed.
func confined(dir, file, name string, allowed bool) error {
	if allowed {
		return nil
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return &OutsideError{Dir: dir, Name: name, Why: "is a symbolic link (or lies below one) to " + real}
	}
	return nil
}

// matchSegs matches path segments against pattern segments, "**"
// matching zero or more segments, without backtracking: the set of
// pattern positions reachable after each segment is carried forward, so
// the work is len(pat) × len(segs) whatever the pattern.
func matchSegs(pat, segs []string) bool {
	cur := make([]bool, len(pat)+1)
	next := make([]bool, len(pat)+1)
	closeStars := func(s []bool) {
		for i := range pat {
			if s[i] && pat[i] == "**" {
				s[i+1] = true
			}
		}
	}
	cur[0] = true
	closeStars(cur)
	for _, seg := range segs {
		clear(next)
		any := false
		for i, p := range pat {
			if !cur[i] {
				continue
			}
			if p == "**" {
				next[i] = true // ** takes this segment and stays
				any = true
				continue
			}
			if ok, _ := path.Match(p, seg); ok {
				next[i+1] = true
				any = true
			}
		}
		if !any {
			return false
		}
		closeStars(next)
		cur, next = next, cur
	}
	return cur[len(pat)]
}
