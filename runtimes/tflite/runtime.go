package tflite

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// RuntimeName is the name users pick the runtime by (`--runtime tflite`).
const RuntimeName = "tflite"

// New returns the runtime for runtimes/builtin: each Open starts one node
// process that loads the model once and serves every run, in LiteRT.js
// first and tfjs-tflite when LiteRT.js cannot or will not run the model
// (Route, Session.Refused); the session says which computed it
// (runtimes.SessionNoter). Node and the npm packages are looked for (Find
// with o) when the runtime is described and on every Open, so that
// installing them needs no restart. Its Version names both builds as
// installed ("unknown" when tfjs-tflite is missing: Open then fails with
// the *MissingError).
func New(o FindOptions) runtimes.Runtime { return runtime{o: o} }

type runtime struct{ o FindOptions }

func (r runtime) Info() runtimes.Info {
	ver := "unknown"
	if env, err := Find(r.o); err == nil {
		ver = env.Versions()
	}
	return runtimes.Info{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("Google's TFLite interpreter compiled to WebAssembly, run under Node: npm %s %s (LiteRT.js) first, "+
			"%s %s for what LiteRT.js does not run (inputs or outputs other than float32, int32, uint8: int8, int16, int64, bool, float16; "+
			"variable tensors: LSTM, SVDF) or refuses; inputs and outputs by TFLite tensor name, NHWC; install: %s",
			LiteRTPackage, LiteRTPackageVersion, Package, PackageVersion, InstallCommand),
		Where: "in a node process",
	}
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
	s, err := Open(ctx, env, modelPath, o.Threads)
	if err != nil {
		return nil, err
	}
	return runtimes.ProtoSession("tflite runtime: "+modelPath, s, o.InputNames), nil
}
