package profiles

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/onnxspec"
)

func TestGetKnownAndUnknown(t *testing.T) {
	p, err := Get("onnxruntime-1.17")
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxOpset != 20 || p.MLMaxOpset != 4 || p.MaxIRVersion != 9 || p.MinOpset != 7 {
		t.Errorf("onnxruntime-1.17 = opset %d..%d ml %d IR %d, want 7..20 ml 4 IR 9", p.MinOpset, p.MaxOpset, p.MLMaxOpset, p.MaxIRVersion)
	}
}

// An unknown name is a typed error: a typo gets the nearest name, the
// message points to 'onnxconv targets' instead of listing every profile.
func TestGetUnknownTarget(t *testing.T) {
	all, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, suggestion string }{
		{"onnxruntim-1.17", "onnxruntime-1.17"},
		{"tensorrt10", "tensorrt-10"},
		{"openvino-2052", "openvino-2025"},
		{"coreml", ""},
	} {
		_, err := Get(c.in)
		var ue *UnknownTargetError
		if !errors.As(err, &ue) {
			t.Fatalf("Get(%q): err = %v, want *UnknownTargetError", c.in, err)
		}
		if ue.Name != c.in || ue.Suggestion != c.suggestion || len(ue.Names) != len(all) || len(all) != 44 {
			t.Errorf("Get(%q): %+v (suggestion want %q, %d names)", c.in, ue, c.suggestion, len(all))
		}
		msg := err.Error()
		want := fmt.Sprintf("unknown target profile %q; did you mean %q? ('onnxconv targets' lists the 44 known profiles)", c.in, c.suggestion)
		if c.suggestion == "" {
			want = fmt.Sprintf("unknown target profile %q ('onnxconv targets' lists the 44 known profiles)", c.in)
		}
		if msg != want {
			t.Errorf("Get(%q): message\n%s\nwant\n%s", c.in, msg, want)
		}
		if strings.Contains(msg, "onnx-opset7") || strings.Contains(msg, "onnxruntime-web-wasm") {
			t.Errorf("message still lists the names: %s", msg)
		}
	}
}

// The ONNX Runtime rows: 1.13-1.16 from its compatibility table, 1.17 on
// as measured by scripts/ort-limits/measure.sh (1.18-1.20 keep ai.onnx.ml
// 4: they accept an ml-5 import but lack the TreeEnsemble kernel).
func TestOnnxRuntimeTable(t *testing.T) {
	want := map[string][3]int{ // opset, ml, IR
		"onnxruntime-1.13": {17, 3, 8}, "onnxruntime-1.14": {18, 3, 8}, "onnxruntime-1.15": {19, 3, 8},
		"onnxruntime-1.16": {19, 3, 9}, "onnxruntime-1.17": {20, 4, 9}, "onnxruntime-1.18": {21, 4, 10},
		"onnxruntime-1.19": {21, 4, 10}, "onnxruntime-1.20": {21, 4, 10}, "onnxruntime-1.21": {22, 5, 10},
		"onnxruntime-1.22": {22, 5, 10}, "onnxruntime-1.23": {23, 5, 11}, "onnxruntime-1.24": {25, 5, 13},
		"onnxruntime-1.25": {26, 5, 13}, "onnxruntime-1.26": {26, 5, 13}, "onnxruntime-1.27": {26, 5, 13},
		"onnxruntime-1.29": {26, 5, 13}, "onnxruntime-1.30": {26, 5, 13},
	}
	for name, w := range want {
		p, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxOpset != w[0] || p.MLMaxOpset != w[1] || int(p.MaxIRVersion) != w[2] {
			t.Errorf("%s: opset %d ml %d IR %d, want %v", name, p.MaxOpset, p.MLMaxOpset, p.MaxIRVersion, w)
		}
		if len(p.Source) == 0 || !strings.HasPrefix(p.Source[0].URL, "https://") {
			t.Errorf("%s cites no source URL", name)
		}
	}
}

func TestAllSortedAndComplete(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i, p := range all {
		names[p.Name] = true
		if i > 0 && !lessName(all[i-1].Name, p.Name) {
			t.Errorf("not sorted: %s before %s", all[i-1].Name, p.Name)
		}
	}
	for v := 17; v <= 30; v++ {
		if !names["onnxruntime-1."+itoa(v)] {
			t.Errorf("missing onnxruntime-1.%d", v)
		}
	}
	for n := 7; n <= onnxspec.MaxOpset(""); n++ {
		if !names["onnx-opset"+itoa(n)] {
			t.Errorf("missing onnx-opset%d", n)
		}
	}
	if got := len(all); got != 18+4+(onnxspec.MaxOpset("")-6) {
		t.Errorf("%d profiles, want %d", got, 18+4+(onnxspec.MaxOpset("")-6))
	}
	// Callers get their own copies.
	all[0].MaxOpset = 99
	again, _ := All()
	if again[0].MaxOpset == 99 {
		t.Error("All returns shared profiles")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestGenericProfiles(t *testing.T) {
	for _, c := range []struct {
		n  int
		ir int64
		ml int
	}{{7, 3, 1}, {9, 4, 1}, {13, 7, 2}, {17, 8, 3}, {20, 9, 4}, {21, 10, 5}, {23, 11, 5}, {24, 12, 5}, {25, 13, 5}} {
		p, err := Get("onnx-opset" + itoa(c.n))
		if err != nil {
			t.Fatal(err)
		}
		if p.MinOpset != c.n || p.MaxOpset != c.n || p.MaxIRVersion != c.ir || p.MLMaxOpset != c.ml {
			t.Errorf("onnx-opset%d: %d..%d IR %d ml %d, want IR %d ml %d", c.n, p.MinOpset, p.MaxOpset, p.MaxIRVersion, p.MLMaxOpset, c.ir, c.ml)
		}
		if ok, _ := p.Supports("", "Gelu", 20); !ok {
			t.Errorf("onnx-opset%d does not support every op", c.n)
		}
	}
}

func TestSupportsRanges(t *testing.T) {
	wg, err := Get("onnxruntime-web-webgpu")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		op    string
		since int
		want  bool
	}{{"Add", 14, true}, {"Add", 13, true}, {"Add", 6, false}, {"LayerNormalization", 17, true}, {"Split", 1, true}, {"Split", 18, true}, {"Gelu", 20, false}, {"Erf", 13, true}}
	for _, c := range cases {
		if got, why := wg.Supports("", c.op, c.since); got != c.want {
			t.Errorf("webgpu Supports(%s-%d) = %v (%s), want %v", c.op, c.since, got, why, c.want)
		}
	}
	if ok, why := wg.Supports("ai.onnx", "Add", 6); ok || !strings.Contains(why, "7-12,13,14+") {
		t.Errorf("reason %q does not give the supported versions", why)
	}
	trt, err := Get("tensorrt-10")
	if err != nil {
		t.Fatal(err)
	}
	if trt.MinOpset != 9 || trt.MaxOpset != 24 {
		t.Errorf("tensorrt-10 opsets %d..%d, want 9..24", trt.MinOpset, trt.MaxOpset)
	}
	if ok, why := trt.Supports("ai.onnx.ml", "TreeEnsemble", 5); ok || !strings.Contains(why, "ai.onnx.ml") {
		t.Errorf("tensorrt-10 ai.onnx.ml: %v %q", ok, why)
	}
	if ok, _ := trt.Supports("", "Unique", 11); ok {
		t.Error("tensorrt-10 claims Unique")
	}
	if !trt.TypeUnsupported("string") || trt.TypeUnsupported("float") {
		t.Error("tensorrt-10 type restrictions wrong")
	}
	ov, err := Get("openvino-2025")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := ov.Supports("", "Resize", 19); !ok {
		t.Error("openvino-2025 lacks Resize-19")
	}
	if ok, _ := ov.Supports("", "Det", 22); ok {
		t.Error("openvino-2025 claims Det")
	}
}

func TestParseRanges(t *testing.T) {
	rs, err := ParseRanges("1,2-10, 13+")
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.String(); got != "1,2-10,13+" {
		t.Errorf("String = %q", got)
	}
	for v, want := range map[int]bool{1: true, 5: true, 11: false, 12: false, 13: true, 40: true} {
		if rs.Contains(v) != want {
			t.Errorf("Contains(%d) != %v", v, want)
		}
	}
	for _, bad := range []string{"", "x", "10-2", "0+"} {
		if _, err := ParseRanges(bad); err == nil {
			t.Errorf("ParseRanges(%q): no error", bad)
		}
	}
}

// Every documented restriction is decided by rules; only those no rule can
// decide from a model are manual (warnings to check by hand): OpenVINO's
// sequence patterns and TensorRT's Loop shapes.
func TestRestrictionsHaveChecks(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var manual []string
	restricted := 0
	for _, p := range all {
		for _, s := range p.Ops {
			for op := range s.Restrictions {
				restricted++
				rules := s.Checks[op]
				if len(rules) == 0 {
					t.Errorf("%s %s: restriction without checks", p.Name, op)
				}
				for _, r := range rules {
					if r.Rule == RuleManual {
						manual = append(manual, p.Name+" "+op)
					}
				}
			}
		}
	}
	sort.Strings(manual)
	want := []string{"openvino-2025 ConcatFromSequence", "openvino-2025 SequenceAt", "openvino-2025 SequenceConstruct", "openvino-2025 SequenceEmpty",
		"openvino-2025 SequenceErase", "openvino-2025 SequenceInsert", "openvino-2025 SequenceLength", "tensorrt-10 Loop"}
	if strings.Join(manual, ",") != strings.Join(want, ",") {
		t.Errorf("manual restrictions %q, want %q", manual, want)
	}
	if restricted < 50 {
		t.Errorf("%d restrictions, want the 50+ of the data files", restricted)
	}

	p, err := Get("tensorrt-10")
	if err != nil {
		t.Fatal(err)
	}
	delete(p.Ops["ai.onnx"].Checks, "TopK")
	if err := p.validate(); err == nil || !strings.Contains(err.Error(), "TopK") {
		t.Errorf("a restriction without checks: validate = %v", err)
	}
	p.Ops["ai.onnx"].Checks["TopK"] = []Rule{{Rule: "sorted", Says: "x"}}
	if err := p.validate(); err == nil {
		t.Error("an unknown rule kind passes validate")
	}
}

// A result for an ONNX Runtime target (the web builds share its core) runs
// in the onnxruntime runtime; a generic opset target runs in none; the
// default target is ONNX Runtime's.
func TestProfileRuntime(t *testing.T) {
	for name, want := range map[string]string{Default: "onnxruntime", "onnxruntime-1.13": "onnxruntime", "onnxruntime-web-wasm": "onnxruntime", "onnx-opset17": "", "tensorrt-10": ""} {
		p, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Runtime != want {
			t.Errorf("%s: runtime %q, want %q", name, p.Runtime, want)
		}
	}
}
