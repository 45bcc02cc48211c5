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

// cpuScript runs a TF.js graph model (model.json and the weight files of
// its manifest) with executeAsync on TF.js's pure JavaScript CPU backend,
// the backend the runtime ran everything on before the WASM backend: it
// reads {"model", "inputs": {name: {shape, data (base64 float32)}}} on
// stdin and answers {"outputs": [{shape, data}]}.
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
  const model = await tf.loadGraphModel(tf.io.fromMemory({ modelTopology: json.modelTopology, signature: json.signature, weightSpecs: specs,
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) }));
  const feeds = {};
  for (const [n, v] of Object.entries(req.inputs)) {
    const b = Buffer.from(v.data, 'base64');
    feeds[n] = tf.tensor(new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), v.shape, 'float32');
  }
  let res = await model.executeAsync(feeds, model.outputs.map((o) => o.name));
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

	body, err := json.Marshal(map[string]any{"model": model, "inputs": map[string]any{
		"x": map[string]any{"shape": in.GetDims(), "data": base64.StdEncoding.EncodeToString(in.GetRawData())}}})
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
	if len(cpu.Outputs) != len(res.Outputs) || len(res.Outputs) < 8 {
		t.Fatalf("%d outputs on the WASM backend, %d on the CPU backend", len(res.Outputs), len(cpu.Outputs))
	}
	for i, w := range cpu.Outputs {
		o := res.Outputs[i]
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
			scale = math.Max(scale, math.Abs(w.Data[j]))
			worst = math.Max(worst, math.Abs(g[j]-w.Data[j]))
		}
		if worst > 1e-5*scale {
			t.Errorf("output %q: the WASM backend differs from the CPU backend by %g (max |y| %g)", o.GetName(), worst, scale)
		}
	}
}
