// Package profiles describes what each target runtime loads: the ai.onnx
// and ai.onnx.ml opset ranges, the highest IR version, the operators (per
// domain, with the operator versions implemented) and the element types.
//
// The runtime profiles are data files (data/*.json, embedded), each citing
// where its numbers come from. The generic profiles onnx-opset7 ...
// onnx-opsetN (one ONNX opset, every operator of the registry) are built
// from the onnxspec registry and ONNX's docs/Versioning.md table.
package profiles

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/internal/suggest"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// Source says where a profile's data comes from.
type Source struct {
	URL     string `json:"url"`
	Version string `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Range is an inclusive range of operator versions (since-versions);
// To == 0 means open-ended ("13+").
type Range struct {
	From int `json:"from"`
	To   int `json:"to,omitempty"`
}

// Contains reports whether version v is in r.
func (r Range) Contains(v int) bool { return v >= r.From && (r.To == 0 || v <= r.To) }

func (r Range) String() string {
	switch {
	case r.To == 0:
		return fmt.Sprintf("%d+", r.From)
	case r.To == r.From:
		return strconv.Itoa(r.From)
	default:
		return fmt.Sprintf("%d-%d", r.From, r.To)
	}
}

// Ranges is a list of version ranges; in the data files it is written as
// in the runtimes' own tables: "7-12,13,14+".
type Ranges []Range

// Contains reports whether some range holds v.
func (rs Ranges) Contains(v int) bool {
	for _, r := range rs {
		if r.Contains(v) {
			return true
		}
	}
	return false
}

func (rs Ranges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// ParseRanges parses "7-12,13,14+".
func ParseRanges(s string) (Ranges, error) {
	var out Ranges
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		var r Range
		var err error
		switch {
		case strings.HasSuffix(p, "+"):
			r.From, err = strconv.Atoi(strings.TrimSuffix(p, "+"))
		case strings.Contains(p, "-"):
			a, b, _ := strings.Cut(p, "-")
			if r.From, err = strconv.Atoi(a); err == nil {
				r.To, err = strconv.Atoi(b)
			}
		default:
			r.From, err = strconv.Atoi(p)
			r.To = r.From
		}
		if err != nil || r.From < 1 || (r.To != 0 && r.To < r.From) {
			return nil, fmt.Errorf("bad version range %q in %q", p, s)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty version range %q", s)
	}
	return out, nil
}

// MarshalJSON writes the compact form.
func (rs Ranges) MarshalJSON() ([]byte, error) { return json.Marshal(rs.String()) }

// UnmarshalJSON reads the compact form.
func (rs *Ranges) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("version ranges must be a string like \"7-12,13+\": %w", err)
	}
	r, err := ParseRanges(s)
	if err != nil {
		return err
	}
	*rs = r
	return nil
}

// OpSet is what a target supports of one domain: every operator (All,
// minus Except) or the listed operators with their versions.
type OpSet struct {
	All    bool              `json:"all,omitempty"`
	Except []string          `json:"except,omitempty"`
	Ops    map[string]Ranges `json:"ops,omitempty"`
	// Restrictions are notable limits of supported operators (attribute
	// values, constant inputs) that the target documents, in its words.
	Restrictions map[string]string `json:"restrictions,omitempty"`
	// Checks decide the restrictions from the model: the rules of an
	// operator are checked on each of its nodes. Every restriction has
	// checks; what no rule can decide statically is a RuleManual rule,
	// reported as a warning to check by hand.
	Checks map[string][]Rule `json:"checks,omitempty"`
}

// Rule kinds: what a Rule checks on a node.
const (
	// RuleSpatialRank: the number of spatial dimensions (the length of
	// kernel_shape, else the rank of input Input minus 2) is one of Ranks.
	RuleSpatialRank = "spatial_rank"
	// RuleInputRank: the rank of input Input, when present, is one of Ranks.
	RuleInputRank = "input_rank"
	// RuleAttrIn: attribute Attr (Default when absent) is one of Values;
	// an absent attribute with no Default passes.
	RuleAttrIn = "attr_in"
	// RuleAttrUnset: attribute Attr is not set.
	RuleAttrUnset = "attr_unset"
	// RuleAllOnes: the ints of attribute Attr are all 1 (or it is absent).
	RuleAllOnes = "all_ones"
	// RulePadsSymmetric: the begin and end pads (attribute pads) are equal.
	RulePadsSymmetric = "pads_symmetric"
	// RuleInputAbsent: optional input Input is not given.
	RuleInputAbsent = "input_absent"
	// RuleOutputUnused: output Output is not given, or nothing uses it.
	RuleOutputUnused = "output_unused"
	// RuleInputConst: input Input, when given, is an initializer or a
	// Constant's output.
	RuleInputConst = "input_const"
	// RuleInputZero: input Input, when given, is a constant of zeros.
	RuleInputZero = "input_zero"
	// RuleInputFalse: input Input, when given, is a constant false.
	RuleInputFalse = "input_false"
	// RuleConstBelow: input Input is a constant whose values are below Max.
	RuleConstBelow = "const_below"
	// RuleInputStatic: every dimension of input Input is a known number.
	RuleInputStatic = "input_static"
	// RuleAxisStatic: the dimension of input 0 at attribute Attr (Default
	// when absent) is a known number.
	RuleAxisStatic = "axis_static"
	// RuleInputType: the element type of input Input is one of Values.
	RuleInputType = "input_type"
	// RuleRealInput: input Input is real-valued (its last dimension is 1).
	RuleRealInput = "real_input"
	// RuleSameActivations: a bidirectional RNN/GRU/LSTM uses the same
	// activations in both directions.
	RuleSameActivations = "same_activations"
	// RuleBranches: the outputs of If's branches have the same ranks and
	// different names.
	RuleBranches = "branches"
	// RuleAxesIota: attribute axes is absent or 0..rank-1 in order.
	RuleAxesIota = "axes_iota"
	// RuleNoDownsampling: with coordinate_transformation_mode
	// align_corners, no scale is below 1.
	RuleNoDownsampling = "no_downsampling"
	// RuleNote: a fact about every node of the operator (Says), reported
	// as a warning.
	RuleNote = "note"
	// RuleManual: a restriction that cannot be decided from the model
	// (Says): a warning to check by hand.
	RuleManual = "manual"
)

// ruleKinds are the known kinds.
var ruleKinds = map[string]bool{
	RuleSpatialRank: true, RuleInputRank: true, RuleAttrIn: true, RuleAttrUnset: true, RuleAllOnes: true,
	RulePadsSymmetric: true, RuleInputAbsent: true, RuleOutputUnused: true, RuleInputConst: true,
	RuleInputZero: true, RuleInputFalse: true, RuleConstBelow: true, RuleInputStatic: true, RuleAxisStatic: true,
	RuleInputType: true, RuleRealInput: true, RuleSameActivations: true, RuleBranches: true, RuleAxesIota: true,
	RuleNoDownsampling: true, RuleNote: true, RuleManual: true,
}

// Rule is one checkable part of a restriction (see the Rule* kinds).
type Rule struct {
	Rule    string   `json:"rule"`
	Input   int      `json:"input,omitempty"`
	Output  int      `json:"output,omitempty"`
	Attr    string   `json:"attr,omitempty"`
	Values  []string `json:"values,omitempty"`
	Default string   `json:"default,omitempty"`
	Ranks   []int    `json:"ranks,omitempty"`
	Max     float64  `json:"max,omitempty"`
	// Says is what the rule requires, in words ("at most 2 spatial
	// dimensions"); for RuleNote and RuleManual, the whole message.
	Says string `json:"says"`
	// Warning makes a failed check a warning (the target runs the node,
	// with a documented difference) instead of a violation.
	Warning bool `json:"warning,omitempty"`
}

func (r Rule) validate() error {
	if !ruleKinds[r.Rule] {
		return fmt.Errorf("unknown rule %q", r.Rule)
	}
	if r.Says == "" {
		return fmt.Errorf("rule %s says nothing", r.Rule)
	}
	switch r.Rule {
	case RuleSpatialRank, RuleInputRank:
		if len(r.Ranks) == 0 {
			return fmt.Errorf("rule %s has no ranks", r.Rule)
		}
	case RuleAttrIn, RuleInputType:
		if len(r.Values) == 0 {
			return fmt.Errorf("rule %s has no values", r.Rule)
		}
	case RuleConstBelow:
		if r.Max == 0 {
			return fmt.Errorf("rule %s has no max", r.Rule)
		}
	}
	switch r.Rule {
	case RuleAttrIn, RuleAttrUnset, RuleAllOnes, RuleAxisStatic:
		if r.Attr == "" {
			return fmt.Errorf("rule %s names no attribute", r.Rule)
		}
	}
	return nil
}

// Types restricts element types.
type Types struct {
	// Unsupported element types (ONNX names: "double", "string", ...).
	Unsupported []string `json:"unsupported,omitempty"`
	// Limited types are accepted with a documented caveat (e.g. TensorRT
	// casts int64 to int32).
	Limited map[string]string `json:"limited,omitempty"`
	// Where decides a Limited type from the model: TypeIO accepts it only
	// as an input or output of the main graph, TypeQuantized only as the
	// output of QuantizeLinear or an input of DequantizeLinear. A Limited
	// type without a Where entry is a documented difference, reported as a
	// warning wherever the type appears.
	Where map[string]string `json:"where,omitempty"`
}

// Where conditions of Types.
const (
	TypeIO        = "io"
	TypeQuantized = "quantized"
)

// Profile is one target runtime.
type Profile struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Source      []Source `json:"source"`
	MinOpset    int      `json:"min_opset"`
	MaxOpset    int      `json:"max_opset"`
	// MLMinOpset..MLMaxOpset is the ai.onnx.ml range; 0 when the target
	// runs no ai.onnx.ml operators.
	MLMinOpset   int               `json:"ml_min_opset,omitempty"`
	MLMaxOpset   int               `json:"ml_max_opset,omitempty"`
	MaxIRVersion int64             `json:"max_ir_version"`
	Ops          map[string]*OpSet `json:"ops"`
	// KernelTables names the CPU kernel tables (kernels.go) that say which
	// element types each operator version's kernel implements; with
	// several, a type must be in each. Empty: types are not known per
	// operator.
	KernelTables []string `json:"cpu_kernels,omitempty"`
	Types        *Types   `json:"types,omitempty"`
	// Fallback is true when an operator the target lacks still runs, on a
	// slower device (ONNX Runtime Web's WebGPU EP falls back to the CPU):
	// such operators are warnings, not errors.
	Fallback bool     `json:"fallback,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Runtime names the runtime (of a runtimes.Set) in which onnxconv
	// runs a result for the target ("onnxruntime": ONNX Runtime's
	// profiles, the web builds sharing its core), "" when it runs none (the
	// profile's checks are then all).
	Runtime string `json:"runtime,omitempty"`
}

// Default is the profile of a conversion given no target: ONNX Runtime,
// in which the written file is run.
const Default = "onnxruntime-1.30"

// normDomain maps "ai.onnx" to "".
func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// opSet returns the OpSet of domain ("" and "ai.onnx" are the same).
func (p *Profile) opSet(domain string) *OpSet {
	domain = normDomain(domain)
	for d, s := range p.Ops {
		if normDomain(d) == domain {
			return s
		}
	}
	return nil
}

// HasDomain reports whether the target runs any operator of domain.
func (p *Profile) HasDomain(domain string) bool { return p.opSet(domain) != nil }

// Supports reports whether the target implements version since (the
// operator version, i.e. its SinceVersion) of op in domain. When it does
// not, the reason says why.
func (p *Profile) Supports(domain, op string, since int) (bool, string) {
	s := p.opSet(domain)
	if s == nil {
		d := domain
		if d == "" {
			d = "ai.onnx"
		}
		return false, fmt.Sprintf("%s does not run operators of domain %s", p.Name, d)
	}
	if s.All {
		for _, e := range s.Except {
			if e == op {
				return false, fmt.Sprintf("%s does not implement %s", p.Name, op)
			}
		}
		return true, ""
	}
	rs, ok := s.Ops[op]
	if !ok {
		return false, fmt.Sprintf("%s does not implement %s", p.Name, op)
	}
	if !rs.Contains(since) {
		return false, fmt.Sprintf("%s implements %s versions %s, not version %d", p.Name, op, rs, since)
	}
	return true, ""
}

// Lists reports whether op appears at all (any version) in the target's
// operator list of domain.
func (p *Profile) Lists(domain, op string) bool {
	s := p.opSet(domain)
	if s == nil {
		return false
	}
	if s.All {
		for _, e := range s.Except {
			if e == op {
				return false
			}
		}
		return true
	}
	_, ok := s.Ops[op]
	return ok
}

// Restriction returns the documented restriction of op, if any.
func (p *Profile) Restriction(domain, op string) string {
	if s := p.opSet(domain); s != nil {
		return s.Restrictions[op]
	}
	return ""
}

// Checks returns the rules that decide the restriction of op.
func (p *Profile) Checks(domain, op string) []Rule {
	if s := p.opSet(domain); s != nil {
		return s.Checks[op]
	}
	return nil
}

// TypeUnsupported reports whether elem (an ONNX type name like "double")
// is unsupported.
func (p *Profile) TypeUnsupported(elem string) bool {
	if p.Types == nil {
		return false
	}
	for _, t := range p.Types.Unsupported {
		if strings.EqualFold(t, elem) {
			return true
		}
	}
	return false
}

func (p *Profile) validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("a profile has no name")
	case len(p.Source) == 0:
		return fmt.Errorf("profile %s cites no source", p.Name)
	case p.MinOpset < 1 || p.MaxOpset < p.MinOpset:
		return fmt.Errorf("profile %s: bad opset range %d..%d", p.Name, p.MinOpset, p.MaxOpset)
	case p.MLMaxOpset < p.MLMinOpset:
		return fmt.Errorf("profile %s: bad ai.onnx.ml opset range %d..%d", p.Name, p.MLMinOpset, p.MLMaxOpset)
	case p.MaxIRVersion < 3:
		return fmt.Errorf("profile %s: bad max IR version %d", p.Name, p.MaxIRVersion)
	case p.opSet("") == nil:
		return fmt.Errorf("profile %s lists no ai.onnx operators", p.Name)
	}
	for _, t := range p.KernelTables {
		if !hasKernelTable(t) {
			return fmt.Errorf("profile %s: unknown CPU kernel table %q", p.Name, t)
		}
	}
	if p.Types != nil {
		for t, w := range p.Types.Where {
			if p.Types.Limited[t] == "" || (w != TypeIO && w != TypeQuantized) {
				return fmt.Errorf("profile %s: types.where[%s] = %q: want %q or %q for a limited type", p.Name, t, w, TypeIO, TypeQuantized)
			}
		}
	}
	for d, s := range p.Ops {
		for op := range s.Restrictions {
			if len(s.Checks[op]) == 0 {
				return fmt.Errorf("profile %s: restriction of %s %s has no checks (use a %q rule for what cannot be decided)", p.Name, d, op, RuleManual)
			}
		}
		for op, rules := range s.Checks {
			if s.Restrictions[op] == "" {
				return fmt.Errorf("profile %s: checks of %s %s have no restriction text", p.Name, d, op)
			}
			for _, r := range rules {
				if err := r.validate(); err != nil {
					return fmt.Errorf("profile %s: %s %s: %w", p.Name, d, op, err)
				}
			}
		}
	}
	return nil
}

//go:embed data/*.json
var dataFS embed.FS

// file is the layout of one data file: Runtime is the runtime of every
// profile of the file that names none.
type file struct {
	Runtime  string     `json:"runtime,omitempty"`
	Profiles []*Profile `json:"profiles"`
}

// loadAll parses the embedded files and adds the generic profiles. It runs
// on every call (the data is small) so that callers get their own copies
// and no package state is shared.
func loadAll() ([]*Profile, error) {
	entries, err := dataFS.ReadDir("data")
	if err != nil {
		return nil, fmt.Errorf("reading embedded profiles: %w", err)
	}
	var out []*Profile
	// Names are unique without regard to case (Get finds a profile by
	// its name in any case).
	seen := map[string]bool{}
	for _, e := range entries {
		b, err := dataFS.ReadFile("data/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded profile file %s: %w", e.Name(), err)
		}
		var f file
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("profile file %s: %w", e.Name(), err)
		}
		for _, p := range f.Profiles {
			if err := p.validate(); err != nil {
				return nil, fmt.Errorf("profile file %s: %w", e.Name(), err)
			}
			if seen[strings.ToLower(p.Name)] {
				return nil, fmt.Errorf("profile file %s: profile %s defined twice", e.Name(), p.Name)
			}
			seen[strings.ToLower(p.Name)] = true
			if p.Runtime == "" {
				p.Runtime = f.Runtime
			}
			out = append(out, p)
		}
	}
	for _, p := range generic() {
		if seen[strings.ToLower(p.Name)] {
			return nil, fmt.Errorf("profile %s: defined twice (a generic profile and an embedded one)", p.Name)
		}
		seen[strings.ToLower(p.Name)] = true
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return lessName(out[i].Name, out[j].Name) })
	return out, nil
}

// lessName sorts names with embedded numbers numerically
// (onnxruntime-1.9 < onnxruntime-1.17, onnx-opset7 < onnx-opset17).
func lessName(a, b string) bool {
	for a != "" && b != "" {
		ia, ib := digitsAt(a), digitsAt(b)
		if ia > 0 && ib > 0 {
			na, _ := strconv.Atoi(a[:ia])
			nb, _ := strconv.Atoi(b[:ib])
			if na != nb {
				return na < nb
			}
			a, b = a[ia:], b[ib:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitsAt(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// All returns every profile, sorted by name.
func All() ([]*Profile, error) { return loadAll() }

// Names returns the names of every profile, sorted.
func Names() ([]string, error) {
	all, err := loadAll()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	return names, nil
}

// Get returns the profile called name (case-insensitive).
func Get(name string) (*Profile, error) {
	all, err := loadAll()
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	return nil, &UnknownTargetError{Name: name, Suggestion: suggest.Closest(name, names), Names: names}
}

// UnknownTargetError is returned by Get for a name no profile has.
// Suggestion is the nearest known name when the name looks like a typo of
// it (else ""); Names lists every known profile, sorted.
type UnknownTargetError struct {
	Name       string
	Suggestion string
	Names      []string
}

func (e *UnknownTargetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown target profile %q", e.Name)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, "; did you mean %q?", e.Suggestion)
	}
	fmt.Fprintf(&b, " ('onnxconv targets' lists the %d known profiles)", len(e.Names))
	return b.String()
}

// IRVersionForOpset is the IR version of the first ONNX release that
// shipped ai.onnx opset n (ONNX docs/Versioning.md, "Released Versions"):
// the IR version a model at opset n needs.
func IRVersionForOpset(n int) int64 { return onnxspec.IRVersion(onnxspec.DomainONNX, n) }

// IRVersionForMLOpset is the IR version of the first ONNX release that
// shipped ai.onnx.ml opset n (same table).
func IRVersionForMLOpset(n int) int64 { return onnxspec.IRVersion(onnxspec.DomainML, n) }

// mlOpsetForOpset is the ai.onnx.ml opset released with ai.onnx opset n.
func mlOpsetForOpset(n int) int {
	switch {
	case n <= 10:
		return 1
	case n <= 15:
		return 2
	case n <= 19:
		return 3
	case n == 20:
		return 4
	default:
		return 5
	}
}

// generic returns onnx-opset7 .. onnx-opsetN (N the registry's highest
// opset): exactly that opset, every operator, the IR version of the ONNX
// release that introduced it.
func generic() []*Profile {
	maxOp := onnxspec.MaxOpset("")
	var out []*Profile
	for n := 7; n <= maxOp; n++ {
		p := &Profile{
			Name:         fmt.Sprintf("onnx-opset%d", n),
			Description:  fmt.Sprintf("Any ONNX runtime at ai.onnx opset %d: every operator of the ONNX spec, converted to exactly opset %d", n, n),
			Source:       []Source{{URL: "https://github.com/onnx/onnx/blob/v1.22.0/docs/Versioning.md#released-versions", Version: "ONNX 1.22", Note: "opset/IR pairing; operators from the onnxspec registry"}},
			MinOpset:     n,
			MaxOpset:     n,
			MLMinOpset:   1,
			MLMaxOpset:   mlOpsetForOpset(n),
			MaxIRVersion: IRVersionForOpset(n),
			Ops: map[string]*OpSet{
				"ai.onnx":    {All: true},
				"ai.onnx.ml": {All: true},
			},
		}
		if n > onnxspec.LastReleasedOpset("") {
			p.Notes = append(p.Notes, fmt.Sprintf("opset %d is not in a released ONNX version yet", n))
		}
		out = append(out, p)
	}
	return out
}
