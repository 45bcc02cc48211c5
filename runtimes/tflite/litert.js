// litert.js: runs one float TFLite model once with LiteRT.js
// (@litertjs/core), the maintained successor of tfjs-tflite, for onnxconv's
// runtimes/tflite as a second build (a cross-check on float models).
// Embedded in the Go package and started as
//
//   node -e "$(cat ../node/frame.js litert.js)" -- NODE_MODULES_DIR
//
// The protocol is runner.js's (length-prefixed JSON header, raw tensor
// bytes). Under Node the package needs shims: `self`, `location`,
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

const TYPED = { float32: Float32Array, int32: Int32Array };

function shapeOf(d) {
  const s = d.shape || [];
  return Array.isArray(s) ? s.slice() : Object.keys(s).sort((a, b) => a - b).map((k) => s[k]);
}

async function main() {
  const modules = process.argv[process.argv.length - 1];
  const pkgDir = path.join(modules, PKG);
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  const build = PKG + ' ' + version + ' (LiteRT.js, WebAssembly compat build, XNNPACK)';

  const request = frame.readRequest();
  if (!request) return;
  const { head, take } = request;
  const model = take(head.model_bytes);
  const inputs = head.inputs.map((i) => Object.assign({}, i, { data: take(i.bytes) }));

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
  const consoleError = console.error;
  console.error = (...a) => logs.push(a.map(String).join(' '));
  let lrt;
  try {
    lrt = await import(url.pathToFileURL(path.join(pkgDir, 'dist', 'index.js')).href);
    await lrt.loadLiteRt(path.join(wasmDir, WASM + '.js'));
  } finally {
    console.error = consoleError;
  }
  const errors = () => logs.filter((l) => / ERROR|^ERROR|Error:/.test(l) && !/WebGPU|navigator/.test(l));
  let cm;
  try {
    cm = await lrt.loadAndCompile(new Uint8Array(model), { accelerator: 'wasm' });
  } catch (e) {
    // The interpreter's own reason first (e.g. "Variable tensors not yet supported.").
    return fail('load', errors().map((l) => l.replace(/^.*?\] /, '')).concat([String(e && e.message || e)]).join('\n'));
  }
  const mins = cm.getInputDetails();
  const infos = mins.map((d) => ({ name: d.name, dtype: d.dtype, shape: shapeOf(d) }));
  if (inputs.length !== mins.length) {
    return fail('inputs', `${inputs.length} inputs given, the model takes ${mins.length}`, { inputs: infos });
  }
  const tensors = new Array(mins.length);
  for (let k = 0; k < inputs.length; k++) {
    const given = inputs[k];
    // By name only when every input name is set and distinct, else by
    // position (unnamed tensors of keyword models).
    const named = infos.every((d) => d.name) && new Set(infos.map((d) => d.name)).size === infos.length;
    const j = given.name && named ? infos.findIndex((d) => d.name === given.name) : k;
    if (j < 0) return fail('inputs', `no model input is named "${given.name}"`, { inputs: infos });
    const want = infos[j];
    if (want.dtype !== given.dtype || !TYPED[given.dtype]) {
      return fail('inputs', `input "${want.name}": element type ${given.dtype}, the model takes ${want.dtype} (${PKG} runs float32 and int32 tensors)`, { inputs: infos });
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
  }
  if (!Array.isArray(outs)) outs = Object.values(outs);
  const details = cm.getOutputDetails();
  const res = [];
  const blobs = [];
  for (let i = 0; i < outs.length; i++) {
    const a = outs[i].toTypedArray();
    const b = Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    res.push({ name: details[i].name, dtype: outs[i].type.dtype, shape: outs[i].type.layout.dimensions.slice(), bytes: b.length });
    blobs.push(b);
  }
  reply({ ok: true, build, version, inputs: infos, outputs: res }, blobs);
}

main().catch((e) => fail('internal', e && e.stack ? e.stack : e));
