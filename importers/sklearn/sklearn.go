// Package sklearn imports scikit-learn estimators from their pickle and
// joblib files into ONNX without executing the files.
//
// The file is read by package pickle, an interpreter of the pickle
// opcodes that calls nothing: only the names of the supported estimator
// classes, numpy's array and dtype reconstruction and joblib's array
// wrapper resolve, and then only to inert names; anything else (os.system,
// builtins.eval, an unsupported estimator) is an error naming it. joblib
// files may be uncompressed or compressed with zlib, gzip, bz2, xz, lzma
// or lz4 (each bounded to MaxDecompressed).
//
// The graph input is "X", double [N, n_features_in_]; the graph computes
// in double precision, as scikit-learn does. Outputs follow skl2onnx:
// classifiers give "label" (int64 [N]) and, where the estimator has them,
// "probabilities" (predict_proba, [N, classes]) and "scores"
// (decision_function: [N] for two classes, else [N, classes]); regressors
// and transformers "variable" ([N, targets] or [N, features]); KMeans
// "label" and "scores" (transform, the distances to the centres);
// IsolationForest "label" (-1/1) and "scores" (decision_function). Tree
// models use one ai.onnx.ml TreeEnsemble (opset 5) in double on X rounded
// to float32, as scikit-learn's trees compare (HistGradientBoosting on X
// itself).
//
// The Model also computes itself in Go, from the parsed attributes and
// not from the graph, for source verification (importers.Predictor).
package sklearn

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// Parse reads a pickle or joblib file's bytes into a Model, executing
// nothing.
func Parse(data []byte) (m *Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, &recovered.Error{Pkg: "sklearn", Doing: "while reading", Value: r}
		}
	}()
	stream, c, err := decompress(data)
	if err != nil {
		return nil, fmt.Errorf("sklearn: %w", err)
	}
	var v pickle.Value
	if c == Skops {
		v, err = loadSkops(stream)
	} else {
		v, err = loadPickle(stream)
	}
	if err != nil {
		var re *pickle.RefusedError
		if errors.As(err, &re) && re.Module != "" && inFunctionTransformer(stream, re.Offset) {
			err = &FunctionTransformerError{Func: re.Module + "." + re.Name, Err: err}
		}
		return nil, fmt.Errorf("sklearn: reading the %s: %w", c, err)
	}
	m, err = readModel(v)
	if err != nil {
		return nil, fmt.Errorf("sklearn: %w", err)
	}
	return m, nil
}

// Import converts a pickle or joblib file's bytes to an ONNX model.
func Import(data []byte) (*canonical.Model, error) {
	m, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return m.build()
}

// FunctionTransformerError is a FunctionTransformer whose func (or
// inverse_func) is a Python function: the allow-list refuses its name
// (Err, a *pickle.RefusedError); it is never called.
type FunctionTransformerError struct {
	Func string
	Err  error
}

func (e *FunctionTransformerError) Error() string {
	return fmt.Sprintf("FunctionTransformer(func=%s) is not supported: only the identity FunctionTransformer (func=None) is converted; a Python function has no ONNX form and is never called (%v)", e.Func, e.Err)
}

func (e *FunctionTransformerError) Unwrap() error { return e.Err }

// inFunctionTransformer tells whether the name refused at offset is the
// value of a FunctionTransformer's func or inverse_func: the class was
// named before it and the key "func" just precedes it.
func inFunctionTransformer(stream []byte, offset int) bool {
	if offset <= 0 || offset > len(stream) {
		return false
	}
	if bytes.LastIndex(stream[:offset], []byte("FunctionTransformer")) < 0 {
		return false
	}
	near := stream[max(0, offset-64):offset]
	return bytes.Contains(near, []byte("func"))
}
