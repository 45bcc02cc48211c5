package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
)

// session is one plugin process kept for a series of calls: started by
// startSession, it serves every do until close (or ctx, or the host's call
// timeout, which bounds the whole session). Failures are classified as for
// a single call (*PluginError of the kind that ended the process).
type session struct {
	reqs   chan sessionReq
	done   chan struct{}
	err    error // how the plugin call ended, once done
	mu     sync.Mutex
	closed bool
}

type sessionReq struct {
	fn    func(ctx context.Context) error
	reply chan error
}

// startSession starts plugin p and runs open against it; the process then
// serves the calls of do.
func (h *Host) startSession(ctx context.Context, p PluginInfo, op, input string, open func(ctx context.Context, cp plugin.ClientProtocol) error) (*session, error) {
	s := &session{reqs: make(chan sessionReq), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		_, err := call(ctx, h.opts, &p, op, input, h.opts.CallTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
			if err := open(ctx, cp); err != nil {
				return err
			}
			ready <- nil
			for r := range s.reqs {
				err := r.fn(ctx)
				r.reply <- err
				if err != nil {
					return err
				}
			}
			return nil
		})
		s.err = err
		close(s.done)
		select {
		case ready <- err:
		default:
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return s, nil
}

// do runs fn in the session's process (one call at a time). When fn fails
// the process ends, and the error is the classified one of the call when
// it comes in time.
func (s *session) do(ctx context.Context, fn func(ctx context.Context) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the plugin session is closed")
	}
	r := sessionReq{fn: fn, reply: make(chan error, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return s.ended()
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	select {
	case err = <-r.reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err == nil {
		return nil
	}
	select {
	case <-s.done:
		if s.err != nil {
			return s.err
		}
	case <-time.After(exitWait):
	}
	return err
}

// ended is the error of a session whose process ended before a call.
func (s *session) ended() error {
	if s.err != nil {
		return s.err
	}
	return fmt.Errorf("the plugin process has ended")
}

// close ends the process.
func (s *session) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.reqs)
	}
	s.mu.Unlock()
	<-s.done
}
