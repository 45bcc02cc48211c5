package tfjs

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// RuntimeName is the name users pick the runtime by (`--runtime tfjs`);
// importers/tfjs names it as its formats' reference runtime.
const RuntimeName = "tfjs"

// PluginName is the name of the built-in plugin that serves the runtime
// (`onnxconv __plugin serve tfjs-runtime`); it differs from the tfjs
// importer plugin's name.
const PluginName = "tfjs-runtime"

// Runtime returns the runtime served by the plugin. Node and TF.js are
// looked for (Find with o) when the runtime is described and again on
// every run. The runtime's Version is the installed TF.js version
// ("unknown" when missing: every run then fails with the *MissingError).
func Runtime(o FindOptions) sdk.Runtime {
	ver := "unknown"
	if env, err := Find(o); err == nil {
		ver = env.Version
	}
	return sdk.Runtime{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("TensorFlow.js (npm %s %s, pure JavaScript CPU backend) under Node: runs TF.js model.json files "+
			"(layers models by predict, graph models by execute or executeAsync) and Keras .keras/.h5/JSON+weights files "+
			"(exported in memory to a TF.js layers model); install: %s",
			Package, PackageVersion, InstallCommand),
		Run: func(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
			env, err := Find(o)
			if err != nil {
				return nil, err
			}
			res, err := Run(ctx, env, modelPath, inputs)
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
