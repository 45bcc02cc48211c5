package onnxspec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSummaries(t *testing.T) {
	rows, err := Summaries("ai.onnx.ml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 19 {
		t.Fatalf("ai.onnx.ml has %d rows, want 19", len(rows))
	}
	want := OpSummary{Domain: "ai.onnx.ml", Name: "TreeEnsembleClassifier", Latest: 5, Versions: []int{1, 3, 5}, Deprecated: true}
	if got := rows[16]; !reflect.DeepEqual(got, want) {
		t.Errorf("row 16 = %+v, want %+v", got, want)
	}
	all, err := Summaries("")
	if err != nil {
		t.Fatal(err)
	}
	// 203 operators in the ai.onnx summary tables (operators and functions), 19
	// ai.onnx.ml, 1 preview, 4 training.
	counts := map[string]int{}
	for _, r := range all {
		counts[r.Domain]++
	}
	if wantCounts := map[string]int{"ai.onnx": 203, DomainML: 19, DomainPreview: 1, DomainTraining: 4}; !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("operators per domain = %v, want %v", counts, wantCounts)
	}
	if _, err := Summaries("com.example"); err == nil {
		t.Error("Summaries(com.example) should fail")
	}

	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, rows[7:9]); err != nil {
		t.Fatal(err)
	}
	wantTable := "DOMAIN      OP                LATEST  VERSIONS\n" +
		"ai.onnx.ml  LabelEncoder      4       1, 2, 4\n" +
		"ai.onnx.ml  LinearClassifier  1       1\n"
	if buf.String() != wantTable {
		t.Errorf("table =\n%s\nwant\n%s", buf.String(), wantTable)
	}
}

func TestHistory(t *testing.T) {
	h, err := History("", "softmax")
	if err != nil {
		t.Fatal(err)
	}
	if h.Domain != "ai.onnx" || h.Name != "Softmax" || len(h.Versions) != 3 {
		t.Fatalf("history = %+v", h)
	}
	if h.Versions[0].InForceUntil != 10 || h.Versions[1].InForceUntil != 12 || h.Versions[2].InForceUntil != 28 {
		t.Errorf("in force until = %d, %d, %d", h.Versions[0].InForceUntil, h.Versions[1].InForceUntil, h.Versions[2].InForceUntil)
	}
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	want := `ai.onnx.Softmax: 3 version(s): 1, 11, 13

Softmax-1 (opsets 1-10)
  The operator computes the softmax (normalized exponential) values for each layer in the batch of the given input. The input is a 2-D tensor (Tensor<float>) of size (batch_size x input_feature_dimensions).
  inputs (1):
    input: T
  outputs (1):
    output: T
  attributes:
    axis: INT, default 1
  type constraints:
    T: tensor(float16), tensor(float), tensor(double)

Softmax-11 (opsets 11-12)
  changes since 1:
    (none in the signature; semantics or documentation only)

Softmax-13 (opsets 13-28)
  changes since 11:
    - input 0 input: unspecified -> differentiable
    - output 0 output: unspecified -> differentiable
    - attribute axis: default 1 -> -1
    - type constraint T: added tensor(bfloat16)

latest signature (Softmax-13):
  The operator computes the normalized exponential values for the given input:
  inputs (1):
    input: T (differentiable)
  outputs (1):
    output: T (differentiable)
  attributes:
    axis: INT, default -1
  type constraints:
    T: tensor(float16), tensor(float), tensor(double), tensor(bfloat16)
`
	if buf.String() != want {
		t.Errorf("history text =\n%s\nwant\n%s", buf.String(), want)
	}

	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Domain   string
		Versions []struct {
			Schema struct {
				SinceVersion int `json:"since_version"`
				Attributes   []struct {
					Name, Type, Default string
				}
				Inputs []struct {
					Option, Differentiability string
				}
			}
			Changes []string
		}
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	v := back.Versions[2]
	if back.Domain != "ai.onnx" || v.Schema.SinceVersion != 13 || v.Schema.Attributes[0].Type != "INT" || v.Schema.Attributes[0].Default != "-1" ||
		v.Schema.Inputs[0].Option != "single" || v.Schema.Inputs[0].Differentiability != "differentiable" || len(v.Changes) != 4 {
		t.Errorf("JSON round trip = %+v", v)
	}
	if !strings.Contains(string(js), `"changes":[]`) {
		t.Error("first version should have an empty changes list in JSON")
	}

	if _, err := History("", "NoSuchOp"); err == nil {
		t.Error("History(NoSuchOp) should fail")
	}
	h, err = History("ai.onnx.ml", "TreeEnsembleRegressor")
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "TreeEnsembleRegressor-5 (opset 5, deprecated)\n  changes since 3:\n    - deprecated: the operator is removed from this opset on\n") {
		t.Errorf("TreeEnsembleRegressor history:\n%s", buf.String())
	}
}
