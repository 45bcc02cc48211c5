package torchscript

import fts "github.com/onnxconv/onnxconv/formats/torchscript"

// pyBuiltin folds one call of a Python builtin or TorchScript primitive
// on values known when converting: done is false when it does not fold
// (op then maps the call to ONNX nodes).
type pyBuiltin func(c *conv, p fts.Pos, name string, args []value, kw map[string]value) (v value, done bool, err error)

// pyOps is the registry of the builtins and primitives that fold, one
// entry per name; a name that is not here, or whose entry does not fold
// the call, goes on to pyFold (arithmetic, comparisons, math). One is
// built per conversion, as atenOps is.
func pyOps() map[string]pyBuiltin {
	return map[string]pyBuiltin{
		"__is__":                          (*conv).pyIs,
		"__isnot__":                       (*conv).pyIs,
		"__not__":                         (*conv).pyNot,
		"prim::dtype":                     (*conv).pyDtype,
		"prim::device":                    (*conv).pyDevice,
		"prim::NumToTensor":               (*conv).pyPassthrough,
		"prim::unchecked_unwrap_optional": (*conv).pyPassthrough,
		"_unwrap_optional":                (*conv).pyPassthrough,
		"jit._unwrap_optional":            (*conv).pyPassthrough,
		"prim::unchecked_cast":            (*conv).pyPassthrough,
		"detach":                          (*conv).pyPassthrough,
		"contiguous":                      (*conv).pyPassthrough,
		"clone":                           (*conv).pyPassthrough,
		"requires_grad":                   (*conv).pyPassthrough,
		"prim::data":                      (*conv).pyPassthrough,
		"is_grad_enabled":                 (*conv).pyFalse,
		"prim::requires_grad":             (*conv).pyFalse,
		"append":                          (*conv).pyAppend,
		"find":                            (*conv).pyFind,
		"all":                             (*conv).pyAllAny,
		"any":                             (*conv).pyAllAny,
		"warn":                            (*conv).pyWarn,
		"prim::warn":                      (*conv).pyWarn,
		"builtins::print":                 (*conv).pyWarn,
		"_assert":                         (*conv).pyWarn,
		"is_scripting":                    (*conv).pyTrue,
		"jit.is_scripting":                (*conv).pyTrue,
		"jit.is_tracing":                  (*conv).pyTracing,
		"_C._get_tracing_state":           (*conv).pyTracing,
		"prim::is_cuda":                   (*conv).pyIsDevice,
		"is_cuda":                         (*conv).pyIsDevice,
		"prim::is_nested":                 (*conv).pyIsDevice,
		"prim::is_sparse":                 (*conv).pyIsDevice,
		"prim::is_mkldnn":                 (*conv).pyIsDevice,
		"prim::is_quantized":              (*conv).pyIsDevice,
		"prim::is_meta":                   (*conv).pyIsDevice,
		"is_autocast_enabled":             (*conv).pyNoTorchFunction,
		"overrides.has_torch_function":    (*conv).pyNoTorchFunction,
		"_C._has_torch_function":          (*conv).pyNoTorchFunction,
		"dim":                             (*conv).pyDim,
		"prim::dim":                       (*conv).pyDim,
		"size":                            (*conv).pySize,
		"builtins::size":                  (*conv).pySize,
		"numel":                           (*conv).pyNumel,
		"len":                             (*conv).pyLen,
		"builtins::len":                   (*conv).pyLen,
		"builtins::str":                   (*conv).pyStr,
		"str":                             (*conv).pyStr,
		"format":                          (*conv).pyFormat,
		"list":                            (*conv).pyList,
		"builtins::list":                  (*conv).pyList,
		"builtins::range":                 (*conv).pyRange,
		"__range_length":                  (*conv).pyRangeLength,
		"__derive_index":                  (*conv).pyDeriveIndex,
		"__contains__":                    (*conv).pyContains,
		"__getitem__":                     (*conv).pyGetitem,
		"slice":                           (*conv).pySlice,
		"builtins::int":                   (*conv).pyConvert,
		"Int":                             (*conv).pyConvert,
		"IntImplicit":                     (*conv).pyConvert,
		"ScalarImplicit":                  (*conv).pyConvert,
		"builtins::float":                 (*conv).pyConvert,
		"Float":                           (*conv).pyConvert,
		"FloatImplicit":                   (*conv).pyConvert,
		"builtins::bool":                  (*conv).pyConvert,
		"Bool":                            (*conv).pyConvert,
		"builtins::min":                   (*conv).pyMinMax,
		"builtins::max":                   (*conv).pyMinMax,
	}
}
