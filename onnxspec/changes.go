package onnxspec

import (
	"fmt"
	"strings"
)

// ChangesBetween lists, in human-readable form, how schema b differs from
// schema a, normally two versions of one operator with a older than b:
// deprecation, input and output count ranges, each formal input and output
// by position (added, removed, renamed, option, type, differentiability),
// attributes by name (added, removed, type, required, default), and the
// allowed types of each type constraint (added, removed). A deprecated
// version has no signature in the spec, so for it only the deprecation is
// reported. It returns nil
// when the schemas are equal in all of these or when either is nil.
func ChangesBetween(a, b *Schema) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if a.Domain != b.Domain || a.Name != b.Name {
		add("operator: %s.%s -> %s.%s", a.DomainName(), a.Name, b.DomainName(), b.Name)
	}
	switch {
	case !a.Deprecated && b.Deprecated:
		// The spec prints no signature for a deprecated version, so
		// comparing signatures would only list everything as removed.
		add("deprecated: the operator is removed from this opset on")
		return out
	case a.Deprecated && !b.Deprecated:
		add("no longer deprecated")
	case a.Deprecated && b.Deprecated:
		return out
	}
	if a.Experimental != b.Experimental {
		add("experimental: %t -> %t", a.Experimental, b.Experimental)
	}
	if a.MinInputs != b.MinInputs || a.MaxInputs != b.MaxInputs {
		add("input count: %s -> %s", FormatArity(a.MinInputs, a.MaxInputs), FormatArity(b.MinInputs, b.MaxInputs))
	}
	if a.MinOutputs != b.MinOutputs || a.MaxOutputs != b.MaxOutputs {
		add("output count: %s -> %s", FormatArity(a.MinOutputs, a.MaxOutputs), FormatArity(b.MinOutputs, b.MaxOutputs))
	}
	out = append(out, paramChanges("input", a.Inputs, b.Inputs)...)
	out = append(out, paramChanges("output", a.Outputs, b.Outputs)...)
	out = append(out, attrChanges(a.Attributes, b.Attributes)...)
	out = append(out, constraintChanges(a.TypeConstraints, b.TypeConstraints)...)
	return out
}

func paramChanges(kind string, a, b []FormalParameter) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(a):
			add("%s %d added: %s", kind, i, describeParam(b[i]))
		case i >= len(b):
			add("%s %d removed: %s", kind, i, describeParam(a[i]))
		default:
			p, q := a[i], b[i]
			if p.Name != q.Name {
				add("%s %d renamed: %s -> %s", kind, i, p.Name, q.Name)
			}
			if p.Option != q.Option {
				add("%s %d %s: %s -> %s", kind, i, q.Name, p.Option, q.Option)
			}
			if p.Option == Variadic && q.Option == Variadic {
				if p.MinArity != q.MinArity {
					add("%s %d %s: min arity %d -> %d", kind, i, q.Name, p.MinArity, q.MinArity)
				}
				if p.Homogeneous != q.Homogeneous {
					add("%s %d %s: %s -> %s", kind, i, q.Name, homogeneity(p.Homogeneous), homogeneity(q.Homogeneous))
				}
			}
			if p.TypeStr != q.TypeStr {
				add("%s %d %s: type %s -> %s", kind, i, q.Name, p.TypeStr, q.TypeStr)
			}
			if p.Differentiability != q.Differentiability {
				add("%s %d %s: %s -> %s", kind, i, q.Name, p.Differentiability, q.Differentiability)
			}
		}
	}
	return out
}

func homogeneity(h bool) string {
	if h {
		return "homogeneous"
	}
	return "heterogeneous"
}

func attrChanges(a, b []Attribute) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	old := make(map[string]*Attribute, len(a))
	for i := range a {
		old[a[i].Name] = &a[i]
	}
	seen := make(map[string]bool, len(b))
	for i := range b {
		q := &b[i]
		seen[q.Name] = true
		p, ok := old[q.Name]
		if !ok {
			add("attribute %s added: %s", q.Name, describeAttr(q))
			continue
		}
		if p.Type != q.Type {
			add("attribute %s: type %s -> %s", q.Name, p.Type, q.Type)
		}
		if p.Required != q.Required {
			add("attribute %s: %s -> %s", q.Name, requirement(p.Required), requirement(q.Required))
		}
		if p.HasDefault != q.HasDefault || p.Default != q.Default {
			add("attribute %s: default %s -> %s", q.Name, defaultText(p), defaultText(q))
		}
	}
	for i := range a {
		if !seen[a[i].Name] {
			add("attribute %s removed", a[i].Name)
		}
	}
	return out
}

func requirement(r bool) string {
	if r {
		return "required"
	}
	return "optional"
}

func defaultText(a *Attribute) string {
	if !a.HasDefault {
		return "none"
	}
	return a.Default
}

// describeAttr is "INT, default 1" or "INTS, required".
func describeAttr(a *Attribute) string {
	s := a.Type.String()
	switch {
	case a.Required:
		s += ", required"
	case a.HasDefault:
		s += ", default " + a.Default
	}
	return s
}

func constraintChanges(a, b []TypeConstraint) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	old := make(map[string]*TypeConstraint, len(a))
	for i := range a {
		old[a[i].Param] = &a[i]
	}
	seen := make(map[string]bool, len(b))
	for i := range b {
		q := &b[i]
		seen[q.Param] = true
		p, ok := old[q.Param]
		if !ok {
			add("type constraint %s added: %s", q.Param, strings.Join(q.Allowed, ", "))
			continue
		}
		if added := minus(q.Allowed, p.Allowed); len(added) > 0 {
			add("type constraint %s: added %s", q.Param, strings.Join(added, ", "))
		}
		if removed := minus(p.Allowed, q.Allowed); len(removed) > 0 {
			add("type constraint %s: removed %s", q.Param, strings.Join(removed, ", "))
		}
	}
	for i := range a {
		if !seen[a[i].Param] {
			add("type constraint %s removed", a[i].Param)
		}
	}
	return out
}

// minus returns the items of x not in y, in the order of x.
func minus(x, y []string) []string {
	in := make(map[string]bool, len(y))
	for _, s := range y {
		in[s] = true
	}
	var out []string
	for _, s := range x {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}
