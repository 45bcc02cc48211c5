package profiles

// The kernel tables are generated from ONNX Runtime's docs/OperatorKernels.md
// read from a clone of github.com/microsoft/onnxruntime (ONNXRUNTIME_REPO)
// at a fixed tag or commit; the document itself is not part of this
// repository.
//go:generate go run ./internal/genkernels -repo $ONNXRUNTIME_REPO -rev v1.13.1 -table ort113 -release 1.13.1 -out kernels_ort113_gen.go
//go:generate go run ./internal/genkernels -repo $ONNXRUNTIME_REPO -rev 735e69a396afe7e1bdfbc6b38c1d43eeb68b8484 -table ort125 -release 1.25.0-dev -out kernels_ort125_gen.go

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// TypeSet is a set of tensor element types: bit n stands for the ONNX
// TensorProto.DataType n.
type TypeSet uint64

// Element type bits, named as in the generated kernel tables.
const (
	tFloat          TypeSet = 1 << onnxpb.TensorProto_FLOAT
	tUint8          TypeSet = 1 << onnxpb.TensorProto_UINT8
	tInt8           TypeSet = 1 << onnxpb.TensorProto_INT8
	tUint16         TypeSet = 1 << onnxpb.TensorProto_UINT16
	tInt16          TypeSet = 1 << onnxpb.TensorProto_INT16
	tInt32          TypeSet = 1 << onnxpb.TensorProto_INT32
	tInt64          TypeSet = 1 << onnxpb.TensorProto_INT64
	tString         TypeSet = 1 << onnxpb.TensorProto_STRING
	tBool           TypeSet = 1 << onnxpb.TensorProto_BOOL
	tFloat16        TypeSet = 1 << onnxpb.TensorProto_FLOAT16
	tDouble         TypeSet = 1 << onnxpb.TensorProto_DOUBLE
	tUint32         TypeSet = 1 << onnxpb.TensorProto_UINT32
	tUint64         TypeSet = 1 << onnxpb.TensorProto_UINT64
	tComplex64      TypeSet = 1 << onnxpb.TensorProto_COMPLEX64
	tComplex128     TypeSet = 1 << onnxpb.TensorProto_COMPLEX128
	tBfloat16       TypeSet = 1 << onnxpb.TensorProto_BFLOAT16
	tFloat8e4m3fn   TypeSet = 1 << onnxpb.TensorProto_FLOAT8E4M3FN
	tFloat8e4m3fnuz TypeSet = 1 << onnxpb.TensorProto_FLOAT8E4M3FNUZ
	tFloat8e5m2     TypeSet = 1 << onnxpb.TensorProto_FLOAT8E5M2
	tFloat8e5m2fnuz TypeSet = 1 << onnxpb.TensorProto_FLOAT8E5M2FNUZ
	tUint4          TypeSet = 1 << onnxpb.TensorProto_UINT4
	tInt4           TypeSet = 1 << onnxpb.TensorProto_INT4
	tFloat4e2m1     TypeSet = 1 << onnxpb.TensorProto_FLOAT4E2M1
	tFloat8e8m0     TypeSet = 1 << onnxpb.TensorProto_FLOAT8E8M0
	tUint2          TypeSet = 1 << onnxpb.TensorProto_UINT2
	tInt2           TypeSet = 1 << onnxpb.TensorProto_INT2
)

// Has reports whether dt is in s.
func (s TypeSet) Has(dt onnxpb.TensorProto_DataType) bool {
	return dt >= 0 && dt < 64 && s&(1<<uint(dt)) != 0
}

// String lists the types in ONNX spelling: "double, float, int32".
func (s TypeSet) String() string {
	var out []string
	for v := s; v != 0; v &= v - 1 {
		n := bits.TrailingZeros64(uint64(v))
		out = append(out, strings.ToLower(onnxpb.TensorProto_DataType(n).String()))
	}
	return strings.Join(out, ", ")
}

// KernelVar is one type variable of a kernel and the element types the
// kernel is registered for.
type KernelVar struct {
	Name  string
	Types TypeSet
}

// Kernel is one row of ONNX Runtime's CPUExecutionProvider kernel table:
// the operator versions From..To (To 0: open-ended, "13+") of Op in
// Domain ("" for ai.onnx) and the element types per type variable. A type
// variable that the table does not list is not constrained by the kernel.
type Kernel struct {
	Domain string
	Op     string
	From   int
	To     int
	Vars   []KernelVar
}

// KernelTable is ONNX Runtime's published CPU kernel table of one
// release (docs/OperatorKernels.md, generated there from the registered
// kernels), ai.onnx and ai.onnx.ml domains.
type KernelTable struct {
	// Name is the table's key in the profiles' cpu_kernels lists.
	Name string
	// Release is the ONNX Runtime version the table was published with.
	Release string
	// Source is the URL of the table (at a commit or tag).
	Source  string
	Kernels []Kernel
}

// hasKernelTable reports whether kernelTable knows name.
func hasKernelTable(name string) bool { return name == "ort113" || name == "ort125" }

// kernelTable returns a fresh copy of the table called name.
func kernelTable(name string) (*KernelTable, error) {
	switch name {
	case "ort113":
		return kernelsORT113(), nil
	case "ort125":
		return kernelsORT125(), nil
	}
	return nil, fmt.Errorf("unknown CPU kernel table %q", name)
}

// CPUKernels says which element types the target's CPU kernels implement.
// It is nil for a profile without kernel tables.
type CPUKernels struct {
	tables []*KernelTable
	// index: domain \x00 op -> kernels of each table
	index map[string][][]Kernel
}

// Tables returns the tables the lookup combines.
func (k *CPUKernels) Tables() []*KernelTable { return k.tables }

// newCPUKernels combines the named tables.
func newCPUKernels(names []string) (*CPUKernels, error) {
	k := &CPUKernels{index: map[string][][]Kernel{}}
	for i, n := range names {
		t, err := kernelTable(n)
		if err != nil {
			return nil, err
		}
		k.tables = append(k.tables, t)
		for _, kn := range t.Kernels {
			key := normDomain(kn.Domain) + "\x00" + kn.Op
			rows := k.index[key]
			for len(rows) < len(names) {
				rows = append(rows, nil)
			}
			rows[i] = append(rows[i], kn)
			k.index[key] = rows
		}
	}
	return k, nil
}

// Lookup returns the element types the CPU kernels of op (in domain) at
// operator version since implement, per type variable. found is false
// when no table has a kernel for that version (the operator may still run,
// e.g. as a function ONNX Runtime inlines: nothing is known). With several
// tables (an approximation of a release between two published tables),
// a type must be in every table that has a kernel for the version.
func (k *CPUKernels) Lookup(domain, op string, since int) (vars map[string]TypeSet, found bool) {
	if k == nil {
		return nil, false
	}
	for _, rows := range k.index[normDomain(domain)+"\x00"+op] {
		var hit *Kernel
		for i := range rows {
			r := Range{From: rows[i].From, To: rows[i].To}
			if r.Contains(since) {
				hit = &rows[i]
				break
			}
		}
		if hit == nil {
			continue
		}
		if !found {
			vars = map[string]TypeSet{}
			for _, v := range hit.Vars {
				vars[v.Name] = v.Types
			}
			found = true
			continue
		}
		for _, v := range hit.Vars {
			if t, ok := vars[v.Name]; ok {
				vars[v.Name] = t & v.Types
			} else {
				vars[v.Name] = v.Types
			}
		}
	}
	return vars, found
}

// CPUKernels returns the profile's CPU kernel tables combined, or nil when
// the profile has none.
func (p *Profile) CPUKernels() (*CPUKernels, error) {
	if len(p.KernelTables) == 0 {
		return nil, nil
	}
	k, err := newCPUKernels(p.KernelTables)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return k, nil
}

// Implements reports whether the CPU kernel of op (in domain) at operator
// version since runs type variable param with element type dt. It is true
// when nothing is known (no kernel of that version in the tables, or the
// kernel does not constrain param). A float16 value on a kernel that
// implements float is run: ONNX Runtime inserts the Casts itself (its
// InsertCastTransformer), so only other types are missing.
func (k *CPUKernels) Implements(domain, op string, since int, param string, dt onnxpb.TensorProto_DataType) (bool, TypeSet) {
	vars, found := k.Lookup(domain, op, since)
	if !found {
		return true, 0
	}
	allowed, ok := vars[param]
	if !ok || allowed.Has(dt) {
		return true, allowed
	}
	if dt == onnxpb.TensorProto_FLOAT16 && allowed.Has(onnxpb.TensorProto_FLOAT) {
		return true, allowed
	}
	return false, allowed
}
