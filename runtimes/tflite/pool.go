package tflite

import (
	"context"
	"sync"

	onnxpb "github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// Pool keeps the node processes of finished sessions, one idle process
// per interpreter at most, and lends them to the sessions it opens: a
// session of a pool loads its model into a process that served another
// model (the script replaces the model; the WebAssembly module is
// compiled once per process), which saves starting node and compiling
// the interpreter for every model. A model with state (variable tensors,
// resource variables) always gets a fresh process. Processes start under the pool's
// context, so that they outlive the calls that started them. A process
// that failed a call (other than refusing inputs or failing a run) is
// never lent again. Close ends the idle processes.
type Pool struct {
	env  Env
	ctx  context.Context
	mu   sync.Mutex
	idle map[Interpreter]*node.Conn
}

// NewPool returns an empty pool whose processes live until ctx ends or
// Close.
func NewPool(ctx context.Context, env Env) *Pool {
	return &Pool{env: env, ctx: ctx, idle: map[Interpreter]*node.Conn{}}
}

// OpenWith is the package's OpenWith with the pool's processes.
func (p *Pool) OpenWith(ctx context.Context, modelPath string, o Options) (*Session, error) {
	model, err := readModel(modelPath)
	if err != nil {
		return nil, err
	}
	return openPooled(ctx, p.env, modelPath, model, o, p)
}

// Run is the package's Run with the pool's processes.
func (p *Pool) Run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto, threads int) (*Result, error) {
	s, err := p.OpenWith(ctx, modelPath, Options{Threads: threads})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, inputs)
}

// Close ends the idle processes.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for in, c := range p.idle {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
		delete(p.idle, in)
	}
	return first
}

// take returns an idle process of interpreter in, or nil (also for a nil
// pool).
func (p *Pool) take(in Interpreter) *node.Conn {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.idle[in]
	delete(p.idle, in)
	return c
}

// put keeps c as the idle process of interpreter in; false when one is
// kept already (the caller closes c).
func (p *Pool) put(in Interpreter, c *node.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.idle[in]; ok || p.ctx.Err() != nil {
		return false
	}
	p.idle[in] = c
	return true
}

// startCtx is the context a new process starts under: the pool's, else
// the call's.
func (p *Pool) startCtx(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return p.ctx
}
