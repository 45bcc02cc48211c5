package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
)

// session is one plugin process kept for a series of requests: started by
// startSession, it serves every do until close. Each request (the opening
// one included) is bounded by the host's call timeout on its own, as a
// single call would be, and by its caller's context; the session as a
// whole is not, so that an import followed by the samples of its source,
// or the many runs of a runtime, each get the time of a call. A request
// that fails ends the process, and its error is classified as for a
// single call (*PluginError of the kind that ended the process, for the
// operation of that request).
type session struct {
	reqs   chan sessionReq
	done   chan struct{}
	err    error // how the plugin call ended, once done
	mu     sync.Mutex
	closed bool
}

type sessionReq struct {
	op    string // "" keeps the session's operation
	ctx   context.Context
	fn    func(ctx context.Context) error
	reply chan error
}

// requestEnded is the error of a session request stopped by its time
// limit (caller nil) or by its caller's context.
type requestEnded struct {
	limit  time.Duration
	caller context.Context
	err    error
}

func (e *requestEnded) Error() string { return e.err.Error() }
func (e *requestEnded) Unwrap() error { return e.err }

// request runs fn within the host's call timeout and ctx (the caller's),
// inside the session's context sctx.
func (h *Host) request(sctx, ctx context.Context, fn func(ctx context.Context) error) error {
	limit := h.opts.CallTimeout
	rctx, cancel := context.WithTimeout(sctx, limit)
	defer cancel()
	stopAfter := context.AfterFunc(ctx, cancel)
	defer stopAfter()
	err := fn(rctx)
	if err == nil {
		return nil
	}
	if d, ok := rctx.Deadline(); ok && rctx.Err() == nil && time.Until(d) < 250*time.Millisecond {
		// The plugin's side can see the deadline gRPC sent along expire
		// a moment before ours fires (see callOp).
		<-rctx.Done()
	}
	switch {
	case sctx.Err() != nil:
		return &requestEnded{caller: sctx, err: err}
	case ctx.Err() != nil:
		return &requestEnded{caller: ctx, err: err}
	case rctx.Err() != nil:
		return &requestEnded{limit: limit, err: err}
	}
	return err
}

// startSession starts plugin p for operation op on input and runs open
// against it (within the call timeout and ctx); the process then serves
// the requests of do. The process ends with close, when a request fails,
// or when ctx ends.
func (h *Host) startSession(ctx context.Context, p PluginInfo, op, input string, open func(ctx context.Context, cp plugin.ClientProtocol) error) (*session, error) {
	s := &session{reqs: make(chan sessionReq), done: make(chan struct{})}
	ready := make(chan error, 1)
	cur := op
	go func() {
		// The session is bounded by each request's limit, not as a
		// whole (timeout 0).
		_, err := callOp(ctx, h.opts, &p, &cur, input, 0, func(sctx context.Context, cp plugin.ClientProtocol) error {
			if err := h.request(sctx, sctx, func(rctx context.Context) error { return open(rctx, cp) }); err != nil {
				return err
			}
			ready <- nil
			for {
				var r sessionReq
				var ok bool
				select {
				case r, ok = <-s.reqs:
				case <-sctx.Done():
					return &requestEnded{caller: sctx, err: sctx.Err()}
				}
				if !ok {
					return nil
				}
				cur = op
				if r.op != "" {
					cur = r.op
				}
				err := h.request(sctx, r.ctx, r.fn)
				r.reply <- err
				if err != nil {
					return err
				}
			}
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

// do runs fn in the session's process (one request at a time), as
// operation op ("" for the session's own). When fn fails the process
// ends, and the error is the classified one of the request when it comes
// in time.
func (s *session) do(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the plugin session is closed")
	}
	r := sessionReq{op: op, ctx: ctx, fn: fn, reply: make(chan error, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return s.ended()
	case <-ctx.Done():
		return ctx.Err()
	}
	// The request ends by itself when ctx does (request), so the reply
	// always comes.
	err := <-r.reply
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
