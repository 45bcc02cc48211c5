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
// (plugins.RunOptions.Options): "method": the method called (default
// forward); protocol.OptionCapture: the submodule calls whose results are
// returned instead of the method's ("PATH:K" keys, libtorch.RunCapture),
// for the error map. Inputs are passed in order; a 0-d input feeds an int,
// float or bool parameter as a number.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
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
	method := "forward"
	var capture []string
	for k, v := range ro.Options {
		switch k {
		case "method":
			method = v
		case protocol.OptionCapture:
			if err := json.Unmarshal([]byte(v), &capture); err != nil {
				return nil, fmt.Errorf("%s: option %s: %w", libtorch.RuntimeName, k, err)
			}
		default:
			return nil, fmt.Errorf("%s: unknown option %q (known: method, %s)", libtorch.RuntimeName, k, protocol.OptionCapture)
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
	m, err := libtorch.Load(modelPath)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var outs []*canonical.Tensor
	if capture != nil {
		outs, err = m.RunCapture(method, ins, capture, ro.Threads)
	} else {
		outs, err = m.Run(method, ins, ro.Threads)
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
