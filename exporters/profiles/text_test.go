package profiles

import (
	"strings"
	"testing"
)

func TestProfileWriteText(t *testing.T) {
	p := &Profile{
		Name: "rt-1", Description: "a runtime", MinOpset: 7, MaxOpset: 17, MLMinOpset: 1, MLMaxOpset: 3, MaxIRVersion: 8,
		Fallback: true,
		Types:    &Types{Unsupported: []string{"bfloat16"}, Limited: map[string]string{"float16": "Conv only"}},
		Ops: map[string]*OpSet{
			"ai.onnx.ml": {All: true, Except: []string{"Imputer"}},
			"":           {Ops: map[string]Ranges{"Relu": {{From: 6}}, "Add": {{From: 7, To: 12}, {From: 13}}}, Restrictions: map[string]string{"Add": "no broadcast"}},
		},
		Notes:  []string{"n1"},
		Source: []Source{{URL: "https://example.com", Version: "v1", Note: "table"}},
	}
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `name:         rt-1
description:  a runtime
ai.onnx:      opset 7-17
ai.onnx.ml:   1-3
max IR:       8
fallback:     operators it lacks run on a fallback provider (warnings)
types:        unsupported bfloat16
              float16: Conv only
operators  (2):
  Add                          7-12,13+  (no broadcast)
  Relu                         6+
operators ai.onnx.ml: all except Imputer
note: n1
source: https://example.com [v1] - table
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	err := WriteTable(&b, []*Profile{
		{Name: "a", MinOpset: 7, MaxOpset: 9, MaxIRVersion: 4, Description: "first"},
		{Name: "longer-name", MinOpset: 7, MaxOpset: 21, MLMinOpset: 1, MLMaxOpset: 5, MaxIRVersion: 10, Description: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME         OPSET  ML OPSET  MAX IR  DESCRIPTION
a            7-9    -         4       first
longer-name  7-21   1-5       10      second
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Every shipped profile renders.
func TestWriteTextAllProfiles(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, all); err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if err := p.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	}
}
