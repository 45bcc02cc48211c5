package xgboost

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

const fixtureDir = "../../fixtures/xgboost"

type fixtureModel struct {
	Name      string   `json:"name"`
	Objective string   `json:"objective"`
	Booster   string   `json:"booster"`
	Outputs   []string `json:"outputs"`
	Rows      int      `json:"rows"`
	Features  int      `json:"features"`
}

type fixtureManifest struct {
	Version string         `json:"xgboost_version"`
	Models  []fixtureModel `json:"models"`
}

func loadManifest(t testing.TB) fixtureManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "manifest.json"))
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	var m fixtureManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("parse manifest: %v", err)
	}
	if len(m.Models) == 0 {
		t.Fatal("manifest lists no models")
	}
	return m
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// npyArray is a little-endian, C-order .npy array (float32, float64 or int64).
type npyArray struct {
	shape []int64
	f     []float64
	descr string
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

func readNpy(t testing.TB, name string) npyArray {
	t.Helper()
	b := readFixture(t, name)
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("%s: not a .npy file", name)
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	default:
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	}
	header := string(b[off : off+hlen])
	data := b[off+hlen:]
	d, o, s := reDescr.FindStringSubmatch(header), reOrder.FindStringSubmatch(header), reShape.FindStringSubmatch(header)
	if d == nil || o == nil || s == nil || o[1] != "False" {
		t.Fatalf("%s: unsupported npy header %q", name, header)
	}
	a := npyArray{descr: d[1]}
	n := int64(1)
	for _, p := range strings.Split(s[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatalf("%s: bad shape %q", name, s[1])
		}
		a.shape = append(a.shape, v)
		n *= v
	}
	size := map[string]int{"<f4": 4, "<f8": 8, "<i8": 8}[a.descr]
	if size == 0 || int64(len(data)) != n*int64(size) {
		t.Fatalf("%s: dtype %s with %d bytes for %d values", name, a.descr, len(data), n)
	}
	a.f = make([]float64, n)
	for i := range a.f {
		e := data[i*size:]
		switch a.descr {
		case "<f4":
			a.f[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case "<f8":
			a.f[i] = math.Float64frombits(binary.LittleEndian.Uint64(e))
		case "<i8":
			a.f[i] = float64(int64(binary.LittleEndian.Uint64(e)))
		}
	}
	return a
}

// float32 input tensor named "input".
func inputTensor(a npyArray) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(a.f))
	for i, v := range a.f {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
	}
	dt := int32(onnxpb.TensorProto_FLOAT)
	name := inputName
	return &onnxpb.TensorProto{Name: &name, Dims: a.shape, DataType: &dt, RawData: raw}
}

// tensorValues returns the values of an ORT output (raw data or typed fields).
func tensorValues(tp *onnxpb.TensorProto) ([]float64, error) {
	raw := tp.GetRawData()
	switch onnxpb.TensorProto_DataType(tp.GetDataType()) {
	case onnxpb.TensorProto_FLOAT:
		if raw == nil {
			out := make([]float64, len(tp.GetFloatData()))
			for i, v := range tp.GetFloatData() {
				out[i] = float64(v)
			}
			return out, nil
		}
		out := make([]float64, len(raw)/4)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		return out, nil
	case onnxpb.TensorProto_INT64:
		if raw == nil {
			out := make([]float64, len(tp.GetInt64Data()))
			for i, v := range tp.GetInt64Data() {
				out[i] = float64(v)
			}
			return out, nil
		}
		out := make([]float64, len(raw)/8)
		for i := range out {
			out[i] = float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor %s: unexpected type %d", tp.GetName(), tp.GetDataType())
}

func attr(n *onnxpb.NodeProto, name string) *onnxpb.AttributeProto {
	for _, a := range n.GetAttribute() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

func findNode(g *onnxpb.GraphProto, op string) *onnxpb.NodeProto {
	for _, n := range g.GetNode() {
		if n.GetOpType() == op {
			return n
		}
	}
	return nil
}

func outputNames(g *onnxpb.GraphProto) []string {
	var s []string
	for _, o := range g.GetOutput() {
		s = append(s, o.GetName())
	}
	return s
}

func floatsOf(t *onnxpb.TensorProto) []float32 {
	raw := t.GetRawData()
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// importProto is Import with the model as a ModelProto, for tests that
// read its encoding.
func importProto(data []byte, o Options) (*onnxpb.ModelProto, error) {
	m, err := Import(data, o)
	if err != nil {
		return nil, err
	}
	return m.ToProto()
}
