package torchscript

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// value is what an expression of the TorchScript source stands for while
// the importer walks it: a graph tensor (*tensor), a Python value known
// when converting (int64, float64, bool, string, nil for None, *list,
// *tuple), a module instance (*object), a dtype, a device, or a function
// reference. Python values are folded; only tensors become graph nodes.
type value any

// tensor is a value of the graph with a static shape.
type tensor struct {
	name string
	dt   canonical.DataType
	dims []int64
}

func (t *tensor) rank() int { return len(t.dims) }

type list struct{ items []value }
type tuple struct{ items []value }

// device is a torch.device value (only its name is kept).
type device string

// uninitialized is what uninitialized(T) stands for: a value that a branch
// that raises never defines.
type uninitialized struct{}

// funcRef is a free function of the archive (__torch__.a.b.f).
type funcRef struct {
	qual string
	def  *fts.Def
}

// builtin is a name under torch., ops. or a Python builtin, called as an op.
type builtin struct{ name string }

// boundMethod is obj.name before the call.
type boundMethod struct {
	obj  value
	name string
}

// object is a module (or TorchScript class) instance of data.pkl.
type object struct {
	qual  string
	cls   *fts.ClassDef
	state *pickle.Dict
	attrs map[string]value
	path  string // attribute path from the root module ("" for the root)
}

// torch ScalarType codes as TorchScript prints them (dtype=6).
var scalarTypes = map[int64]canonical.DataType{
	0: canonical.Uint8, 1: canonical.Int8, 2: canonical.Int16, 3: canonical.Int32, 4: canonical.Int64,
	5: canonical.Float16, 6: canonical.Float, 7: canonical.Double, 11: canonical.Bool, 15: canonical.BFloat16,
}

func scalarTypeOf(dt canonical.DataType) int64 {
	for k, v := range scalarTypes {
		if v == dt {
			return k
		}
	}
	return -1
}

func describe(v value) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case *tensor:
		return fmt.Sprintf("Tensor %s%v", v.dt, v.dims)
	case *list:
		return fmt.Sprintf("list of %d", len(v.items))
	case *tuple:
		parts := make([]string, len(v.items))
		for i, x := range v.items {
			parts[i] = describe(x)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case *object:
		return "module " + v.qual
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%v", v)
}
