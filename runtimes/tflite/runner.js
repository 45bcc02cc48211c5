// runner.js: runs one TFLite model once with Google's TFLite interpreter
// compiled to WebAssembly (@tensorflow/tfjs-tflite), for onnxconv's
// runtimes/tflite. Embedded in the Go package and started as
//
//   node -e "$(cat runner.js)" -- NODE_MODULES_DIR
//
// Protocol, on stdin then stdout: a 4-byte little-endian length, a JSON
// header of that length, then raw little-endian tensor bytes in header order.
//   request:  {"model_bytes": N, "threads": T,
//              "inputs": [{"name", "dtype", "shape", "bytes"}]}  model, inputs
//   response: {"ok": true, "build", "version",
//              "outputs": [{"name", "dtype", "shape", "bytes"}]}   outputs
//         or  {"ok": false, "kind", "error", "inputs"?: [...]}
// Nothing in the model is executed as JavaScript: the model bytes go to the
// interpreter's flatbuffer reader only.
'use strict';
const fs = require('fs');
const path = require('path');

const PKG = '@tensorflow/tfjs-tflite';

function readAll(fd) {
  const chunks = [];
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    let n;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      if (e.code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}

function reply(header, blobs) {
  const h = Buffer.from(JSON.stringify(header), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(h.length, 0);
  const parts = [len, h].concat(blobs || []);
  let out = Buffer.concat(parts);
  let off = 0;
  while (off < out.length) {
    off += fs.writeSync(1, out, off, out.length - off);
  }
}

function fail(kind, error, extra) {
  reply(Object.assign({ ok: false, kind, error: String(error) }, extra || {}));
}

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
  int16: Int16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, bool: Uint8Array,
};

function info(t) {
  return { name: t.name, dtype: t.dataType, shape: t.shape === '' ? [] : String(t.shape).split(',').map(Number) };
}

async function main() {
  const modules = process.argv[process.argv.length - 1];
  const pkgDir = path.join(modules, PKG);
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  const build = PKG + ' ' + version + ' (TFLite interpreter, WebAssembly SIMD, XNNPACK)';

  const req = readAll(0);
  if (req.length < 4) return fail('protocol', 'short request');
  const hlen = req.readUInt32LE(0);
  if (hlen > req.length - 4) return fail('protocol', 'truncated request header');
  const head = JSON.parse(req.subarray(4, 4 + hlen).toString('utf8'));
  let off = 4 + hlen;
  const take = (n) => {
    if (!(n >= 0) || off + n > req.length) throw new Error('truncated request body');
    const b = req.subarray(off, off + n);
    off += n;
    return b;
  };
  const model = take(head.model_bytes);
  const inputs = head.inputs.map((i) => Object.assign({}, i, { data: take(i.bytes) }));

  const wasmDir = path.join(pkgDir, 'wasm');
  const factory = loadFactory(wasmDir);
  const wasmBinary = fs.readFileSync(path.join(wasmDir, 'tflite_web_api_cc_simd.wasm'));
  const logs = [];
  const mod = await factory({ wasmBinary, print: () => {}, printErr: (s) => logs.push(String(s)) });

  const ptr = mod._malloc(model.length);
  mod.HEAPU8.set(model, ptr);
  const threads = head.threads > 0 ? head.threads : 1;
  const st = mod.TFLiteWebModelRunner.CreateFromBufferAndOptions(ptr, model.length,
    { numThreads: threads, enableProfiling: false, maxProfilingBufferEntries: 1024 });
  if (!st.ok()) {
    const msg = st.errorMessage();
    return fail('load', [msg].concat(logs.filter((l) => !l.startsWith('INFO:'))).join('\n'));
  }
  const runner = st.value();
  const mins = vecToArray(runner.GetInputs());
  const infos = mins.map(info);
  const byName = new Map();
  mins.forEach((t) => byName.set(t.name, t));
  if (inputs.length !== mins.length) {
    return fail('inputs', `${inputs.length} inputs given, the model takes ${mins.length}`, { inputs: infos });
  }
  for (let k = 0; k < inputs.length; k++) {
    const given = inputs[k];
    const t = given.name ? byName.get(given.name) : mins[k];
    if (!t) return fail('inputs', `no model input is named "${given.name}"`, { inputs: infos });
    const want = info(t);
    if (want.dtype !== given.dtype) {
      return fail('inputs', `input "${t.name}": element type ${given.dtype}, the model takes ${want.dtype}`, { inputs: infos });
    }
    if (want.shape.length !== given.shape.length || want.shape.some((d, j) => d !== given.shape[j])) {
      return fail('shape', `input "${t.name}": shape [${given.shape}], the interpreter holds [${want.shape}] ` +
        `(${PKG} cannot resize inputs, so a dynamic (-1) dim runs at the size of the model's static shape)`, { inputs: infos });
    }
    const view = t.data();
    const src = new Uint8Array(given.data.buffer, given.data.byteOffset, given.data.length);
    const dst = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    if (dst.length !== src.length) {
      return fail('inputs', `input "${t.name}": ${src.length} bytes given, the interpreter holds ${dst.length}`, { inputs: infos });
    }
    dst.set(src);
  }
  if (!runner.Infer()) {
    return fail('run', ['Infer() failed'].concat(logs.filter((l) => !l.startsWith('INFO:'))).join('\n'));
  }
  // Outputs are read after Infer: their shapes may depend on the inputs.
  const mouts = vecToArray(runner.GetOutputs());
  const outs = [];
  const blobs = [];
  for (const t of mouts) {
    const i = info(t);
    const view = t.data();
    if (!TYPED[i.dtype]) {
      return fail('output-type', `output "${i.name}": the interpreter's runner of ${PKG} ${version} does not expose this element type (${i.dtype}; int64, string and complex outputs are not readable through it)`);
    }
    const b = Buffer.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    i.bytes = b.length;
    outs.push(i);
    blobs.push(b);
  }
  reply({ ok: true, build, version, inputs: infos, outputs: outs }, blobs);
}

main().catch((e) => fail('internal', e && e.stack ? e.stack : e));
