package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormatsTFLiteOps(t *testing.T) {
	code, stdout, stderr := runCmd("formats", "tflite", "--ops", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		Builtin string   `json:"builtin"`
		Import  string   `json:"import"`
		Export  []string `json:"export"`
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	byName := map[string]int{}
	for i, r := range rows {
		byName[r.Builtin] = i
	}
	// The schema's builtins, each once; ELU both ways (it had drifted).
	if len(rows) < 200 || len(byName) != len(rows) {
		t.Fatalf("%d rows, %d distinct builtins", len(rows), len(byName))
	}
	elu := rows[byName["ELU"]]
	if elu.Import != "Elu" || len(elu.Export) != 1 || elu.Export[0] != "Elu" {
		t.Errorf("ELU row %+v, want Elu both ways", elu)
	}
	code, stdout, _ = runCmd("formats", "tflite", "--ops")
	if code != 0 || !strings.Contains(stdout, "CONV_2D") || !strings.Contains(stdout, "builtins:") {
		t.Errorf("table: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCmd("formats", "keras", "--ops"); code != 2 {
		t.Errorf("keras --ops: exit %d %s", code, stderr)
	}
}
