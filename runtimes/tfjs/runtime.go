package tfjs

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// RuntimeName is the name users pick the runtime by (`--runtime tfjs`);
// importers/tfjs names it as its formats' reference runtime.
const RuntimeName = "tfjs"

// New returns the runtime for runtimes/builtin. Node and TF.js are looked
// for (Find with o) when the runtime is described and on every Open. Its
// Version is the installed TF.js version ("unknown" when missing: Open
// then fails with the *MissingError).
func New(o FindOptions) runtimes.Runtime { return runtime{o: o} }

type runtime struct{ o FindOptions }

func (r runtime) Info() runtimes.Info {
	ver := "unknown"
	if env, err := Find(r.o); err == nil {
		ver = env.Version
	}
	return runtimes.Info{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("TensorFlow.js (npm %s %s on its WebAssembly backend, %s, SIMD; the CPU backend only for the ops WASM lacks, named) under Node: runs TF.js model.json files "+
			"(layers models by predict, graph models by execute or executeAsync), TensorFlow GraphDef/SavedModel/checkpoint files "+
			"(their frozen graph written as a TF.js graph model) and Keras .keras/.h5/JSON+weights files "+
			"(exported in memory to a TF.js layers model; a GRU with reset_after=true, which TF.js's GRUCell refuses, "+
			"is computed by the runner's reset-after GRU made of TF.js ops); install: %s",
			Package, PackageVersion, WASMPackage, InstallCommand),
		Where: "in a node process",
	}
}

// ModelNote says when the model at path is not a TF.js model run as it is
// (runtimes.ModelNoter): a TensorFlow model runs as the TF.js graph model
// written from its frozen graph; a Keras GRU with reset_after=true runs on
// the runner's reset-after GRU in TF.js ops.
func (r runtime) ModelNote(path string) string {
	if !looksLikeTFJS(path) && !looksLikeKeras(path) && looksLikeTensorFlow(path) {
		return "the TensorFlow graph, frozen, run as a TF.js graph model"
	}
	return modelNote(path)
}

// Check tells whether Node and the npm package are installed.
func (r runtime) Check() error {
	_, err := Find(r.o)
	return node.NotInstalled(RuntimeName, err)
}

func (r runtime) Open(ctx context.Context, modelPath string, o runtimes.OpenOptions) (runtimes.Session, error) {
	env, err := Find(r.o)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, env, modelPath, graphChoice{inputs: o.InputNames, outputs: o.OutputNames, options: o.Metadata[tensorflow.OptionsKey]})
	if err != nil {
		return nil, err
	}
	return runtimes.ProtoSession("tfjs runtime: "+modelPath, s, o.InputNames), nil
}
