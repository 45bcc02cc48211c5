package torchscript

import fts "github.com/onnxconv/onnxconv/formats/torchscript"

// atenOp converts one call of an aten op (name without the in-place
// underscore) into ONNX nodes; nil and no error when the op is not mapped
// for these arguments (op then lists it as unsupported).
type atenOp func(c *conv, p fts.Pos, name string, args []value, kw map[string]value) (value, error)

// atenOps is the registry of the aten ops that convert to ONNX nodes: one
// entry per op, as executor/registry.go lists the executor's. One is built
// per conversion (the converters reach it again through tensorOp, so a
// package-level table would be an initialization cycle).
func atenOps() map[string]atenOp {
	return map[string]atenOp{
		"add":                 (*conv).atenArith,
		"sub":                 (*conv).atenArith,
		"mul":                 (*conv).atenArith,
		"div":                 (*conv).atenArith,
		"true_divide":         (*conv).atenArith,
		"rsub":                (*conv).atenArith,
		"pow":                 (*conv).atenArith,
		"maximum":             (*conv).atenArith,
		"minimum":             (*conv).atenArith,
		"floor_divide":        (*conv).atenArith,
		"remainder":           (*conv).atenArith,
		"fmod":                (*conv).atenArith,
		"eq":                  (*conv).atenCompare,
		"ne":                  (*conv).atenCompare,
		"lt":                  (*conv).atenCompare,
		"gt":                  (*conv).atenCompare,
		"le":                  (*conv).atenCompare,
		"ge":                  (*conv).atenCompare,
		"__and__":             (*conv).atenCompare,
		"__or__":              (*conv).atenCompare,
		"logical_and":         (*conv).atenCompare,
		"logical_or":          (*conv).atenCompare,
		"__xor__":             (*conv).atenCompare,
		"bitwise_and":         (*conv).atenCompare,
		"bitwise_or":          (*conv).atenCompare,
		"neg":                 (*conv).atenUnary,
		"relu":                (*conv).atenUnary,
		"sigmoid":             (*conv).atenUnary,
		"tanh":                (*conv).atenUnary,
		"exp":                 (*conv).atenUnary,
		"log":                 (*conv).atenUnary,
		"sqrt":                (*conv).atenUnary,
		"abs":                 (*conv).atenUnary,
		"floor":               (*conv).atenUnary,
		"ceil":                (*conv).atenUnary,
		"sin":                 (*conv).atenUnary,
		"cos":                 (*conv).atenUnary,
		"reciprocal":          (*conv).atenUnary,
		"rsqrt":               (*conv).atenUnary,
		"hardswish":           (*conv).atenUnary,
		"hardsigmoid":         (*conv).atenUnary,
		"erf":                 (*conv).atenUnary,
		"sign":                (*conv).atenUnary,
		"round":               (*conv).atenUnary,
		"__not__":             (*conv).atenUnary,
		"logical_not":         (*conv).atenUnary,
		"bitwise_not":         (*conv).atenUnary,
		"silu":                (*conv).atenUnary,
		"softplus":            (*conv).atenUnary,
		"elu":                 (*conv).atenUnary,
		"selu":                (*conv).atenUnary,
		"log_sigmoid":         (*conv).atenUnary,
		"mish":                (*conv).atenUnary,
		"relu6":               (*conv).atenUnary,
		"square":              (*conv).atenUnary,
		"log1p":               (*conv).atenUnary,
		"gelu":                (*conv).atenGelu,
		"leaky_relu":          (*conv).atenLeakyRelu,
		"hardtanh":            (*conv).atenClamp,
		"clamp":               (*conv).atenClamp,
		"clip":                (*conv).atenClamp,
		"dropout":             (*conv).atenDropout,
		"feature_dropout":     (*conv).atenDropout,
		"alpha_dropout":       (*conv).atenDropout,
		"dropout1d":           (*conv).atenDropout,
		"dropout2d":           (*conv).atenDropout,
		"softmax":             (*conv).atenSoftmax,
		"log_softmax":         (*conv).atenSoftmax,
		"_convolution":        (*conv).convolution,
		"conv1d":              (*conv).convolution,
		"conv2d":              (*conv).convolution,
		"conv3d":              (*conv).convolution,
		"batch_norm":          (*conv).atenBatchNorm,
		"layer_norm":          (*conv).atenLayerNorm,
		"linear":              (*conv).atenLinear,
		"addmm":               (*conv).atenAddmm,
		"matmul":              (*conv).atenMatmul,
		"mm":                  (*conv).atenMatmul,
		"bmm":                 (*conv).atenMatmul,
		"baddbmm":             (*conv).atenBaddbmm,
		"max_pool1d":          (*conv).pool,
		"max_pool2d":          (*conv).pool,
		"max_pool3d":          (*conv).pool,
		"avg_pool1d":          (*conv).pool,
		"avg_pool2d":          (*conv).pool,
		"avg_pool3d":          (*conv).pool,
		"adaptive_avg_pool1d": (*conv).atenAdaptivePool,
		"adaptive_avg_pool2d": (*conv).atenAdaptivePool,
		"adaptive_avg_pool3d": (*conv).atenAdaptivePool,
		"adaptive_max_pool2d": (*conv).atenAdaptivePool,
		"mean":                (*conv).atenReduce,
		"sum":                 (*conv).atenReduce,
		"amax":                (*conv).atenReduce,
		"amin":                (*conv).atenReduce,
		"prod":                (*conv).atenReduce,
		"cat":                 (*conv).atenCat,
		"concat":              (*conv).atenCat,
		"stack":               (*conv).atenCat,
		"view":                (*conv).atenView,
		"reshape":             (*conv).atenView,
		"_reshape_alias":      (*conv).atenView,
		"view_as":             (*conv).atenViewAs,
		"reshape_as":          (*conv).atenViewAs,
		"expand_as":           (*conv).atenViewAs,
		"flatten":             (*conv).atenFlatten,
		"unflatten":           (*conv).atenUnflatten,
		"squeeze":             (*conv).atenSqueeze,
		"unsqueeze":           (*conv).atenUnsqueeze,
		"permute":             (*conv).atenPermute,
		"transpose":           (*conv).atenTranspose,
		"swapaxes":            (*conv).atenTranspose,
		"t":                   (*conv).atenT,
		"numpy_T":             (*conv).atenT,
		"contiguous":          (*conv).atenIdentity,
		"clone":               (*conv).atenIdentity,
		"detach":              (*conv).atenIdentity,
		"alias":               (*conv).atenIdentity,
		"prim::data":          (*conv).atenIdentity,
		"to":                  (*conv).atenTo,
		"type_as":             (*conv).atenTo,
		"float":               (*conv).atenTo,
		"double":              (*conv).atenTo,
		"long":                (*conv).atenTo,
		"int":                 (*conv).atenTo,
		"half":                (*conv).atenTo,
		"bool":                (*conv).atenTo,
		"slice":               (*conv).atenSlice,
		"select":              (*conv).atenSelect,
		"__getitem__":         (*conv).atenGetitem,
		"chunk":               (*conv).split,
		"split":               (*conv).split,
		"unbind":              (*conv).split,
		"split_with_sizes":    (*conv).split,
		"expand":              (*conv).atenExpand,
		"zeros":               (*conv).atenFill,
		"ones":                (*conv).atenFill,
		"full":                (*conv).atenFill,
		"zeros_like":          (*conv).atenFill,
		"ones_like":           (*conv).atenFill,
		"full_like":           (*conv).atenFill,
		"new_zeros":           (*conv).atenFill,
		"new_ones":            (*conv).atenFill,
		"lstm":                (*conv).rnn,
		"gru":                 (*conv).rnn,
		"stft":                (*conv).atenStft,
		"index":               (*conv).atenIndex,
		"index_select":        (*conv).atenIndexSelect,
		"group_norm":          (*conv).atenGroupNorm,
		"upsample_nearest1d":  (*conv).atenUpsample,
		"upsample_nearest2d":  (*conv).atenUpsample,
		"upsample_nearest3d":  (*conv).atenUpsample,
		"upsample_bilinear2d": (*conv).atenUpsample,
		"upsample_linear1d":   (*conv).atenUpsample,
		"conv_transpose1d":    (*conv).atenConvTranspose,
		"conv_transpose2d":    (*conv).atenConvTranspose,
		"conv_transpose3d":    (*conv).atenConvTranspose,
		"cumsum":              (*conv).atenCumsum,
		"max":                 (*conv).atenMaxMin,
		"min":                 (*conv).atenMaxMin,
		"argmax":              (*conv).atenMaxMin,
		"argmin":              (*conv).atenMaxMin,
		"arange":              (*conv).atenArange,
		"lstm_cell":           (*conv).atenLstmCell,
		"atan2":               (*conv).atenAtan2,
		"embedding":           (*conv).atenEmbedding,
		"where":               (*conv).atenWhere,
		"masked_fill":         (*conv).atenMaskedFill,
		"pad":                 (*conv).atenPad,
		"constant_pad_nd":     (*conv).atenPad,
		"reflection_pad1d":    (*conv).atenPad,
		"reflection_pad2d":    (*conv).atenPad,
		"replication_pad1d":   (*conv).atenPad,
		"replication_pad2d":   (*conv).atenPad,
	}
}

// tensorOp converts the aten op name with the converter of the registry:
// nil and no error when no converter maps it.
func (c *conv) tensorOp(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	f := c.aten[name]
	if f == nil {
		return nil, nil
	}
	return f(c, p, name, args, kw)
}

// atenCall is one call of an aten op, whose arguments its converter reads
// by position or by keyword.
type atenCall struct {
	c    *conv
	p    fts.Pos
	name string
	args []value
	kw   map[string]value
}

func (c *conv) callOf(p fts.Pos, name string, args []value, kw map[string]value) *atenCall {
	return &atenCall{c: c, p: p, name: name, args: args, kw: kw}
}

// arg is the argument at position i, else the keyword argument k.
func (a *atenCall) arg(i int, k string) value {
	if i < len(a.args) {
		return a.args[i]
	}
	return a.kw[k]
}

// pos is the argument at position i, nil when the call has fewer.
func (a *atenCall) pos(i int) value {
	if i < len(a.args) {
		return a.args[i]
	}
	return nil
}

// self is argument 0 ("self") as a tensor, or an error naming the op and
// what it got.
func (a *atenCall) self() (*tensor, error) {
	x, ok := a.arg(0, "self").(*tensor)
	if !ok {
		return nil, a.c.errAt(a.p, "%s of %s", a.name, describe(a.arg(0, "self")))
	}
	return x, nil
}

// tens is argument i (or k) as a tensor, or an error naming the op.
func (a *atenCall) tens(i int, k string) (*tensor, error) {
	t, ok := a.arg(i, k).(*tensor)
	if !ok {
		return nil, a.c.errAt(a.p, "%s: argument %d is %s, not a tensor", a.name, i, describe(a.arg(i, k)))
	}
	return t, nil
}

// intArg is argument i (or k) as an integer (a bool counts as 0 or 1), or
// def when it is neither.
func (a *atenCall) intArg(i int, k string, def int64) int64 {
	if v, ok := a.arg(i, k).(int64); ok {
		return v
	}
	if b, ok := a.arg(i, k).(bool); ok {
		if b {
			return 1
		}
		return 0
	}
	return def
}
