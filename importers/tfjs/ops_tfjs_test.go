package tfjs_test

// The op harness: one table of rows (ops_rows_test.go), each a tiny TF.js
// graph model (a GraphDef in JSON, as tensorflowjs_converter writes one,
// Const values in weights.bin) built here per op and attribute set. Each
// row is imported by the tfjs importer and run by the executor; all rows
// together are one graph model that TF.js 4.22.0 runs once (CPU backend,
// in Node, through runtimes/tfjs); every output is compared with TF.js's.

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

// opRow is one case of the harness.
type opRow struct {
	// name is unique; it prefixes the row's node names.
	name string
	// ops are the TF ops the row checks (the coverage test reads them).
	ops []string
	// build adds the row's nodes to g.
	build func(g *gm)
	// tol is the tolerance |got−want| ≤ tol·(1+|want|); 0 is 1e-5.
	tol float64
	// anyType skips the element type check (the values are still
	// compared), with the reason: a TF.js quirk where TF's own type is
	// kept.
	anyType string
	// jsRef, when set, is the reference instead of the graph model: the
	// body of a JavaScript function of tf (TF.js 4.22) returning the row's
	// outputs in order, for ops TF.js's Node graph executor does not
	// dispatch although tfjs-core has their kernels (the ragged ops).
	jsRef string
	// check replaces the value comparison of every output (random ops:
	// a comparison of distributions); nil compares values.
	check func(t *testing.T, out string, got, want *canonical.Tensor)
}

// gm builds the JSON GraphDef of one row (or of all rows at once).
type gm struct {
	prefix  string
	nodes   []map[string]any
	weights []map[string]any
	data    [][]byte
	inSig   map[string]any
	outSig  map[string]any
	outs    []string
	feeds   []*canonical.Tensor
	funcs   []map[string]any
	// inFunc collects the nodes of a library function (or of the
	// initializer graph) being built.
	inFunc *[]map[string]any
	// initNodes are the modelInitializer graph's nodes.
	initNodes []map[string]any
}

// initGraph adds the nodes body adds to the modelInitializer graph (run
// once at load by TF.js: hash table contents).
func (g *gm) initGraph(body func()) {
	saved := g.inFunc
	g.inFunc = &g.initNodes
	body()
	g.inFunc = saved
}

func newGM(prefix string) *gm {
	return &gm{prefix: prefix, inSig: map[string]any{}, outSig: map[string]any{}}
}

// n is the node name of local name s in this row.
func (g *gm) n(s string) string {
	if g.prefix == "" {
		return s
	}
	return g.prefix + "__" + s
}

func (g *gm) add(node map[string]any) {
	if g.inFunc != nil {
		*g.inFunc = append(*g.inFunc, node)
		return
	}
	g.nodes = append(g.nodes, node)
}

// attr values as TF.js JSON writes them.
func aI(v int64) map[string]any   { return map[string]any{"i": fmt.Sprint(v)} }
func aF(v float32) map[string]any { return map[string]any{"f": v} }
func aB(v bool) map[string]any    { return map[string]any{"b": v} }
func aS(v string) map[string]any {
	return map[string]any{"s": base64.StdEncoding.EncodeToString([]byte(v))}
}
func aT(v string) map[string]any { return map[string]any{"type": v} }
func aInts(v ...int64) map[string]any {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return map[string]any{"list": map[string]any{"i": s}}
}
func aStrs(v ...string) map[string]any {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = base64.StdEncoding.EncodeToString([]byte(x))
	}
	return map[string]any{"list": map[string]any{"s": s}}
}
func aTypes(v ...string) map[string]any {
	return map[string]any{"list": map[string]any{"type": v}}
}
func aShape(d ...int64) map[string]any {
	dims := make([]map[string]any, len(d))
	for i, x := range d {
		dims[i] = map[string]any{"size": fmt.Sprint(x)}
	}
	return map[string]any{"shape": map[string]any{"dim": dims}}
}
func aFunc(name string) map[string]any { return map[string]any{"func": map[string]any{"name": name}} }

type attrs = map[string]map[string]any

var tfType = map[canonical.DataType]string{canonical.Float: "DT_FLOAT", canonical.Int32: "DT_INT32", canonical.Bool: "DT_BOOL"}

func shapeJSON(dims []int64) map[string]any {
	d := make([]map[string]any, len(dims))
	for i, x := range dims {
		d[i] = map[string]any{"size": fmt.Sprint(x)}
	}
	return map[string]any{"dim": d}
}

// input adds a Placeholder fed with t's values.
func (g *gm) input(name string, t *canonical.Tensor) string {
	nm := g.n(name)
	dt := tfType[t.DataType]
	g.add(map[string]any{"name": nm, "op": "Placeholder", "attr": attrs{"dtype": aT(dt), "shape": {"shape": shapeJSON(t.Dims)}}})
	g.inSig[nm+":0"] = map[string]any{"name": nm + ":0", "dtype": dt, "tensorShape": shapeJSON(t.Dims)}
	cp := *t
	cp.Name = nm
	g.feeds = append(g.feeds, &cp)
	return nm
}

func (g *gm) in(name string, dims []int64, v []float32) string {
	return g.input(name, f32Tensor("", dims, v))
}

func (g *gm) inI(name string, dims []int64, v []int32) string {
	return g.input(name, i32Tensor(dims, v))
}

// konst adds a Const whose value is in weights.bin.
func (g *gm) konst(name string, t *canonical.Tensor) string {
	nm := g.n(name)
	dt := tfType[t.DataType]
	g.add(map[string]any{"name": nm, "op": "Const", "attr": attrs{"dtype": aT(dt), "value": {"tensor": map[string]any{"dtype": dt, "tensorShape": shapeJSON(t.Dims)}}}})
	js := map[canonical.DataType]string{canonical.Float: "float32", canonical.Int32: "int32", canonical.Bool: "bool"}[t.DataType]
	dims := t.Dims
	if dims == nil {
		dims = []int64{}
	}
	g.weights = append(g.weights, map[string]any{"name": nm, "shape": dims, "dtype": js})
	raw, _ := t.Bytes()
	g.data = append(g.data, raw)
	return nm
}

func (g *gm) c(name string, dims []int64, v []float32) string {
	return g.konst(name, f32Tensor("", dims, v))
}

func (g *gm) ci(name string, dims []int64, v ...int32) string {
	return g.konst(name, i32Tensor(dims, v))
}

// ci1 is a rank-1 int32 constant.
func (g *gm) ci1(name string, v ...int32) string { return g.ci(name, []int64{int64(len(v))}, v...) }

// cs is a scalar int32 constant.
func (g *gm) cs(name string, v int32) string { return g.ci(name, nil, v) }

// cf is a scalar float constant.
func (g *gm) cf(name string, v float32) string { return g.c(name, nil, []float32{v}) }

func (g *gm) cb(name string, dims []int64, v ...bool) string {
	raw := make([]byte, len(v))
	for i, b := range v {
		if b {
			raw[i] = 1
		}
	}
	return g.konst(name, canonical.NewTensor("", canonical.Bool, dims, raw))
}

// op adds a node; inputs are node names as written ("x", "x:1", "^x").
func (g *gm) op(name, op string, inputs []string, a attrs) string {
	nm := g.n(name)
	if a == nil {
		a = attrs{}
	}
	in := inputs
	if in == nil {
		in = []string{}
	}
	g.add(map[string]any{"name": nm, "op": op, "input": in, "attr": a})
	return nm
}

// out makes node outputs graph outputs; "node:k" (k > 0) goes through
// an Identity, as converted models do.
func (g *gm) out(names ...string) {
	for _, n := range names {
		if strings.Contains(n, ":") {
			id := strings.NewReplacer(":", "_").Replace(n)
			g.add(map[string]any{"name": id, "op": "Identity", "input": []string{n}, "attr": attrs{}})
			n = id
		}
		g.outSig[n+":0"] = map[string]any{"name": n + ":0"}
		g.outs = append(g.outs, n)
	}
}

// fn adds a library function: args [name, type] pairs (read by the
// body's nodes by their plain names); body adds its nodes (named as the
// row's, their Const values in weights.bin, where TF.js looks them up)
// and returns its rets as [out_arg, "node:out_arg:0", type] triples.
func (g *gm) fn(name string, args [][2]string, body func() [][3]string) string {
	var nodes []map[string]any
	saved := g.inFunc
	g.inFunc = &nodes
	rets := body()
	g.inFunc = saved
	in := make([]map[string]any, len(args))
	for i, a := range args {
		in[i] = map[string]any{"name": a[0], "type": a[1]}
	}
	out := make([]map[string]any, len(rets))
	ret := map[string]string{}
	for i, r := range rets {
		out[i] = map[string]any{"name": r[0], "type": r[2]}
		ret[r[0]] = r[1]
	}
	g.funcs = append(g.funcs, map[string]any{"signature": map[string]any{"name": name, "inputArg": in, "outputArg": out}, "nodeDef": nodes, "ret": ret})
	return name
}

// merge adds row r's graph to g.
func (g *gm) merge(r *gm) {
	g.nodes = append(g.nodes, r.nodes...)
	g.weights = append(g.weights, r.weights...)
	g.data = append(g.data, r.data...)
	for k, v := range r.inSig {
		g.inSig[k] = v
	}
	for k, v := range r.outSig {
		g.outSig[k] = v
	}
	g.outs = append(g.outs, r.outs...)
	g.feeds = append(g.feeds, r.feeds...)
	g.funcs = append(g.funcs, r.funcs...)
	g.initNodes = append(g.initNodes, r.initNodes...)
}

// write writes model.json and weights.bin into dir.
func (g *gm) write(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lib := map[string]any{}
	if len(g.funcs) > 0 {
		lib["function"] = g.funcs
	}
	weights := g.weights
	if weights == nil {
		weights = []map[string]any{}
	}
	m := map[string]any{
		"format":          "graph-model",
		"generatedBy":     "onnxconv importers/tfjs op harness",
		"signature":       map[string]any{"inputs": g.inSig, "outputs": g.outSig},
		"modelTopology":   map[string]any{"node": g.nodes, "library": lib, "versions": map[string]any{"producer": 1395}},
		"weightsManifest": []any{map[string]any{"paths": []string{"weights.bin"}, "weights": weights}},
	}
	if len(g.initNodes) > 0 {
		m["modelInitializer"] = map[string]any{"node": g.initNodes, "versions": map[string]any{"producer": 1395}}
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, d := range g.data {
		data = append(data, d...)
	}
	p := filepath.Join(dir, "model.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func i32Tensor(dims []int64, v []int32) *canonical.Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
	}
	return canonical.NewTensor("", canonical.Int32, dims, raw)
}

// vals returns n deterministic values spread over [lo, hi].
func vals(n int, lo, hi float64, seed int) []float32 {
	out := make([]float32, n)
	for i := range out {
		u := 0.5 + 0.5*math.Sin(float64(i)*1.7+float64(seed)*0.9+0.3)
		out[i] = float32(lo + (hi-lo)*u)
	}
	return out
}

// ivals returns n deterministic integers in [lo, hi].
func ivals(n int, lo, hi int32, seed int) []int32 {
	out := make([]int32, n)
	for i := range out {
		u := 0.5 + 0.5*math.Sin(float64(i)*1.7+float64(seed)*0.9+0.3)
		out[i] = lo + int32(math.Floor(u*float64(hi-lo+1)))
		if out[i] > hi {
			out[i] = hi
		}
	}
	return out
}

// asFloat64 reads any numeric or bool tensor as float64 values.
func asFloat64(t testing.TB, x *canonical.Tensor) []float64 {
	t.Helper()
	raw, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	n, err := x.NumElements()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		switch x.DataType {
		case canonical.Float:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		case canonical.Double:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		case canonical.Int32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		case canonical.Int64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		case canonical.Bool, canonical.Uint8:
			out[i] = float64(raw[i])
		case canonical.Int8:
			out[i] = float64(int8(raw[i]))
		default:
			t.Fatalf("%s: element type %s", x.Name, x.DataType)
		}
	}
	return out
}

// dtypeClass is float, int or bool: TF.js holds float32, int32 and bool.
func dtypeClass(dt canonical.DataType) string {
	switch dt {
	case canonical.Float, canonical.Double, canonical.Float16:
		return "float"
	case canonical.Bool:
		return "bool"
	}
	return "int"
}

// compareValues checks got against TF.js's want within tol·(1+|want|);
// NaN matches NaN and infinities match exactly.
func compareValues(t *testing.T, what string, got, want *canonical.Tensor, tol float64, anyType bool) {
	t.Helper()
	if fmt.Sprint(got.Dims) != fmt.Sprint(want.Dims) {
		t.Errorf("%s: shape %v, TF.js %v", what, got.Dims, want.Dims)
		return
	}
	if !anyType && dtypeClass(got.DataType) != dtypeClass(want.DataType) {
		t.Errorf("%s: element type %s, TF.js %s", what, got.DataType, want.DataType)
	}
	g, w := asFloat64(t, got), asFloat64(t, want)
	bad := 0
	for i := range w {
		ok := math.Abs(g[i]-w[i]) <= tol*(1+math.Abs(w[i]))
		if math.IsNaN(w[i]) || math.IsNaN(g[i]) {
			ok = math.IsNaN(w[i]) && math.IsNaN(g[i])
		} else if math.IsInf(w[i], 0) || math.IsInf(g[i], 0) {
			ok = g[i] == w[i]
		}
		if !ok {
			if bad < 4 {
				t.Errorf("%s[%d] = %g, TF.js %g", what, i, g[i], w[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from TF.js (tol %g)", what, bad, len(w), tol)
	}
}

// rowGraph builds row r alone.
func rowGraph(r opRow) *gm {
	g := newGM(r.name)
	r.build(g)
	return g
}

// runTFJS runs the model at path in TF.js and returns its outputs by name.
func runTFJS(t *testing.T, env tfjsrt.Env, path string, feeds []*canonical.Tensor) (map[string]*canonical.Tensor, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var tps []*onnxpb.TensorProto
	for _, f := range feeds {
		tp, err := canonical.TensorToProto(f)
		if err != nil {
			t.Fatal(err)
		}
		tps = append(tps, tp)
	}
	res, err := tfjsrt.Run(ctx, env, path, tps)
	if err != nil {
		return nil, err
	}
	out := map[string]*canonical.Tensor{}
	for _, o := range res.Outputs {
		x, err := canonical.TensorFromProto(o)
		if err != nil {
			t.Fatal(err)
		}
		out[o.GetName()] = x
	}
	return out, nil
}

// TestOpsMatchTFJS runs every row of opRows in TF.js (all at once) and
// through the tfjs importer and the executor (row by row), and compares
// each output.
func TestOpsMatchTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	rows := opRows()
	if f := os.Getenv("ONNXCONV_OP_ROWS"); f != "" {
		var keep []opRow
		for _, r := range rows {
			if strings.Contains(r.name, f) {
				keep = append(keep, r)
			}
		}
		rows = keep
	}
	dir := t.TempDir()
	if d := os.Getenv("ONNXCONV_OP_DUMP"); d != "" {
		dir = d // keep the rows' models to debug them
	}
	all := newGM("")
	seen := map[string]bool{}
	var kernelRows []opRow
	for _, r := range rows {
		if seen[r.name] {
			t.Fatalf("two rows are named %s", r.name)
		}
		seen[r.name] = true
		if r.jsRef != "" {
			kernelRows = append(kernelRows, r)
			continue
		}
		all.merge(rowGraph(r))
	}
	want := map[string]*canonical.Tensor{}
	var err error
	if len(all.outs) > 0 {
		want, err = runTFJS(t, env, all.write(t, filepath.Join(dir, "all")), all.feeds)
	}
	if err == nil && len(kernelRows) > 0 {
		var kw map[string]*canonical.Tensor
		kw, err = runKernels(t, env, kernelRows)
		for k, v := range kw {
			want[k] = v
		}
	}
	if err != nil {
		// Find the rows TF.js refuses, one by one.
		var bad []string
		for _, r := range rows {
			if r.jsRef != "" {
				continue
			}
			g := rowGraph(r)
			if _, err := runTFJS(t, env, g.write(t, filepath.Join(dir, "tfjs_"+r.name)), g.feeds); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", r.name, err))
			}
		}
		t.Fatalf("TF.js cannot run the rows' model: %v\nrows TF.js refuses:\n%s", err, strings.Join(bad, "\n"))
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			g := rowGraph(r)
			p := g.write(t, filepath.Join(dir, r.name))
			res, err := tfjs.New().Import(context.Background(), p, nil)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			m := res.Model
			defer m.Close()
			feeds := map[string]*canonical.Tensor{}
			for _, f := range g.feeds {
				feeds[f.Name] = f
			}
			var ins []*canonical.Tensor
			for _, v := range m.Graph.Inputs {
				if f := feeds[v.Name]; f != nil {
					ins = append(ins, f)
				}
			}
			if len(ins) != len(g.feeds) {
				t.Fatalf("the import has inputs %v, the row feeds %d", m.Graph.Inputs, len(g.feeds))
			}
			got := runExecutor(t, m, ins)
			if len(got) != len(g.outs) {
				t.Fatalf("%d outputs, want %d", len(got), len(g.outs))
			}
			tol := r.tol
			if tol == 0 {
				tol = 1e-5
			}
			byName := map[string]*canonical.Tensor{}
			for i, o := range m.Graph.Outputs {
				byName[o.Name] = got[i]
			}
			for _, name := range g.outs {
				o := byName[name]
				if o == nil {
					t.Fatalf("the import has no output %s", name)
				}
				w := want[name]
				if w == nil {
					t.Fatalf("TF.js gave no output %s", name)
				}
				if r.check != nil {
					r.check(t, name, o, w)
					continue
				}
				compareValues(t, name, o, w, tol, r.anyType != "")
			}
		})
	}
}

// coveredElsewhere are mapped ops checked against TF.js by the model
// tests (TestEveryModelMatchesTFJS, TestControlFlowMatchesTFJS) rather
// than by a row: their fixtures are read here to find them.
func opsOfModel(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ModelTopology struct {
			Node []struct {
				Op string `json:"op"`
			} `json:"node"`
			Library struct {
				Function []struct {
					NodeDef []struct {
						Op string `json:"op"`
					} `json:"nodeDef"`
				} `json:"function"`
			} `json:"library"`
		} `json:"modelTopology"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ops := map[string]bool{}
	for _, n := range m.ModelTopology.Node {
		ops[n.Op] = true
	}
	for _, f := range m.ModelTopology.Library.Function {
		for _, n := range f.NodeDef {
			ops[n.Op] = true
		}
	}
	return ops
}

// tfjsDiffers are mapped ops whose TF.js 4.22 implementation departs from
// TF's op definition in a way no graph can check: the mapping follows TF.
func tfjsDiffersList() map[string]string {
	return map[string]string{
		"TensorListPopBack": "TF.js returns the popped tensor as output 0, where TF returns the list handle (the tensor is output 1)",
	}
}

// Every op of TF.js's op list that the mapping maps is checked against
// TF.js: by a row of the harness or by a graph-model fixture the model
// tests compare with TF.js.
func TestEveryMappedOpIsCheckedAgainstTFJS(t *testing.T) {
	covered := map[string]string{}
	for _, r := range opRows() {
		for _, op := range r.ops {
			covered[op] = "row " + r.name
		}
	}
	for _, f := range []string{"graph_slicing", "graph_create", "graph_image", "graph_nms", "graph_control", "graph_tf1_control", "graph_tf1_nms_loop", "graph_tensorlist", "graph_holes"} {
		for op := range opsOfModel(t, filepath.Join(fixtureDir, f, "model.json")) {
			if _, ok := covered[op]; !ok {
				covered[op] = "fixture " + f
			}
		}
	}
	tfjsDiffers := tfjsDiffersList()
	var missing []string
	mapped := 0
	for _, c := range tfops.TFJSCoverage() {
		if !c.Mapped {
			continue
		}
		mapped++
		if why, ok := tfjsDiffers[c.Op]; ok {
			t.Logf("%s is mapped with TF's semantics but not checked against TF.js: %s", c.Op, why)
			missing = append(missing, c.Op+" (TF.js differs)")
			continue
		}
		if _, ok := covered[c.Op]; !ok {
			missing = append(missing, c.Op)
		}
	}
	sort.Strings(missing)
	if len(missing) > len(tfjsDiffers) {
		t.Errorf("%d mapped ops have no check against TF.js: %s", len(missing), strings.Join(missing, ", "))
	}
	t.Logf("%d of %d TF.js ops mapped, %d checked against TF.js", mapped, len(tfops.TFJSOps()), mapped-len(missing))
}

func canonicalBool(dims []int64, raw []byte) *canonical.Tensor {
	return canonical.NewTensor("", canonical.Bool, dims, raw)
}

// kernelScript runs each row's jsRef and answers its outputs as the
// runner does: {"rows": {name: [{dtype, shape, data}]}}.
const kernelScript = `'use strict';
const tf = require('@tensorflow/tfjs');
const toErr = (...a) => process.stderr.write(a.map(String).join(' ') + '\\n');
console.log = toErr; console.warn = toErr; console.info = toErr;
(async () => {
  await tf.setBackend('cpu');
  const rows = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const out = {};
  for (const [name, body] of Object.entries(rows)) {
    const ts = new Function('tf', body)(tf);
    out[name] = ts.map((x) => {
      const d = x.dataSync();
      const buf = x.dtype === 'bool' ? Buffer.from(Uint8Array.from(d)) : Buffer.from(d.buffer, d.byteOffset, d.byteLength);
      return { dtype: x.dtype, shape: x.shape, data: buf.toString('base64') };
    });
  }
  process.stdout.write(JSON.stringify({ rows: out }));
})().catch((e) => { process.stdout.write(JSON.stringify({ error: String(e && e.stack || e) })); });
`

// runKernels computes the jsRef rows with TF.js's kernels, by output name.
func runKernels(t *testing.T, env tfjsrt.Env, rows []opRow) (map[string]*canonical.Tensor, error) {
	t.Helper()
	req := map[string]string{}
	for _, r := range rows {
		req[r.name] = r.jsRef
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := node.Exec(ctx, node.Process{Node: env.Node, Args: []string{"-e", kernelScript}, Env: []string{"NODE_PATH=" + env.Modules, "NODE_OPTIONS="},
		Stdin: body, MaxStdout: 1 << 24, MaxStderr: 8 << 10})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Rows map[string][]struct {
			DType string  `json:"dtype"`
			Shape []int64 `json:"shape"`
			Data  string  `json:"data"`
		} `json:"rows"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(res.Stdout, &ans); err != nil {
		return nil, fmt.Errorf("TF.js kernels: %v (stderr %s)", err, res.Stderr)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("TF.js kernels: %s", ans.Error)
	}
	out := map[string]*canonical.Tensor{}
	for _, r := range rows {
		g := rowGraph(r)
		got := ans.Rows[r.name]
		if len(got) != len(g.outs) {
			return nil, fmt.Errorf("row %s: TF.js's kernels gave %d outputs, the row has %d", r.name, len(got), len(g.outs))
		}
		for i, w := range got {
			raw, err := base64.StdEncoding.DecodeString(w.Data)
			if err != nil {
				return nil, err
			}
			dt := map[string]canonical.DataType{"float32": canonical.Float, "int32": canonical.Int32, "bool": canonical.Bool}[w.DType]
			if dt == canonical.Undefined {
				return nil, fmt.Errorf("row %s: dtype %s", r.name, w.DType)
			}
			out[g.outs[i]] = canonical.NewTensor(g.outs[i], dt, w.Shape, raw)
		}
	}
	return out, nil
}
