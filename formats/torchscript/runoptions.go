package torchscript

// Runtime is the reference runtime of TorchScript archives.
const Runtime = "libtorch"

// The run options of the libtorch runtime (plugins.RunOptions.Options;
// cmd/onnxconv-plugin-libtorch reads them), which the torchscript importer
// records in the converted model
// (canonical.RunOptionKey) so that verification calls the archive as it
// is meant to be called.
const (
	// RunMethod names the method called (default forward).
	RunMethod = "method"
	// RunCall says how it is called: PARAM=@K (input K) or
	// PARAM=VALUE (a bound int, float or true/false), comma separated,
	// each by keyword; inputs it does not name (a converted model's lifted
	// state) are not passed. Without it the inputs are passed in order.
	RunCall = "call"
	// RunState lists module attributes (paths, comma separated) whose
	// values after the call follow the method's outputs.
	RunState = "state"
)
