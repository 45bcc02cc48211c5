package tflite

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// RuntimeName is the name users pick the runtime by (`--runtime tflite`).
const RuntimeName = "tflite"

// PluginName is the name of the built-in plugin that serves the runtime
// (`onnxconv __plugin serve tflite-runtime`).
const PluginName = "tflite-runtime"

// Runtime returns the runtime served by the plugin. Node and the npm
// package are looked for (Find with o) when the runtime is described and
// again on every run, so that installing them needs no restart. The
// runtime's Version is the installed tfjs-tflite version ("unknown" when
// it is missing: every run then fails with the *MissingError).
func Runtime(o FindOptions) sdk.Runtime {
	ver := "unknown"
	if env, err := Find(o); err == nil {
		ver = env.Version
	}
	return sdk.Runtime{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("Google's TFLite interpreter compiled to WebAssembly, from npm %s %s, run under Node "+
			"(float, int8, int16, int64, bool, LSTM, SVDF; inputs and outputs by TFLite tensor name, NHWC; "+
			"%s %s, LiteRT.js, is the second build, a cross-check on float models); install: %s",
			Package, PackageVersion, LiteRTPackage, LiteRTPackageVersion, InstallCommand),
		Run: func(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
			env, err := Find(o)
			if err != nil {
				return nil, err
			}
			res, err := Run(ctx, env, modelPath, inputs, sdk.RunOptionsFrom(ctx).Threads)
			if err != nil {
				return nil, err
			}
			return res.Outputs, nil
		},
	}
}

// Plugin returns the plugin that serves Runtime(o), for the onnxconv
// binary's built-in plugins (PluginName).
func Plugin(o FindOptions) sdk.Plugin {
	rt := Runtime(o)
	return sdk.Plugin{Runtime: &rt}
}
