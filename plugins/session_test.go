//go:build unix

package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A request of a kept process is bounded by the call timeout on its own,
// and by its caller's context: an import that hangs is killed and
// classified as for a single call (time limit, or canceled), and no
// process is left.
func TestSessionRequestLimits(t *testing.T) {
	dir := pluginDir(t, "hang")
	opts := testOptions(t, dir)
	opts.CallTimeout, opts.StartTimeout = 3*time.Second, 4*time.Second
	h := newHost(t, opts)
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "input.hang"), "Relu\n")
	out := filepath.Join(work, "out.onnx")

	start := time.Now()
	_, sess, _, err := h.importKeep(context.Background(), "hang", in, out, map[string]string{})
	elapsed := time.Since(start)
	var pe *PluginError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTimeout) || pe.Op != "import" || !strings.Contains(err.Error(), "did not finish within 3s") {
		t.Errorf("hanging import: %v, want a *PluginError of op import, kind ErrTimeout, within 3s", err)
	}
	if sess != nil {
		t.Error("a session is left after a failed import")
	}
	if limit := opts.CallTimeout + 4*time.Second; elapsed > limit {
		t.Errorf("took %v, want under %v", elapsed, limit)
	}
	if pe != nil {
		assertGone(t, pe.PID)
	}
	assertNoChildren(t)

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("the user pressed Ctrl-C")) })
	_, _, _, err = h.importKeep(ctx, "hang", in, out, map[string]string{})
	if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "Ctrl-C") {
		t.Errorf("canceled import: %v, want a *PluginError of kind context.Canceled naming the cause", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output %s exists after a failure (stat: %v)", out, err)
	}
	assertNoChildren(t)
}
