// runner.js: loads one TFLite model once and runs it on every sample it is
// sent, with Google's TFLite interpreter compiled to WebAssembly
// (@tensorflow/tfjs-tflite), for onnxconv's runtimes/tflite. Embedded in the
// Go package and started as
//
//   node -e "$(cat ../node/frame.js runner.js)" -- NODE_MODULES_DIR
//
// Protocol, a stream of requests on stdin, one answer each on stdout: a
// 4-byte little-endian length, a JSON header of that length, then raw
// little-endian bytes in header order ("sizes" lists the request's).
//   load:     {"op": "load", "threads": T,
//              "types": {"<tensor index>": "int64", ...}}           model
//             (types: the element types the model's flatbuffer gives the
//             main subgraph's inputs and outputs)
//   answer:   {"ok": true, "build", "version", "inputs": [...]}
//   run:      {"op": "run", "inputs": [{"name", "dtype", "shape", "bytes"}]}  inputs
//   answer:   {"ok": true, "outputs": [{"name", "dtype", "shape", "bytes"}]}   outputs
//         or  {"ok": false, "kind", "error", "inputs"?: [...]}
// A later load replaces the model in the same process (runtimes/tflite's
// Pool). The process ends when stdin is closed (or after a failed first
// load).
// Nothing in the model is executed as JavaScript: the model bytes go to the
// interpreter's flatbuffer reader only.
//
// Element types the runner's tensor info does not expose (it says "unknown"
// and data() gives no view: int64, uint16, uint64, float16) are read and
// written in the WebAssembly heap directly: the C++ TensorInfo object that
// the embind handle points at holds the tensor's data pointer; its word
// offset is found on the tensors whose views the runner does give (see
// dataPointerWord), and the byte count is the shape's element count times
// the element size of the type the flatbuffer names.
'use strict';
const fs = require('fs');
const path = require('path');

const PKG = '@tensorflow/tfjs-tflite';

// The framed protocol (runtimes/node's frame.js, put before this script).
const { reply, fail } = frame;

// loadFactory evaluates the Emscripten loader of the non-threaded SIMD build
// (the threaded ones need Web Workers) and returns its module factory.
function loadFactory(wasmDir) {
  const file = path.join(wasmDir, 'tflite_web_api_cc_simd.js');
  const src = fs.readFileSync(file, 'utf8');
  const fn = new Function('require', 'module', 'exports', '__dirname', '__filename',
    src + '\nreturn tflite_web_api_ModuleFactory;');
  return fn(require, { exports: {} }, {}, wasmDir, file);
}

function vecToArray(v) {
  const a = [];
  for (let i = 0; i < v.size(); i++) a.push(v.get(i));
  v.delete();
  return a;
}

const TYPED = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, int32: Int32Array, uint32: Uint32Array, bool: Uint8Array,
};

// Element sizes of the types read from the heap when the runner gives no view.
const HEAP_TYPES = { int64: 8, uint64: 8, uint16: 2, float16: 2 };

// The tfjs-tflite build this script was measured on keeps the data pointer in
// word 7 of its TensorInfo (id, name, shape, data, size, dataType).
const MEASURED_VERSION = '0.0.1-alpha.10';
const MEASURED_WORD = 7;

// dataPointerWord finds which 32-bit word of the embind TensorInfo object
// holds the tensor's data pointer: the one that equals data().byteOffset on
// every tensor whose view the runner exposes. -1 when no word fits.
function dataPointerWord(mod, tensors, version) {
  let cands = null;
  for (const t of tensors) {
    const v = t.data();
    if (!v || !v.byteLength) continue;
    const base = t.$$.ptr >>> 2;
    const here = [];
    for (let k = 1; k < 16; k++) if (mod.HEAPU32[base + k] === v.byteOffset) here.push(k);
    cands = cands === null ? here : cands.filter((k) => here.includes(k));
  }
  if (cands === null) return version === MEASURED_VERSION ? MEASURED_WORD : -1;
  return cands.length === 1 ? cands[0] : -1;
}

// heapView gives a tensor of a type the runner does not expose as bytes in
// the heap, or an error string.
function heapView(mod, t, dtype, word) {
  const size = HEAP_TYPES[dtype];
  if (!size) return `element type ${dtype} (string, complex and resource tensors are not readable through it)`;
  if (word < 0) return `element type ${dtype}: the tensor's data pointer could not be located in the runner's tensor info`;
  const shape = info(t).shape;
  const n = shape.reduce((a, d) => a * d, 1) * size;
  const ptr = mod.HEAPU32[(t.$$.ptr >>> 2) + word];
  if (n === 0) return new Uint8Array(0);
  if (!ptr || ptr + n > mod.HEAPU8.length) return `element type ${dtype}: data pointer ${ptr} for ${n} bytes is outside the heap`;
  return new Uint8Array(mod.HEAPU8.buffer, ptr, n);
}

function info(t) {
  return { name: t.name, dtype: t.dataType, shape: t.shape === '' ? [] : String(t.shape).split(',').map(Number) };
}

async function main() {
  const modules = process.argv[process.argv.length - 1];
  const pkgDir = path.join(modules, PKG);
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  const build = PKG + ' ' + version + ' (TFLite interpreter, WebAssembly SIMD, XNNPACK)';

  const next = frame.stream();
  const load = await next();
  if (!load) return;
  if (load.head.op !== 'load') return fail('protocol', `first request is ${load.head.op}, not load`);

  const wasmDir = path.join(pkgDir, 'wasm');
  const factory = loadFactory(wasmDir);
  const wasmBinary = fs.readFileSync(path.join(wasmDir, 'tflite_web_api_cc_simd.wasm'));
  const logs = [];
  const mod = await factory({ wasmBinary, print: () => {}, printErr: (s) => logs.push(String(s)) });

  // The loaded model (its bytes kept in the WebAssembly heap): loadModel
  // replaces it (a later load request reuses the process and its module).
  let model, ptr = 0, threads = 1, types = {}, stateful = false, runs = 0;
  // typeOf is the tensor's element type: the runner's, or the flatbuffer's
  // where the runner says "unknown".
  const typeOf = (t) => (t.dataType === 'unknown' && types[String(t.id)]) || t.dataType;
  // create makes an interpreter on the model's bytes; it returns an error
  // message or undefined.
  let runner, mins, infos, inWord, byName;
  function create() {
    const st = mod.TFLiteWebModelRunner.CreateFromBufferAndOptions(ptr, model.length,
      { numThreads: threads, enableProfiling: false, maxProfilingBufferEntries: 1024 });
    if (!st.ok()) {
      return [st.errorMessage()].concat(logs.filter((l) => !l.startsWith('INFO:'))).join('\n');
    }
    runner = st.value();
    mins = vecToArray(runner.GetInputs());
    infos = mins.map((t) => Object.assign(info(t), { dtype: typeOf(t) }));
    inWord = dataPointerWord(mod, mins, version);
    byName = new Map();
    mins.forEach((t) => byName.set(t.name, t));
    return undefined;
  }
  // loadModel answers a load request: true when the model loaded.
  function loadModel(req) {
    if (runner && typeof runner.delete === 'function') runner.delete();
    runner = undefined;
    if (ptr) mod._free(ptr);
    logs.length = 0;
    model = req.take(req.head.sizes[0]);
    ptr = mod._malloc(model.length);
    mod.HEAPU8.set(model, ptr);
    threads = req.head.threads > 0 ? req.head.threads : 1;
    types = req.head.types || {};
    // A stateful model (variable tensors: SVDF state, resource variables)
    // computes every sample from its initial state, as one inference of
    // the converted model does: each run after the first gets a fresh
    // interpreter on the bytes already loaded.
    stateful = !!req.head.stateful;
    runs = 0;
    const loadErr = create();
    if (loadErr !== undefined) {
      runner = undefined;
      fail('load', loadErr);
      return false;
    }
    reply({ ok: true, build, version, inputs: infos });
    return true;
  }
  if (!loadModel(load)) return;

  for (;;) {
    const req = await next();
    if (!req) return;
    if (req.head.op === 'load') {
      loadModel(req);
      continue;
    }
    if (req.head.op !== 'run') {
      fail('protocol', `request ${req.head.op}: want run or load`);
      continue;
    }
    if (!runner && !(stateful && runs > 0)) {
      fail('protocol', 'run before a model is loaded');
      continue;
    }
    const inputs = req.head.inputs.map((i, k) => Object.assign({}, i, { data: req.take(req.head.sizes[k]) }));
    if (stateful && runs > 0) {
      if (runner && typeof runner.delete === 'function') runner.delete();
      runner = undefined;
      const err = create();
      if (err !== undefined) {
        fail('load', err);
        continue;
      }
    }
    runs++;
    runOnce(inputs);
  }

  // runOnce sets the inputs, runs the interpreter and answers.
  function runOnce(inputs) {
    if (inputs.length !== mins.length) {
      return fail('inputs', `${inputs.length} inputs given, the model takes ${mins.length}`, { inputs: infos });
    }
    for (let k = 0; k < inputs.length; k++) {
      const given = inputs[k];
      const t = given.name ? byName.get(given.name) : mins[k];
      if (!t) return fail('inputs', `no model input is named "${given.name}"`, { inputs: infos });
      const want = Object.assign(info(t), { dtype: typeOf(t) });
      if (want.dtype !== given.dtype) {
        return fail('inputs', `input "${t.name}": element type ${given.dtype}, the model takes ${want.dtype}`, { inputs: infos });
      }
      if (want.shape.length !== given.shape.length || want.shape.some((d, j) => d !== given.shape[j])) {
        return fail('shape', `input "${t.name}": shape [${given.shape}], the interpreter holds [${want.shape}] ` +
          `(${PKG} cannot resize inputs, so a dynamic (-1) dim runs at the size of the model's static shape)`, { inputs: infos });
      }
      let dst;
      if (t.dataType === 'unknown') {
        dst = heapView(mod, t, want.dtype, inWord);
        if (typeof dst === 'string') return fail('output-type', `input "${t.name}": ${dst}`, { inputs: infos });
      } else {
        const view = t.data();
        dst = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      }
      const src = new Uint8Array(given.data.buffer, given.data.byteOffset, given.data.length);
      if (dst.length !== src.length) {
        return fail('inputs', `input "${t.name}": ${src.length} bytes given, the interpreter holds ${dst.length}`, { inputs: infos });
      }
      dst.set(src);
    }
    logs.length = 0;
    if (!runner.Infer()) {
      return fail('run', ['Infer() failed'].concat(logs.filter((l) => !l.startsWith('INFO:'))).join('\n'));
    }
    // Outputs are read after Infer: their shapes may depend on the inputs.
    const mouts = vecToArray(runner.GetOutputs());
    const outWord = dataPointerWord(mod, mouts.concat(vecToArray(runner.GetInputs())), version);
    const outs = [];
    const blobs = [];
    for (const t of mouts) {
      const i = Object.assign(info(t), { dtype: typeOf(t) });
      let bytes;
      if (t.dataType === 'unknown') {
        bytes = heapView(mod, t, i.dtype, outWord);
        if (typeof bytes === 'string') {
          return fail('output-type', `output "${i.name}": the interpreter's runner of ${PKG} ${version} does not expose this ${bytes}`);
        }
      } else if (!TYPED[i.dtype]) {
        return fail('output-type', `output "${i.name}": the interpreter's runner of ${PKG} ${version} does not expose this element type (${i.dtype}; string and complex outputs are not readable through it)`);
      } else {
        const view = t.data();
        bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      }
      const b = Buffer.from(bytes);
      i.bytes = b.length;
      outs.push(i);
      blobs.push(b);
    }
    return reply({ ok: true, outputs: outs }, blobs);
  }
}

main().catch(frame.failed);
