package batch

import (
	"fmt"
	"time"
)

// String is the progress line of the event, as 'onnxconv batch' prints
// it: "[DONE/TOTAL] STATUS JOB", with "(done before)" or "(cached)".
func (e Event) String() string {
	how := ""
	switch {
	case e.Resumed:
		how = " (done before)"
	case e.Record.Cached:
		how = " (cached)"
	}
	return fmt.Sprintf("[%d/%d] %s %s%s", e.Done, e.Total, e.Record.Status, e.Job.ID, how)
}

// String is the one-line summary of a shard's run, as 'onnxconv batch'
// prints it.
func (s *Summary) String() string {
	return fmt.Sprintf("batch: shard %s: %d of %d job(s): %d pass, %d fail, %d error; %d run, %d cached, %d done before (%.1f s)",
		s.Shard, s.Assigned, s.Total, s.Pass, s.Fail, s.Error, len(s.Executed), s.Cached, s.Resumed, s.DurationMS/1000)
}

// String is the one-line summary of merged results, as 'onnxconv batch
// merge' prints it.
func (t Totals) String() string {
	return fmt.Sprintf("batch merge: %d job(s): %d pass, %d fail, %d error, %d missing (%d cached)", t.Jobs, t.Pass, t.Fail, t.Error, t.Missing, t.Cached)
}

// String is the progress line of a step, as 'onnxconv batch' prints it:
// "job I of N (JOB, ELAPSED): LINE".
func (s Step) String() string {
	return fmt.Sprintf("job %d of %d (%s, %s): %s", s.Index, s.Total, s.Job.ID, s.Elapsed.Round(100*time.Millisecond), s.Line)
}
