//go:build cgo && libtorch

// Command onnxconv-plugin-libtorch is an onnxconv plugin that serves the
// "libtorch" runtime: it runs TorchScript archives with libtorch (through
// runtimes/libtorch's C++ shim), the reference runtime of the torchscript
// format, so that `onnxconv convert model.pt model.onnx` verifies the
// result against the archive as torch itself computes it.
//
// It needs cgo and Debian's libtorch-dev, so it is a separate executable
// built with the tag libtorch:
//
//	apt-get install libtorch-dev
//	go build -tags libtorch -o ~/.config/onnxconv/plugins/onnxconv-plugin-libtorch ./cmd/onnxconv-plugin-libtorch
//
// (or into a folder of $ONNXCONV_PLUGIN_PATH). Run options
// (plugins.RunOptions.Options, which the torchscript importer records in
// the converted model for verification): "method": the method called
// (default forward); "call": how it is called (PARAM=@K for input K,
// PARAM=VALUE for a bound number, by keyword; default: the inputs in
// order); "state": module attributes whose values after the call follow
// the outputs; protocol.OptionCapture: the submodule calls whose results
// are returned instead of the method's ("PATH:K" keys,
// libtorch.RunCapture), for the error map. A 0-d input feeds an int, float
// or bool parameter as a number.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/runtimes/libtorch"
)

const version = "0.1.0"

func main() {
	sdk.ServeRuntime(sdk.Runtime{
		Name:        libtorch.RuntimeName,
		Version:     libtorch.Version(),
		Description: fmt.Sprintf("libtorch %s (torch::jit::load, CPU) via onnxconv-plugin-libtorch %s", libtorch.Version(), version),
		Run:         run,
	})
}

func run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	ro := sdk.RunOptionsFrom(ctx)
	method, call, state := "forward", "", ""
	var capture []string
	for k, v := range ro.Options {
		switch k {
		case fts.RunMethod:
			method = v
		case fts.RunCall:
			call = v
		case fts.RunState:
			state = v
		case protocol.OptionCapture:
			if err := json.Unmarshal([]byte(v), &capture); err != nil {
				return nil, fmt.Errorf("%s: option %s: %w", libtorch.RuntimeName, k, err)
			}
		default:
			return nil, fmt.Errorf("%s: unknown option %q (known: method, call, state, %s)", libtorch.RuntimeName, k, protocol.OptionCapture)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ins := make([]*canonical.Tensor, len(inputs))
	for i, tp := range inputs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("%s: input %d: %w", libtorch.RuntimeName, i, err)
		}
		ins[i] = t
	}
	c, err := parseCall(call, ins)
	if err != nil {
		return nil, fmt.Errorf("%s: option call=%q: %w", libtorch.RuntimeName, call, err)
	}
	if state != "" {
		c.State = strings.Split(state, ",")
	}
	c.Threads = ro.Threads
	// Loaded for each run: a module that keeps state inside itself starts
	// every sample from the state it was saved with.
	m, err := libtorch.Load(modelPath)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var outs []*canonical.Tensor
	if capture != nil {
		outs, err = m.RunCapture(method, c, capture)
	} else {
		outs, err = m.Run(method, c)
	}
	if err != nil {
		return nil, err
	}
	res := make([]*onnxpb.TensorProto, len(outs))
	for i, t := range outs {
		if res[i], err = canonical.TensorToProto(t); err != nil {
			return nil, fmt.Errorf("%s: output %d: %w", libtorch.RuntimeName, i, err)
		}
	}
	return res, nil
}

// parseCall reads the call option (fts.RunCall).
func parseCall(call string, ins []*canonical.Tensor) (libtorch.Call, error) {
	if call == "" {
		return libtorch.Call{Inputs: ins}, nil
	}
	var c libtorch.Call
	for _, kv := range strings.Split(call, ",") {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return c, fmt.Errorf("%q is not PARAM=@K or PARAM=VALUE", kv)
		}
		var t *canonical.Tensor
		switch {
		case strings.HasPrefix(v, "@"):
			k, err := strconv.Atoi(v[1:])
			if err != nil || k < 0 || k >= len(ins) {
				return c, fmt.Errorf("%s: no input %s (%d given)", name, v, len(ins))
			}
			t = ins[k]
		case v == "true" || v == "false":
			b := byte(0)
			if v == "true" {
				b = 1
			}
			t = canonical.NewTensor(name, canonical.Bool, nil, []byte{b})
		default:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				t = canonical.Int64Tensor(name, nil, []int64{n})
			} else if f, err := strconv.ParseFloat(v, 64); err == nil {
				t = canonical.Float64Tensor(name, nil, []float64{f})
			} else {
				return c, fmt.Errorf("%s: %q is not a number or bool", name, v)
			}
		}
		c.Inputs, c.Names = append(c.Inputs, t), append(c.Names, name)
	}
	return c, nil
}
