//go:build cgo

package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// openForTest opens the runtime with one intra-op thread, or skips the test
// when the library is absent (counted and reported by TestMain, which fails
// the package unless ONNXCONV_SKIP_ORT=1; see testpaths.Main).
func openForTest(t testing.TB) *Runtime {
	t.Helper()
	p := testpaths.ORT(t)
	rt, err := Open(p, 1)
	if err != nil {
		t.Fatalf("Open(%s): %v", p, err)
	}
	return rt
}

// repoRoot returns the folder holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// nodeTestDir returns the ONNX backend node-test folder of the shared tree
// (../shared beside the repository), or skips when it is not there.
func nodeTestDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(repoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", "node")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("ONNX backend tests not found (../shared must sit beside the repository): %v", err)
	}
	return d
}

func readTensor(t testing.TB, path string) *onnxpb.TensorProto {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(b, &tp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &tp
}

// readDataSet reads input_N.pb and output_N.pb of a backend-test data set.
func readDataSet(t testing.TB, dir string) (ins, outs []*onnxpb.TensorProto) {
	t.Helper()
	for _, kind := range []string{"input", "output"} {
		files, err := filepath.Glob(filepath.Join(dir, kind+"_*.pb"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(files, func(i, j int) bool { return pbIndex(files[i]) < pbIndex(files[j]) })
		for _, f := range files {
			if kind == "input" {
				ins = append(ins, readTensor(t, f))
			} else {
				outs = append(outs, readTensor(t, f))
			}
		}
	}
	if len(outs) == 0 {
		t.Fatalf("%s: no output_N.pb", dir)
	}
	return ins, outs
}

func pbIndex(path string) int {
	var n int
	base := filepath.Base(path)
	base = base[strings.LastIndex(base, "_")+1:]
	fmt.Sscanf(base, "%d.pb", &n)
	return n
}

// decoded is a tensor's values as float64 (exact for all integer types up
// to 2^53; float8 types as their byte, so compared bit for bit), or its
// strings.
type decoded struct {
	dt   onnxpb.TensorProto_DataType
	dims []int64
	f    []float64
	s    []string
}

func decode(t testing.TB, tp *onnxpb.TensorProto) decoded {
	t.Helper()
	dt := onnxpb.TensorProto_DataType(tp.GetDataType())
	d := decoded{dt: dt, dims: tp.GetDims()}
	n, err := numElements(tp.GetDims())
	if err != nil {
		t.Fatal(err)
	}
	if dt == onnxpb.TensorProto_STRING {
		for _, s := range tp.GetStringData() {
			d.s = append(d.s, string(s))
		}
		return d
	}
	b, err := tensorBytes(tp, dt, n)
	if err != nil {
		t.Fatalf("tensor %q: %v", tp.GetName(), err)
	}
	le := binary.LittleEndian
	size := elemSize(dt)
	for i := int64(0); i < n; i++ {
		e := b[i*int64(size):]
		var v float64
		switch dt {
		case onnxpb.TensorProto_FLOAT:
			v = float64(math.Float32frombits(le.Uint32(e)))
		case onnxpb.TensorProto_DOUBLE:
			v = math.Float64frombits(le.Uint64(e))
		case onnxpb.TensorProto_FLOAT16:
			v = halfToFloat(le.Uint16(e))
		case onnxpb.TensorProto_BFLOAT16:
			v = float64(math.Float32frombits(uint32(le.Uint16(e)) << 16))
		case onnxpb.TensorProto_INT8:
			v = float64(int8(e[0]))
		case onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL:
			v = float64(e[0])
		case onnxpb.TensorProto_FLOAT8E4M3FN, onnxpb.TensorProto_FLOAT8E4M3FNUZ,
			onnxpb.TensorProto_FLOAT8E5M2, onnxpb.TensorProto_FLOAT8E5M2FNUZ:
			v = float64(e[0]) // the bit pattern: compared exactly

		case onnxpb.TensorProto_INT16:
			v = float64(int16(le.Uint16(e)))
		case onnxpb.TensorProto_UINT16:
			v = float64(le.Uint16(e))
		case onnxpb.TensorProto_INT32:
			v = float64(int32(le.Uint32(e)))
		case onnxpb.TensorProto_UINT32:
			v = float64(le.Uint32(e))
		case onnxpb.TensorProto_INT64:
			v = float64(int64(le.Uint64(e)))
		case onnxpb.TensorProto_UINT64:
			v = float64(le.Uint64(e))
		default:
			t.Fatalf("decode: type %s", dt)
		}
		d.f = append(d.f, v)
	}
	return d
}

// halfToFloat converts IEEE 754 binary16 bits to float64.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac * math.Pow(2, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// diffStats compares got with want: same type, dims and, element by element,
// |got-want| <= atol + rtol*|want| (NaN matches NaN). It returns the largest
// absolute and relative differences and the number of elements out of
// tolerance.
func diffStats(t testing.TB, got, want *onnxpb.TensorProto, rtol, atol float64) (maxAbs, maxRel float64, bad int) {
	t.Helper()
	g, w := decode(t, got), decode(t, want)
	if g.dt != w.dt {
		t.Fatalf("%q: type %s, want %s", want.GetName(), g.dt, w.dt)
	}
	if fmt.Sprint(g.dims) != fmt.Sprint(w.dims) {
		t.Fatalf("%q: dims %v, want %v", want.GetName(), g.dims, w.dims)
	}
	if w.dt == onnxpb.TensorProto_STRING {
		if fmt.Sprintf("%q", g.s) != fmt.Sprintf("%q", w.s) {
			t.Fatalf("%q: strings %q, want %q", want.GetName(), g.s, w.s)
		}
		return 0, 0, 0
	}
	if len(g.f) != len(w.f) {
		t.Fatalf("%q: %d values, want %d", want.GetName(), len(g.f), len(w.f))
	}
	for i := range w.f {
		a, b := g.f[i], w.f[i]
		if math.IsNaN(a) && math.IsNaN(b) || a == b {
			continue
		}
		d := math.Abs(a - b)
		if math.IsNaN(d) {
			bad++
			continue
		}
		maxAbs = math.Max(maxAbs, d)
		if b != 0 {
			maxRel = math.Max(maxRel, d/math.Abs(b))
		}
		if d > atol+rtol*math.Abs(b) {
			if bad < 5 {
				t.Errorf("%q[%d] = %g, want %g (diff %g)", want.GetName(), i, a, b, d)
			}
			bad++
		}
	}
	return maxAbs, maxRel, bad
}
