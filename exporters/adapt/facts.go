package adapt

import "strings"

// Facts splits what an adaptation did into facts (the actions and notes of
// Lines, nodes changed the same way summarised in one line) and warnings
// (the "warning: " lines and the violations marked as warnings, without
// the prefix); other violations are left out (they are the error).
func (r *Report) Facts() (applied, warnings []string) {
	w := *r
	w.Violations = nil
	for _, v := range r.Violations {
		if v.Warning {
			w.Violations = append(w.Violations, v)
		}
	}
	for _, l := range w.Lines() {
		if s, ok := strings.CutPrefix(l, "warning: "); ok {
			warnings = append(warnings, s)
			continue
		}
		applied = append(applied, l)
	}
	return applied, warnings
}
