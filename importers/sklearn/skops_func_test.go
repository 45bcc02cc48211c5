package sklearn_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// skopsZip writes a skops file of one schema (no array members).
func skopsZip(t *testing.T, schema map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, err := z.Create("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(w).Encode(schema); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSkopsFunctionNode: a FunctionTransformer's function, in protocol
// 0's FunctionNode form (module_path, function in content) and protocol
// 1-2's (module and name in __module__, __class__), goes through the
// allow-list, which refuses it: a FunctionTransformerError naming it.
func TestSkopsFunctionNode(t *testing.T) {
	json := func(v string, id int) map[string]any {
		return map[string]any{"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": v, "is_json": true, "__id__": id}
	}
	forms := map[int]map[string]any{
		0: {"__class__": "function", "__module__": "builtins", "__loader__": "FunctionNode", "__id__": 9,
			"content": map[string]any{"module_path": "numpy", "function": "absolute"}},
		2: {"__class__": "absolute", "__module__": "numpy", "__loader__": "FunctionNode", "__id__": 9},
	}
	for proto, fn := range forms {
		schema := map[string]any{
			"__class__": "FunctionTransformer", "__module__": "sklearn.preprocessing._function_transformer",
			"__loader__": "ObjectNode", "__id__": 1, "protocol": proto,
			"content": map[string]any{"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "__id__": 2,
				"content": map[string]any{"func": fn, "validate": json("false", 3)}},
		}
		_, err := sklearn.Parse(skopsZip(t, schema))
		var fe *sklearn.FunctionTransformerError
		var re *pickle.RefusedError
		if !errors.As(err, &fe) || fe.Func != "numpy.absolute" || !errors.As(err, &re) {
			t.Errorf("protocol %d: got %v", proto, err)
		}
	}
}
