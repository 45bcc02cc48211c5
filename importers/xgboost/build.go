package xgboost

import (
	"github.com/onnxconv/onnxconv/importers/trees"
)

// inputName is the graph input of imported models (importers/trees).
const inputName = trees.InputName

// modeMember is TreeEnsemble's (ai.onnx.ml 5) set-membership node mode,
// which categorical splits use.
const modeMember = 6
