package tfjs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// cpuScript runs a TF.js model (model.json and the weight files of its
// manifest; a graph model with executeAsync, a layers model with predict)
// on TF.js's pure JavaScript CPU backend, the backend the runtime ran
// everything on before the WASM backend: it reads {"model", "inputs":
// {name: {shape, data (base64 float32)}}} on stdin and answers
// {"backend", "outputs": [{shape, data}]}.
const cpuScript = `'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');
const toErr = (...a) => process.stderr.write(a.map(String).join(' ') + '\\n');
console.log = toErr; console.warn = toErr; console.info = toErr;
(async () => {
  await tf.setBackend('cpu');
  const req = JSON.parse(fs.readFileSync(0, 'utf8'));
  const json = JSON.parse(fs.readFileSync(req.model, 'utf8'));
  const specs = [], bufs = [];
  for (const g of json.weightsManifest) {
    for (const p of g.paths) bufs.push(fs.readFileSync(path.join(path.dirname(req.model), p)));
    specs.push(...g.weights);
  }
  const all = Buffer.concat(bufs);
  const art = { modelTopology: json.modelTopology, signature: json.signature, weightSpecs: specs,
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) };
  const feeds = {};
  for (const [n, v] of Object.entries(req.inputs)) {
    const b = Buffer.from(v.data, 'base64');
    feeds[n] = tf.tensor(new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), v.shape, 'float32');
  }
  let res;
  if (json.format === 'layers-model') {
    const model = await tf.loadLayersModel(tf.io.fromMemory(art));
    res = model.predict(Object.values(feeds));
  } else {
    const model = await tf.loadGraphModel(tf.io.fromMemory(art));
    res = await model.executeAsync(feeds, model.outputs.map((o) => o.name));
  }
  if (!Array.isArray(res)) res = [res];
  process.stdout.write(JSON.stringify({ backend: tf.getBackend(), outputs: res.map((x) => ({ shape: x.shape,
    data: Array.from(x.dataSync()) })) }));
})().catch((e) => { process.stdout.write(JSON.stringify({ error: String(e && e.stack || e) })); });
`

// TestWASMBackend: the runtime runs a model on TF.js's WASM backend (its
// SIMD build) with the op it lacks (Einsum) on the CPU backend, names
// that op, and computes what TF.js's CPU backend alone computes from the
// same file: every output of graph_create (Einsum, TopKV2, MirrorPad,
// Where, SelectV2, Range, Fill, Shape) within 1e-5 of its largest
// magnitude.
func TestWASMBackend(t *testing.T) {
	e := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model, err := filepath.Abs(filepath.Join(testpaths.RepoRoot(t), "fixtures", "tfjs", "graph_create", "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float32, 2*4*5)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i)*0.7 + 0.1))
	}
	in := f32("x", []int64{2, 4, 5}, xs...)
	s, err := Open(ctx, e, model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != "wasm" || s.WASMBuild != "tfjs-backend-wasm-simd.wasm" || !slices.Equal(res.CPUOps, []string{"Einsum"}) {
		t.Errorf("backend %q, build %q, ops on the CPU backend %q; want wasm, its SIMD build, Einsum", res.Backend, s.WASMBuild, res.CPUOps)
	}
	if n := s.Note(); !strings.Contains(n, "on the wasm backend (tfjs-backend-wasm-simd.wasm); ops run on the CPU backend: Einsum") {
		t.Errorf("Note() = %q", n)
	}

	matchesCPUBackend(t, ctx, e, model, in, res.Outputs, 8)
}

// matchesCPUBackend runs model on TF.js's CPU backend alone (cpuScript) on
// the input in and checks that got, the runtime's outputs, has its outputs
// (at least min of them) within 1e-5 of each one's largest magnitude.
func matchesCPUBackend(t *testing.T, ctx context.Context, e Env, model string, in *onnxpb.TensorProto, got []*onnxpb.TensorProto, min int) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": model, "inputs": map[string]any{
		in.GetName(): map[string]any{"shape": in.GetDims(), "data": base64.StdEncoding.EncodeToString(in.GetRawData())}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.Exec(ctx, node.Process{Node: e.Node, Args: []string{"-e", cpuScript}, Env: []string{"NODE_PATH=" + e.Modules, "NODE_OPTIONS="},
		Stdin: body, MaxStdout: 1 << 24, MaxStderr: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var cpu struct {
		Backend string `json:"backend"`
		Outputs []struct {
			Shape []int64   `json:"shape"`
			Data  []float64 `json:"data"`
		} `json:"outputs"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out.Stdout, &cpu); err != nil || cpu.Error != "" || cpu.Backend != "cpu" {
		t.Fatalf("TF.js on the CPU backend: %v %s (backend %q; stderr %s)", err, cpu.Error, cpu.Backend, out.Stderr)
	}
	if len(cpu.Outputs) != len(got) || len(got) < min {
		t.Fatalf("%d outputs on the WASM backend, %d on the CPU backend", len(got), len(cpu.Outputs))
	}
	for i, w := range cpu.Outputs {
		o := got[i]
		if fmt.Sprint(o.GetDims()) != fmt.Sprint(w.Shape) {
			t.Errorf("output %q: shape %v, the CPU backend's %v", o.GetName(), o.GetDims(), w.Shape)
			continue
		}
		ct, err := canonical.TensorFromProto(o)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ct.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		scale, worst := 1e-30, 0.0
		for j := range w.Data {
			if math.IsNaN(g[j]) || math.IsInf(g[j], 0) || math.IsNaN(w.Data[j]) || math.IsInf(w.Data[j], 0) {
				t.Fatalf("output %q value %d: %g on the WASM backend, %g on the CPU backend: want finite values", o.GetName(), j, g[j], w.Data[j])
			}
			scale = math.Max(scale, math.Abs(w.Data[j]))
			worst = math.Max(worst, math.Abs(g[j]-w.Data[j]))
		}
		if worst > 1e-5*scale {
			t.Errorf("output %q: the WASM backend differs from the CPU backend by %g (max |y| %g)", o.GetName(), worst, scale)
		}
	}
}

// TestWASMBackendInception: an Inception-v3-shaped layers model (313
// layers: 94 convolutions with batch norms, max and average pools,
// concatenations, a softmax; made by fixtures/tfjs/make_inception.js at a
// tenth of its width and a 75x75 input) runs wholly on the WASM backend
// (no op on the CPU backend) and computes what the CPU backend alone
// computes.
func TestWASMBackendInception(t *testing.T) {
	e := env(t)
	if testing.Short() {
		t.Skip("builds a 313-layer model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	script := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tfjs", "make_inception.js")
	if _, err := node.Exec(ctx, node.Process{Node: e.Node, Args: []string{script, dir, "0.1", "75"}, Env: []string{"NODE_PATH=" + e.Modules, "NODE_OPTIONS="},
		MaxStdout: 1 << 16, MaxStderr: 1 << 16}); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model.json")
	xs := make([]float32, 75*75*3)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i)*0.37 + 0.2))
	}
	in := f32("input_1", []int64{1, 75, 75, 3}, xs...)
	s, err := Open(ctx, e, model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != "wasm" || len(res.CPUOps) != 0 || res.Kind != "layers-model" {
		t.Errorf("backend %q, ops on the CPU backend %q, kind %q; want every op on the WASM backend", res.Backend, res.CPUOps, res.Kind)
	}
	matchesCPUBackend(t, ctx, e, model, in, res.Outputs, 1)
	// The random weights keep the activations alive through the 94
	// convolutions: the softmax is not uniform.
	p := values(res.Outputs[0])
	if lo, hi := slices.Min(p), slices.Max(p); len(p) != 1000 || hi < 2*lo {
		t.Errorf("softmax of %d values in [%g, %g]: want 1000 values, not all alike", len(p), lo, hi)
	}
}
