package tflite

import (
	"context"
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
)

// RunNamed computes the tensors of the main subgraph named (TFLite tensor
// names, each naming one tensor) instead of the model's outputs, in that
// order: the intermediate values of the source, for the error map
// (runtimes.NamedRunner). Neither interpreter hands out a tensor that is
// not a model output (the arena reuses their memory), so a copy of the
// model with those tensors added as outputs (formats/tflite WithOutputs)
// is loaded in a node process of its own for the call, in the
// interpreter serving the session when it takes the copy (an int8
// intermediate goes to tfjs-tflite, as Route says), and run on inputs.
func (s *Session) RunNamed(ctx context.Context, inputs []*onnxpb.TensorProto, names []string) ([]*onnxpb.TensorProto, error) {
	if len(names) == 0 {
		return nil, nil
	}
	idx := make([]int32, len(names))
	for i, n := range names {
		k, err := formats.TensorIndex(s.bytes, n)
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: capture: %w", s.model, err)
		}
		idx[i] = k
	}
	model, err := formats.WithOutputs(s.bytes, idx)
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: %s: capture: %w", s.model, err)
	}
	order, _ := Route(s.env, model)
	if s.cur == TFJSTFLite && slices.Contains(order, TFJSTFLite) {
		// LiteRT.js refused the model itself: it would refuse the copy.
		order = []Interpreter{TFJSTFLite}
	}
	cp, err := openBytes(ctx, s.env, s.model+" (a copy with intermediate tensors as outputs)", model, Options{Threads: s.threads, Interpreters: order})
	if err != nil {
		return nil, err
	}
	defer cp.Close()
	res, err := cp.Run(ctx, inputs)
	if err != nil {
		return nil, err
	}
	// The copy's outputs: the model's own, then the tensors added, in
	// the subgraph's order.
	outIdx, err := formats.OutputIndexes(model)
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: %s: capture: %w", s.model, err)
	}
	if len(res.Outputs) != len(outIdx) {
		return nil, &RunError{Model: s.model, Kind: "protocol", Detail: fmt.Sprintf("capture: %d outputs computed, the copy has %d", len(res.Outputs), len(outIdx))}
	}
	out := make([]*onnxpb.TensorProto, len(names))
	for i, k := range idx {
		out[i] = res.Outputs[slices.Index(outIdx, k)]
	}
	return out, nil
}
