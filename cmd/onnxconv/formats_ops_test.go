package main

import (
	"encoding/json"
	"testing"
)

// `formats tfjs --ops --json` lists the 248 ops of TF.js 4.22's op list,
// each once, with mapped counted right; an unknown format is bad input.
func TestFormatsOps(t *testing.T) {
	code, stdout, stderr := runCmd("formats", "tfjs", "--ops", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res formatOps
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	mapped := 0
	for _, o := range res.Ops {
		if seen[o.Op] {
			t.Errorf("%s listed twice", o.Op)
		}
		seen[o.Op] = true
		if o.Mapped {
			mapped++
		}
	}
	if res.Total != 248 || len(res.Ops) != 248 || res.Mapped != mapped || !seen["AddN"] || !seen["TensorListReserve"] {
		t.Errorf("total %d, %d ops, mapped %d (counted %d)", res.Total, len(res.Ops), res.Mapped, mapped)
	}
	t.Logf("%d of %d mapped", res.Mapped, res.Total)
	if code, _, _ := runCmd("formats", "caffe", "--ops"); code != exitBadInput {
		t.Errorf("formats caffe --ops: exit %d, want %d", code, exitBadInput)
	}
}
