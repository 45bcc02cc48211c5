package sdk

import (
	"context"
	"fmt"
	"sync"
)

type warningsKey struct{}

type warnings struct {
	mu   sync.Mutex
	list []string
}

// Warn records a warning for the current call; the host shows it to the
// user. ctx is the context passed to Import or Export. It is safe for
// concurrent use; outside a call it does nothing.
func Warn(ctx context.Context, format string, args ...any) {
	w, ok := ctx.Value(warningsKey{}).(*warnings)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, fmt.Sprintf(format, args...))
}

func withWarnings(ctx context.Context) (context.Context, *warnings) {
	w := &warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}
