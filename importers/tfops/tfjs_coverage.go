package tfops

import "github.com/onnxconv/onnxconv/formats/tensorflow"

// TFJSOp is one op of TF.js's graph-model op list.
type TFJSOp = tensorflow.TFJSOp

// TFJSVersion is the version of @tensorflow/tfjs-converter whose op list
// TFJSOps holds.
const TFJSVersion = tensorflow.TFJSVersion

// TFJSOps lists the ops TF.js's graph-model executor runs
// (formats/tensorflow's list).
func TFJSOps() []TFJSOp { return tensorflow.TFJSOps() }

// OpCoverage is one source op and whether Convert maps it.
type OpCoverage struct {
	Op       string `json:"op"`
	Category string `json:"category"`
	Mapped   bool   `json:"mapped"`
	// Note says why an op is not mapped, when it cannot be.
	Note string `json:"note,omitempty"`
}

// TFJSCoverage lists every op of TF.js's op list (TFJSOps) and whether
// Convert maps it.
func TFJSCoverage() []OpCoverage {
	table := opTable()
	ops := TFJSOps()
	out := make([]OpCoverage, len(ops))
	for i, o := range ops {
		_, ok := table[o.Op]
		out[i] = OpCoverage{Op: o.Op, Category: o.Category, Mapped: ok}
		if !ok {
			out[i].Note = unsupportedReason(o.Op)
		}
	}
	return out
}
