package batch

import "testing"

func TestTextLines(t *testing.T) {
	e := Event{Job: &Job{ID: "m.onnx opset=13"}, Record: &Record{Status: StatusPass, Cached: true}, Done: 2, Total: 5}
	if got := e.String(); got != "[2/5] pass m.onnx opset=13 (cached)" {
		t.Errorf("event %q", got)
	}
	e.Resumed = true
	if got := e.String(); got != "[2/5] pass m.onnx opset=13 (done before)" {
		t.Errorf("resumed event %q", got)
	}
	s := &Summary{Shard: Shard{Index: 1, Count: 4}, Total: 10, Assigned: 3, Pass: 2, Fail: 1, Executed: []string{"a", "b"}, Cached: 1, DurationMS: 1234}
	if got, want := s.String(), "batch: shard 1/4: 3 of 10 job(s): 2 pass, 1 fail, 0 error; 2 run, 1 cached, 0 done before (1.2 s)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	tt := Totals{Jobs: 4, Pass: 1, Fail: 1, Error: 1, Missing: 1, Cached: 2}
	if got, want := tt.String(), "batch merge: 4 job(s): 1 pass, 1 fail, 1 error, 1 missing (2 cached)"; got != want {
		t.Errorf("totals %q, want %q", got, want)
	}
}
