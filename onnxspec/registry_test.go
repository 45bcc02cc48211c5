package onnxspec

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docsDir returns ../shared/onnx-main-1.23dev/docs relative to the folder holding
// go.mod.
func docsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test folder")
		}
		dir = parent
	}
	docs := filepath.Join(dir, "..", "shared", "onnx-main-1.23dev", "docs")
	if _, err := os.Stat(filepath.Join(docs, "Operators.md")); err != nil {
		t.Fatalf("ONNX docs not found: %v", err)
	}
	return docs
}

type version struct {
	domain, name string
	since        int
}

func (v version) String() string {
	return fmt.Sprintf("%s.%s-%d", DisplayDomain(v.domain), v.name, v.since)
}

var (
	linkRe    = regexp.MustCompile(`Changelog(?:-ml)?\.md#([^"]+)-(\d+)"`)
	opHeadRe  = regexp.MustCompile(`^### (?:<sub>experimental</sub> )?<a name="([^"]+)"></a>`)
	opSinceRe = regexp.MustCompile(`has been (?:available|deprecated) since version (\d+) of`)
)

// splitAnchor splits "ai.onnx.ml.TreeEnsemble" into its domain and name.
func splitAnchor(anchor string) (string, string) {
	for _, d := range []string{DomainTraining, DomainPreview, DomainML} {
		if rest, ok := strings.CutPrefix(anchor, d+"."); ok {
			return d, rest
		}
	}
	return "", anchor
}

// operatorsDoc parses Operators.md or Operators-ml.md and returns the
// versions listed in the summary tables and the versions found in the
// per-operator sections ("available since version N" of the section plus
// its "Other versions of this operator" links).
func operatorsDoc(t *testing.T, path string) (table, sections map[version]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table, sections = map[version]bool{}, map[version]bool{}
	var curDomain, curName string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "|"):
			for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
				d, n := splitAnchor(m[1])
				v, _ := strconv.Atoi(m[2])
				table[version{d, n, v}] = true
			}
		case strings.HasPrefix(line, "### "):
			m := opHeadRe.FindStringSubmatch(line)
			if m == nil && !strings.Contains(line, "<a name=") {
				curName = "" // a summary table's domain header
				continue
			}
			if m == nil {
				t.Fatalf("%s: unrecognized operator header %q", path, line)
			}
			curDomain, curName = splitAnchor(m[1])
		case strings.HasPrefix(line, "Other versions of this operator:"):
			for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
				d, n := splitAnchor(m[1])
				if d != curDomain || n != curName {
					t.Fatalf("%s: %s.%s links to %s", path, curDomain, curName, m[1])
				}
				v, _ := strconv.Atoi(m[2])
				sections[version{d, n, v}] = true
			}
		case curName != "":
			if m := opSinceRe.FindStringSubmatch(line); m != nil {
				v, _ := strconv.Atoi(m[1])
				sections[version{curDomain, curName, v}] = true
			} else if strings.Contains(line, "No versioning maintained for experimental ops") {
				// The experimental ai.onnx.preview ops are version 1.
				sections[version{curDomain, curName, 1}] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return table, sections
}

func sortedKeys(m map[version]bool) []string {
	var out []string
	for v := range m {
		out = append(out, v.String())
	}
	sort.Strings(out)
	return out
}

// TestRegistryMatchesOperatorsDocs checks that the registry holds exactly
// the (domain, op, since_version) set of Operators.md and Operators-ml.md.
func TestRegistryMatchesOperatorsDocs(t *testing.T) {
	docs := docsDir(t)
	table, sections := operatorsDoc(t, filepath.Join(docs, "Operators.md"))
	mlTable, mlSections := operatorsDoc(t, filepath.Join(docs, "Operators-ml.md"))
	for v := range mlTable {
		table[v] = true
	}
	for v := range mlSections {
		sections[v] = true
	}
	// The two views of the docs agree with each other.
	if !reflect.DeepEqual(table, sections) {
		t.Fatalf("Operators.md tables and sections disagree:\ntables:   %d versions\nsections: %d versions", len(table), len(sections))
	}
	// Figures of the ONNX 1.23 dev snapshot (grep of the summary tables): 611 ai.onnx, 25 ai.onnx.ml, 4 training, 1 preview.
	perDomain := map[string]int{}
	for v := range table {
		perDomain[v.domain]++
	}
	wantPerDomain := map[string]int{"": 611, DomainML: 25, DomainTraining: 4, DomainPreview: 1}
	if !reflect.DeepEqual(perDomain, wantPerDomain) {
		t.Errorf("versions per domain in Operators.md = %v, want %v", perDomain, wantPerDomain)
	}

	reg := map[version]bool{}
	for _, s := range All() {
		reg[version{s.Domain, s.Name, s.SinceVersion}] = true
	}
	var missing, extra []string
	for v := range table {
		if !reg[v] {
			missing = append(missing, v.String())
		}
	}
	for v := range reg {
		if !table[v] {
			extra = append(extra, v.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("registry lacks %d versions listed in Operators.md: %v", len(missing), missing)
	}
	// Upsample-1 is in Changelog.md, marked "No versioning maintained for
	// experimental ops", but Operators.md lists Upsample 7, 9, 10 only. It
	// is the one allowed difference.
	if want := []string{"ai.onnx.Upsample-1"}; !reflect.DeepEqual(extra, want) {
		t.Errorf("registry versions not in Operators.md = %v, want %v", extra, want)
	}
	if s, ok := Get("", "Upsample", 1); !ok || !s.Experimental {
		t.Errorf("Upsample-1 should be in the registry and experimental, got %+v, %v", s, ok)
	}
	if len(reg) != len(table)+1 {
		t.Errorf("registry has %d versions, want %d", len(reg), len(table)+1)
	}
}

func TestLookup(t *testing.T) {
	cases := []struct {
		domain, op string
		opset      int
		want       int // 0: not found
	}{
		{"", "Softmax", 12, 11},
		{"", "Softmax", 13, 13},
		{"", "Softmax", 10, 1},
		{"ai.onnx", "Softmax", 27, 13},
		{"", "Resize", 10, 10},
		{"", "Resize", 17, 13},
		{"", "Resize", 18, 18},
		{"", "Resize", 19, 19},
		{"", "Resize", 9, 0},
		{"", "Reshape", 4, 1},
		{"", "Reshape", 12, 5},
		{"", "Reshape", 13, 13},
		{"", "Reshape", 18, 14},
		{"", "Reshape", 26, 25},
		{"", "Range", 26, 11},
		{"", "Range", 27, 27},
		{"", "Upsample", 6, 1},
		{"", "Upsample", 9, 9},
		{"", "Upsample", 12, 10},
		{"", "Abs", 0, 0},
		{"", "NoSuchOp", 20, 0},
		{"", "TreeEnsemble", 27, 0}, // wrong domain
		{DomainML, "TreeEnsemble", 5, 5},
		{DomainML, "TreeEnsemble", 4, 0},
		{DomainML, "LabelEncoder", 3, 2},
		{DomainML, "LabelEncoder", 5, 4},
		{DomainML, "TreeEnsembleClassifier", 4, 3},
		{DomainTraining, "Adam", 1, 1},
		{DomainPreview, "FlexAttention", 1, 1},
	}
	for _, c := range cases {
		s, ok := Lookup(c.domain, c.op, c.opset)
		got := 0
		if ok {
			got = s.SinceVersion
			if s.Name != c.op || s.Domain != NormalizeDomain(c.domain) {
				t.Errorf("Lookup(%q, %q, %d) returned %s", c.domain, c.op, c.opset, s)
			}
		}
		if got != c.want {
			t.Errorf("Lookup(%q, %q, %d) = since %d, want %d", c.domain, c.op, c.opset, got, c.want)
		}
	}
	if s, _ := Lookup("", "Upsample", 10); !s.Deprecated {
		t.Errorf("Upsample-10 should be deprecated")
	}
	if s, _ := Lookup(DomainML, "TreeEnsembleRegressor", 5); !s.Deprecated {
		t.Errorf("ai.onnx.ml.TreeEnsembleRegressor-5 should be deprecated")
	}
}

func TestVersionsAndDomains(t *testing.T) {
	var got []int
	for _, s := range Versions("ai.onnx", "Resize") {
		got = append(got, s.SinceVersion)
	}
	if want := []int{10, 11, 13, 18, 19}; !reflect.DeepEqual(got, want) {
		t.Errorf("Versions(Resize) = %v, want %v", got, want)
	}
	if v := Versions("", "NoSuchOp"); v != nil {
		t.Errorf("Versions(NoSuchOp) = %v, want nil", v)
	}
	if want := []string{"", DomainML, DomainPreview, DomainTraining}; !reflect.DeepEqual(Domains(), want) {
		t.Errorf("Domains() = %q, want %q", Domains(), want)
	}
	for _, c := range []struct {
		domain        string
		max, released int
	}{
		{"", 28, 27}, {"ai.onnx", 28, 27}, {DomainML, 5, 5}, {DomainTraining, 1, 1}, {DomainPreview, 1, 1}, {"com.example", 0, 0},
	} {
		if got := MaxOpset(c.domain); got != c.max {
			t.Errorf("MaxOpset(%q) = %d, want %d", c.domain, got, c.max)
		}
		if got := LastReleasedOpset(c.domain); got != c.released {
			t.Errorf("LastReleasedOpset(%q) = %d, want %d", c.domain, got, c.released)
		}
	}
	all := All()
	if len(all) != 642 {
		t.Errorf("All() has %d schemas, want 642 (641 in Operators*.md + Upsample-1)", len(all))
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Domain > b.Domain || a.Domain == b.Domain && (a.Name > b.Name || a.Name == b.Name && a.SinceVersion >= b.SinceVersion) {
			t.Fatalf("All() not sorted at %d: %s before %s", i, a, b)
		}
	}
	if n := len(Ops(DomainML)); n != 19 {
		t.Errorf("ai.onnx.ml has %d ops, want 19", n)
	}
}

// TestSchemaContents checks parsed signatures against Changelog.md.
func TestSchemaContents(t *testing.T) {
	get := func(domain, op string, since int) *Schema {
		t.Helper()
		s, ok := Get(domain, op, since)
		if !ok {
			t.Fatalf("%s-%d missing", op, since)
		}
		return s
	}

	reshape := get("", "Reshape", 14)
	wantIn := []FormalParameter{
		{Name: "data", TypeStr: "T", Option: Single, MinArity: 1, Homogeneous: true, Differentiability: Differentiable},
		{Name: "shape", TypeStr: "tensor(int64)", Option: Single, MinArity: 1, Homogeneous: true, Differentiability: NonDifferentiable},
	}
	if !reflect.DeepEqual(reshape.Inputs, wantIn) {
		t.Errorf("Reshape-14 inputs = %+v, want %+v", reshape.Inputs, wantIn)
	}
	if a, ok := reshape.Attribute("allowzero"); !ok || a.Type != AttrInt || !a.DefaultParsed || a.DefaultInt != 0 || a.Default != "0" {
		t.Errorf("Reshape-14 allowzero = %+v", a)
	}
	if tc, _ := reshape.TypeConstraint("T"); len(tc.Allowed) != 16 || tc.Allowed[8] != "tensor(bfloat16)" {
		t.Errorf("Reshape-14 T = %v", tc.Allowed)
	}

	concat := get("", "Concat", 13)
	if p := concat.Inputs[0]; p.Option != Variadic || p.MinArity != 1 || !p.Homogeneous || concat.MinInputs != 1 || concat.MaxInputs != Unbounded {
		t.Errorf("Concat-13 inputs = %+v, %d..%d", p, concat.MinInputs, concat.MaxInputs)
	}
	if a, _ := concat.Attribute("axis"); !a.Required || a.Type != AttrInt || a.HasDefault {
		t.Errorf("Concat-13 axis = %+v", a)
	}

	loop := get("", "Loop", 16)
	if loop.MinInputs != 2 || loop.MaxInputs != Unbounded || loop.Inputs[0].Option != Optional || loop.Inputs[2].MinArity != 0 || loop.Inputs[2].Homogeneous {
		t.Errorf("Loop-16 inputs = %+v, %d..%d", loop.Inputs, loop.MinInputs, loop.MaxInputs)
	}
	if a, _ := loop.Attribute("body"); a.Type != AttrGraph || !a.Required {
		t.Errorf("Loop-16 body = %+v", a)
	}

	resize := get("", "Resize", 19)
	if resize.MinInputs != 1 || resize.MaxInputs != 4 || len(resize.Inputs) != 4 || resize.Inputs[3].Name != "sizes" || resize.Inputs[3].Option != Optional {
		t.Errorf("Resize-19 inputs = %+v, %d..%d", resize.Inputs, resize.MinInputs, resize.MaxInputs)
	}
	for name, want := range map[string]string{"coordinate_transformation_mode": "half_pixel", "keep_aspect_ratio_policy": "stretch", "mode": "nearest", "nearest_mode": "round_prefer_floor"} {
		if a, ok := resize.Attribute(name); !ok || a.Type != AttrString || a.DefaultString != want {
			t.Errorf("Resize-19 %s = %+v, want default %q", name, a, want)
		}
	}
	if a, _ := resize.Attribute("cubic_coeff_a"); a.DefaultFloat != -0.75 {
		t.Errorf("Resize-19 cubic_coeff_a = %+v", a)
	}
	if a, _ := resize.Attribute("axes"); a.Type != AttrInts || a.HasDefault || a.Required {
		t.Errorf("Resize-19 axes = %+v", a)
	}

	// Floats the spec prints rounded: exact values from the descriptions
	// and FLT_MAX.
	selu := get("", "Selu", 6)
	if a, _ := selu.Attribute("alpha"); a.Default != "1.67326" || a.DefaultFloat != float32(1.67326319217681884765625) {
		t.Errorf("Selu-6 alpha = %+v", a)
	}
	if a, _ := selu.Attribute("gamma"); a.Default != "1.0507" || a.DefaultFloat != float32(1.05070102214813232421875) {
		t.Errorf("Selu-6 gamma = %+v", a)
	}
	if a, _ := get("", "Selu", 1).Attribute("alpha"); a.DefaultFloat != float32(1.6732) {
		t.Errorf("Selu-1 alpha = %+v", a)
	}
	clip := get("", "Clip", 6)
	if a, _ := clip.Attribute("max"); a.DefaultFloat != math.MaxFloat32 || a.Default != "(3.402823e+38)" {
		t.Errorf("Clip-6 max = %+v", a)
	}
	if a, _ := clip.Attribute("min"); a.DefaultFloat != -math.MaxFloat32 {
		t.Errorf("Clip-6 min = %+v", a)
	}
	if a, _ := get("", "MeanVarianceNormalization", 13).Attribute("axes"); !reflect.DeepEqual(a.DefaultInts, []int64{0, 2, 3}) {
		t.Errorf("MeanVarianceNormalization-13 axes = %+v", a)
	}
	if a, _ := get("", "RNN", 14).Attribute("activations"); !reflect.DeepEqual(a.DefaultStrings, []string{"Tanh", "Tanh"}) || a.Type != AttrStrings {
		t.Errorf("RNN-14 activations = %+v", a)
	}
	if a, _ := get("", "Constant", 13).Attribute("sparse_value"); a.Type != AttrSparseTensor {
		t.Errorf("Constant-13 sparse_value = %+v", a)
	}
	if c := get("", "Constant", 13); c.MinInputs != 0 || c.MaxInputs != 0 || len(c.Inputs) != 0 || c.MaxOutputs != 1 {
		t.Errorf("Constant-13 arity %d..%d inputs %v", c.MinInputs, c.MaxInputs, c.Inputs)
	}

	zipmap := get(DomainML, "ZipMap", 1)
	if tc, _ := zipmap.TypeConstraint("T"); !reflect.DeepEqual(tc.Allowed, []string{"seq(map(string, float))", "seq(map(int64, float))"}) {
		t.Errorf("ZipMap-1 T = %q", tc.Allowed)
	}
	if a, _ := zipmap.Attribute("classlabels_int64s"); a.Type != AttrInts {
		t.Errorf("ZipMap-1 classlabels_int64s = %+v", a)
	}
	te := get(DomainML, "TreeEnsemble", 5)
	if a, _ := te.Attribute("nodes_modes"); a.Type != AttrTensor || !a.Required {
		t.Errorf("TreeEnsemble-5 nodes_modes = %+v", a)
	}
	if len(te.Attributes) != 16 {
		t.Errorf("TreeEnsemble-5 has %d attributes, want 16", len(te.Attributes))
	}

	opt := get("", "Optional", 15)
	if tc, _ := opt.TypeConstraint("O"); len(tc.Allowed) == 0 || !strings.HasPrefix(tc.Allowed[0], "optional(") {
		t.Errorf("Optional-15 O = %q", tc.Allowed)
	}
	if a, _ := opt.Attribute("type"); a.Type != AttrTypeProto {
		t.Errorf("Optional-15 type = %+v", a)
	}

	adam := get(DomainTraining, "Adam", 1)
	if adam.MinInputs != 3 || adam.MaxInputs != Unbounded || adam.Inputs[2].Option != Variadic || adam.Inputs[2].Homogeneous {
		t.Errorf("Adam-1 inputs = %+v, %d..%d", adam.Inputs, adam.MinInputs, adam.MaxInputs)
	}
	if a, _ := adam.Attribute("alpha"); a.DefaultFloat != 0.9 {
		t.Errorf("Adam-1 alpha = %+v", a)
	}
	if a, _ := adam.Attribute("beta"); a.DefaultFloat != float32(0.999) {
		t.Errorf("Adam-1 beta = %+v", a)
	}
	fa := get(DomainPreview, "FlexAttention", 1)
	if !fa.Experimental || len(fa.Inputs) != 3 {
		t.Errorf("FlexAttention-1 = %+v", fa)
	}
	if g := get("", "GroupNormalization", 18); !g.Deprecated || len(g.Inputs) != 0 {
		t.Errorf("GroupNormalization-18 = %+v", g)
	}

	// Every formal parameter whose type is a parameter name has a
	// constraint, and every variadic parameter is last.
	for _, s := range All() {
		for _, ps := range [][]FormalParameter{s.Inputs, s.Outputs} {
			for i, p := range ps {
				if p.Option == Variadic && i != len(ps)-1 {
					t.Errorf("%s: variadic %s is not last", s, p.Name)
				}
				if !strings.Contains(p.TypeStr, "(") && p.TypeStr != "tensor" {
					if _, ok := s.TypeConstraint(p.TypeStr); !ok {
						t.Errorf("%s: %s has unconstrained type %s", s, p.Name, p.TypeStr)
					}
				}
			}
		}
		for _, a := range s.Attributes {
			if a.HasDefault && a.Type != AttrTensor && !a.DefaultParsed {
				t.Errorf("%s: default %q of %s not parsed", s, a.Default, a.Name)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		domain, name         string
		wantDomain, wantName string
		wantErr              string
	}{
		{"", "Softmax", "", "Softmax", ""},
		{"", "softmax", "", "Softmax", ""},
		{"ai.onnx", "Softmax", "", "Softmax", ""},
		{"", "TreeEnsemble", DomainML, "TreeEnsemble", ""},
		{"", "ai.onnx.ml.TreeEnsemble", DomainML, "TreeEnsemble", ""},
		{"", "ai.onnx.preview.training.Adam", DomainTraining, "Adam", ""},
		{"", "ai.onnx.Relu", "", "Relu", ""},
		{"", "adam", DomainTraining, "Adam", ""},
		{"ai.onnx", "TreeEnsemble", "", "", `no operator "TreeEnsemble" in domain ai.onnx`},
		{"", "NoSuchOp", "", "", `no operator "NoSuchOp" in any domain`},
		{"com.example", "Relu", "", "", `unknown domain "com.example"`},
		{"", "", "", "", "empty operator name"},
	}
	for _, c := range cases {
		d, n, err := Resolve(c.domain, c.name)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Resolve(%q, %q) error = %v, want %q", c.domain, c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || d != c.wantDomain || n != c.wantName {
			t.Errorf("Resolve(%q, %q) = %q, %q, %v; want %q, %q", c.domain, c.name, d, n, err, c.wantDomain, c.wantName)
		}
	}
}

func TestClone(t *testing.T) {
	s, _ := Lookup("", "Resize", 19)
	c := s.Clone()
	c.Attributes[0].Name = "changed"
	c.TypeConstraints[0].Allowed[0] = "changed"
	c.Inputs[0].Name = "changed"
	if s.Attributes[0].Name == "changed" || s.TypeConstraints[0].Allowed[0] == "changed" || s.Inputs[0].Name == "changed" {
		t.Fatal("Clone shares memory with the registry")
	}
	if again, _ := Lookup("", "Resize", 19); !reflect.DeepEqual(again, s) || reflect.DeepEqual(again, c) {
		t.Fatal("registry changed through a clone")
	}
}

func BenchmarkLookup(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, ok := Lookup("", "Resize", 17); !ok {
			b.Fatal("Resize missing")
		}
	}
}
