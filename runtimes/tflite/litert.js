// litert.js: loads one TFLite model once and runs it on every sample it is
// sent, with LiteRT.js (@litertjs/core), the maintained successor of
// tfjs-tflite, for onnxconv's runtimes/tflite: the first of its two
// interpreters (runner.js, tfjs-tflite, is the second). Embedded in the Go
// package and started as
//
//   node -e "$(cat ../node/frame.js litert.js)" -- NODE_MODULES_DIR
//
// The protocol is runner.js's: a stream of requests on stdin, one answer
// each on stdout (length-prefixed JSON header, raw tensor bytes):
//   load:   {"op": "load", "threads": T,
//            "io": {"in", "in_keys", "out", "out_keys"}}  model
//           (io: the main subgraph's input and output tensor names and
//           their signature keys, in order: LiteRT.js names a model's
//           inputs and outputs by signature key and in the signature's
//           order, this script by tensor name and in the subgraph's order)
//   answer: {"ok": true, "build", "version", "inputs": [...]}
//   run:    {"op": "run", "inputs": [{"name", "dtype", "shape", "bytes"}]}  inputs
//   answer: {"ok": true, "outputs": [{"name", "dtype", "shape", "bytes"}]}   outputs
//       or  {"ok": false, "kind", "error", "inputs"?: [...]}
// A refused model (load) is answered with kind "load" and the
// interpreter's own reason ("Variable tensors not yet supported.",
// "Element type INT8 is not supported"), so that the Go side can hand the
// model to the other interpreter. A later load replaces the model in the
// same process (runtimes/tflite's Pool); a refused first load ends the
// process. The process ends when stdin is closed.
//
// Under Node the package needs shims: `self`, `location`,
// `require`/`__dirname` for its Emscripten loader, an `importScripts` that
// evaluates the loader from disk, `wasmBinary` passed in through
// `self.Module`, and the "compat" build (no relaxed SIMD: Node 20 compiles
// the default build only with --experimental-wasm-relaxed-simd). WebGPU is
// absent; the CPU (XNNPACK) accelerator runs the model.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const url = require('url');

const PKG = '@litertjs/core';
const WASM = 'litert_wasm_compat_internal';

// The framed protocol (runtimes/node's frame.js, put before this script).
const { reply, fail } = frame;

const TYPED = { float32: Float32Array, int32: Int32Array, uint8: Uint8Array };

function shapeOf(d) {
  const s = d.shape || [];
  return Array.isArray(s) ? s.slice() : Object.keys(s).sort((a, b) => a - b).map((k) => s[k]);
}

async function main() {
  const modules = process.argv[process.argv.length - 1];
  const pkgDir = path.join(modules, PKG);
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  const build = PKG + ' ' + version + ' (LiteRT.js, WebAssembly compat build, XNNPACK)';

  const next = frame.stream();
  const load = await next();
  if (!load) return;
  if (load.head.op !== 'load') return fail('protocol', `first request is ${load.head.op}, not load`);

  const wasmDir = path.join(pkgDir, 'wasm');
  const logs = [];
  globalThis.self = globalThis;
  globalThis.location = { href: url.pathToFileURL(wasmDir + path.sep).href };
  globalThis.__dirname = wasmDir;
  globalThis.__filename = path.join(wasmDir, WASM + '.js');
  globalThis.require = require;
  globalThis.importScripts = (u) => {
    const p = String(u).startsWith('file:') ? url.fileURLToPath(String(u)) : String(u);
    vm.runInThisContext(fs.readFileSync(p, 'utf8'), { filename: p });
  };
  globalThis.Module = {
    wasmBinary: fs.readFileSync(path.join(wasmDir, WASM + '.wasm')),
    print: () => {},
    printErr: (s) => logs.push(String(s)),
  };
  // The package reports its missing WebGPU device on console.error.
  console.error = (...a) => logs.push(a.map(String).join(' '));
  console.warn = console.error;
  console.log = console.error;
  const lrt = await import(url.pathToFileURL(path.join(pkgDir, 'dist', 'index.js')).href);
  await lrt.loadLiteRt(path.join(wasmDir, WASM + '.js'));
  const errors = () => logs.filter((l) => / ERROR|^ERROR|Error:/.test(l) && !/WebGPU|navigator/.test(l));
  // position finds a LiteRT.js tensor name (a signature key, or a tensor
  // name without a signature) among the subgraph's tensors: -1 when absent.
  const position = (name, names, keys) => {
    if (!name) return -1;
    const k = (keys || []).indexOf(name);
    return k >= 0 ? k : (names || []).indexOf(name);
  };
  // The loaded model: compileModel replaces it (a later load request
  // reuses the process and its WebAssembly module).
  let cm, io, mins, pos, infos, named;
  async function compileModel(req) {
    if (cm && typeof cm.delete === 'function') cm.delete();
    cm = undefined;
    logs.length = 0;
    const model = req.take(req.head.sizes[0]);
    try {
      cm = await lrt.loadAndCompile(new Uint8Array(model), { accelerator: 'wasm' });
    } catch (e) {
      cm = undefined;
      // The interpreter's own reason first (e.g. "Variable tensors not yet supported.").
      return fail('load', errors().map((l) => l.replace(/^.*?\] /, '')).concat([String(e && e.message || e)]).join('\n'));
    }
    io = req.head.io || {};
    mins = cm.getInputDetails();
    // pos[j]: the subgraph position of LiteRT.js's input j; LiteRT.js's own
    // order when the names do not give one position to each.
    pos = mins.map((d) => position(d.name, io.in, io.in_keys));
    if (pos.some((k, j) => k < 0 || pos.indexOf(k) !== j)) pos = mins.map((d, j) => j);
    infos = mins.map((d, j) => ({ name: (io.in && io.in[pos[j]]) || d.name, dtype: d.dtype, shape: shapeOf(d) }));
    // Inputs bind by tensor name only when every input name is set and
    // distinct, else by position in the subgraph (unnamed tensors of
    // keyword models).
    named = infos.every((d) => d.name) && new Set(infos.map((d) => d.name)).size === infos.length;
    return reply({ ok: true, build, version, inputs: pos.map((k, j) => j).sort((a, b) => pos[a] - pos[b]).map((j) => infos[j]) });
  }
  await compileModel(load);
  if (!cm) return;

  for (;;) {
    const req = await next();
    if (!req) return;
    if (req.head.op === 'load') {
      await compileModel(req);
      continue;
    }
    if (req.head.op !== 'run') {
      fail('protocol', `request ${req.head.op}: want run or load`);
      continue;
    }
    if (!cm) {
      fail('protocol', 'run before a model is loaded');
      continue;
    }
    const inputs = req.head.inputs.map((i, k) => Object.assign({}, i, { data: req.take(req.head.sizes[k]) }));
    logs.length = 0;
    await runOnce(inputs);
  }

  // runOnce sets the inputs, runs the model and answers.
  async function runOnce(inputs) {
    if (inputs.length !== mins.length) {
      return fail('inputs', `${inputs.length} inputs given, the model takes ${mins.length}`, { inputs: infos });
    }
    const tensors = new Array(mins.length);
    for (let k = 0; k < inputs.length; k++) {
      const given = inputs[k];
      const j = given.name && named ? infos.findIndex((d) => d.name === given.name) : pos.indexOf(k);
      if (j < 0) return fail('inputs', `no model input is named "${given.name}"`, { inputs: infos });
      const want = infos[j];
      if (want.dtype !== given.dtype || !TYPED[given.dtype]) {
        return fail('inputs', `input "${want.name}": element type ${given.dtype}, the model takes ${want.dtype} (${PKG} runs float32, int32 and uint8 tensors)`, { inputs: infos });
      }
      if (want.shape.length !== given.shape.length || want.shape.some((d, i) => d !== given.shape[i])) {
        return fail('shape', `input "${want.name}": shape [${given.shape}], the model holds [${want.shape}] (${PKG} cannot resize inputs)`, { inputs: infos });
      }
      const T = TYPED[given.dtype];
      const copy = new Uint8Array(given.data.length);
      copy.set(given.data);
      tensors[j] = new lrt.Tensor(new T(copy.buffer), want.shape);
    }
    let outs;
    try {
      outs = cm.run(tensors);
      if (outs && typeof outs.then === 'function') outs = await outs;
    } catch (e) {
      return fail('run', [String(e && e.message || e)].concat(errors()).join('\n'));
    } finally {
      tensors.forEach((t) => t && typeof t.delete === 'function' && t.delete());
    }
    if (!Array.isArray(outs)) outs = Object.values(outs);
    const details = cm.getOutputDetails();
    const res = [];
    let at = details.map((d) => position(d.name, io.out, io.out_keys));
    if (at.some((k, i) => k < 0 || at.indexOf(k) !== i)) at = details.map((d, i) => i);
    for (let i = 0; i < outs.length; i++) {
      const a = outs[i].toTypedArray();
      const b = Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      // Named by tensor name, in the subgraph's order.
      res.push({ at: at[i], name: (io.out && io.out[at[i]]) || details[i].name, dtype: outs[i].type.dtype,
        shape: outs[i].type.layout.dimensions.slice(), bytes: b.length, b });
      if (typeof outs[i].delete === 'function') outs[i].delete();
    }
    res.sort((x, y) => x.at - y.at);
    const blobs = res.map((o) => o.b);
    return reply({ ok: true, outputs: res.map((o) => ({ name: o.name, dtype: o.dtype, shape: o.shape, bytes: o.bytes })) }, blobs);
  }
}

main().catch(frame.failed);
