package onnxspec

import (
	"fmt"
	"sort"
	"strings"
)

// opKey identifies an operator across its versions.
type opKey struct{ domain, name string }

// index maps each operator to its versions in schemaTable, ascending. It is
// built once at package initialization and only read afterwards.
var index = buildIndex()

func buildIndex() map[opKey][]*Schema {
	m := make(map[opKey][]*Schema)
	for i := range schemaTable {
		s := &schemaTable[i]
		k := opKey{s.Domain, s.Name}
		m[k] = append(m[k], s) // schemaTable is sorted by since-version
	}
	return m
}

// lastReleased is, per domain, the last operator set version shipped in an
// ONNX release. Source: the version table of the ONNX main snapshot
// (../shared/onnx-main-1.23dev/version_table.txt: 1.22.0 shipped ai.onnx
// 27, ai.onnx.ml 5, ai.onnx.training 1); the snapshot itself, 1.23.0 with
// opset 28, is still in development. ai.onnx.preview is not in that table;
// its only version, 1, holds experimental ops only.
var lastReleased = map[string]int{
	DomainONNX:     27,
	DomainML:       5,
	DomainTraining: 1,
	DomainPreview:  1,
}

// Lookup returns the version of op in force in the given opset version of
// domain: the one with the highest SinceVersion <= opset. Domain "" and
// "ai.onnx" are the same. It reports false when the op does not exist in
// that domain or was introduced after opset. A deprecated version is
// returned like any other; check Schema.Deprecated.
func Lookup(domain, op string, opset int) (*Schema, bool) {
	vs := index[opKey{NormalizeDomain(domain), op}]
	// First version with SinceVersion > opset.
	i := sort.Search(len(vs), func(i int) bool { return vs[i].SinceVersion > opset })
	if i == 0 {
		return nil, false
	}
	return vs[i-1], true
}

// Get returns the version of op whose SinceVersion is exactly since.
func Get(domain, op string, since int) (*Schema, bool) {
	s, ok := Lookup(domain, op, since)
	if !ok || s.SinceVersion != since {
		return nil, false
	}
	return s, true
}

// Versions returns every version of op, ascending by SinceVersion, or nil
// when the domain has no such op. The slice is a fresh copy; the schemas
// are shared and read-only.
func Versions(domain, op string) []*Schema {
	vs := index[opKey{NormalizeDomain(domain), op}]
	if len(vs) == 0 {
		return nil
	}
	return append([]*Schema(nil), vs...)
}

// All returns every operator version of every domain, sorted by domain,
// name and SinceVersion.
func All() []*Schema {
	out := make([]*Schema, len(schemaTable))
	for i := range schemaTable {
		out[i] = &schemaTable[i]
	}
	return out
}

// Ops returns the operator names of a domain, sorted.
func Ops(domain string) []string {
	domain = NormalizeDomain(domain)
	var out []string
	for k := range index {
		if k.domain == domain {
			out = append(out, k.name)
		}
	}
	sort.Strings(out)
	return out
}

// Domains returns the domains of the registry, sorted, with the default
// domain spelled "".
func Domains() []string {
	out := make([]string, 0, len(genMaxOpset))
	for d := range genMaxOpset {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// MaxOpset returns the highest operator set version of domain defined by
// the spec (28 for ai.onnx, 5 for ai.onnx.ml), or 0 for an unknown domain.
func MaxOpset(domain string) int {
	return genMaxOpset[NormalizeDomain(domain)]
}

// LastReleasedOpset returns the highest operator set version of domain
// shipped in a released ONNX version (27 for ai.onnx: ONNX 1.23 with
// opset 28 is in development in the snapshot the registry is generated
// from; 5 for ai.onnx.ml), or 0 for an unknown domain.
func LastReleasedOpset(domain string) int {
	return lastReleased[NormalizeDomain(domain)]
}

// Resolve finds an operator from user input. domain "" means "any": the
// name may then carry its domain as a prefix ("ai.onnx.ml.TreeEnsemble"),
// and otherwise ai.onnx is searched first, then the other domains, then
// every domain case-insensitively. It returns the normalized domain ("" for
// ai.onnx) and the exact operator name.
func Resolve(domain, name string) (string, string, error) {
	if name == "" {
		return "", "", fmt.Errorf("opset: empty operator name")
	}
	explicit := domain != ""
	domain = NormalizeDomain(domain)
	if !explicit {
		prefixes := []string{DomainONNXName}
		for _, d := range Domains() {
			if d != DomainONNX {
				prefixes = append(prefixes, d)
			}
		}
		sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
		for _, d := range prefixes {
			if rest, ok := strings.CutPrefix(name, d+"."); ok && rest != "" {
				domain, name, explicit = NormalizeDomain(d), rest, true
				break
			}
		}
	}
	if explicit {
		if _, ok := genMaxOpset[domain]; !ok {
			return "", "", fmt.Errorf("opset: unknown domain %q (known: %s)", domain, strings.Join(displayDomains(), ", "))
		}
		if _, ok := index[opKey{domain, name}]; ok {
			return domain, name, nil
		}
		return pick(name, func(k opKey) bool { return k.domain == domain && strings.EqualFold(k.name, name) },
			"domain "+DisplayDomain(domain))
	}
	if _, ok := index[opKey{DomainONNX, name}]; ok {
		return DomainONNX, name, nil
	}
	if anyOp(func(k opKey) bool { return k.name == name }) {
		return pick(name, func(k opKey) bool { return k.name == name }, "any domain")
	}
	return pick(name, func(k opKey) bool { return strings.EqualFold(k.name, name) }, "any domain")
}

// anyOp reports whether any operator matches.
func anyOp(match func(opKey) bool) bool {
	for k := range index {
		if match(k) {
			return true
		}
	}
	return false
}

// pick returns the only operator that matches, or an error naming the
// candidates.
func pick(name string, match func(opKey) bool, where string) (string, string, error) {
	var found []string
	var only opKey
	for k := range index {
		if match(k) {
			only = k
			found = append(found, DisplayDomain(k.domain)+"."+k.name)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("opset: no operator %q in %s", name, where)
	case 1:
		return only.domain, only.name, nil
	}
	sort.Strings(found)
	return "", "", fmt.Errorf("opset: operator %q is ambiguous (%s); give the domain", name, strings.Join(found, ", "))
}

func displayDomains() []string {
	var out []string
	for _, d := range Domains() {
		out = append(out, DisplayDomain(d))
	}
	return out
}
