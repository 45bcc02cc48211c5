// runner.js: loads one ONNX model once into ONNX Runtime (npm's
// onnxruntime-node, its native library loaded by Node) and runs it on every
// sample it is sent, for onnxconv's runtimes/ortnode. Embedded in the Go
// package and started as
//
//   node -e "$(cat ../node/frame.js runner.js)" -- NODE_MODULES_DIR
//
// Protocol (runtimes/node's frame): a 4-byte little-endian length, a JSON
// header of that length, then raw bytes in header order ("sizes" lists the
// request's).
//   load:   {"op": "load", "path": MODEL, "threads": T}
//   answer: {"ok": true, "version", "inputs": [{name, dtype, shape}], "outputs": [...]}
//   run:    {"op": "run", "inputs": [{"name", "dtype", "shape", "bytes"}]}  inputs
//   answer: {"ok": true, "outputs": [{"name", "dtype", "shape", "bytes"}]}   outputs
//       or  {"ok": false, "kind", "error"}
// Tensor bytes are little-endian, as in an ONNX TensorProto's raw_data;
// string tensors are each element as a 4-byte little-endian length then
// its UTF-8 bytes. The process ends when stdin is closed (or after a failed
// load).
'use strict';
const fs = require('fs');
const path = require('path');

const PKG = 'onnxruntime-node';
const { reply, fail } = frame;

const TYPED = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array,
};

// ONNX's element types that onnxruntime-node names only by number.
const ONNX_TYPES = {
  14: 'complex64', 15: 'complex128', 16: 'bfloat16', 17: 'float8e4m3fn', 18: 'float8e4m3fnuz',
  19: 'float8e5m2', 20: 'float8e5m2fnuz', 21: 'uint4', 22: 'int4', 23: 'float4e2m1', 24: 'float8e8m0',
  25: 'uint2', 26: 'int2',
};

// oneLine joins an error's lines; a type onnxruntime-node names by number
// is named.
function oneLine(e) {
  const s = e && e.message ? e.message : String(e);
  return s.split('\n').map((l) => l.trim()).filter((l) => l).join(' ')
    .replace(/Unsupported data type: (\d+)/g, (m, n) => (ONNX_TYPES[n]
      ? `unsupported data type ${ONNX_TYPES[n]} (${n}) at a graph input or output: ${PKG} cannot pass it` : m));
}

function meta(m) {
  if (!m.isTensor) return { name: m.name, dtype: 'non-tensor', shape: [] };
  return { name: m.name, dtype: m.type, shape: m.shape.map((d) => (typeof d === 'number' ? d : -1)) };
}

// decodeStrings reads length-prefixed UTF-8 elements.
function decodeStrings(b, n) {
  const out = [];
  let off = 0;
  for (let i = 0; i < n; i++) {
    if (off + 4 > b.length) throw new Error('truncated string tensor');
    const len = b.readUInt32LE(off);
    off += 4;
    if (off + len > b.length) throw new Error('truncated string tensor');
    out.push(b.toString('utf8', off, off + len));
    off += len;
  }
  return out;
}

function encodeStrings(strs) {
  const parts = [];
  for (const s of strs) {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length, 0);
    parts.push(len, b);
  }
  return Buffer.concat(parts);
}

async function main() {
  const modules = process.argv[process.argv.length - 1];
  const ort = require(path.join(modules, PKG));
  const version = JSON.parse(fs.readFileSync(path.join(modules, PKG, 'package.json'), 'utf8')).version;

  const next = frame.stream();
  const load = await next();
  if (!load) return;
  if (load.head.op !== 'load') return fail('protocol', `first request is ${load.head.op}, not load`);
  const threads = load.head.threads > 0 ? load.head.threads : 1;
  let session;
  try {
    session = await ort.InferenceSession.create(load.head.path, {
      intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
      graphOptimizationLevel: load.head.unoptimized ? 'disabled' : 'all',
      // A large weight is not prepacked: the session would hold it twice
      // while packing (wire.go, prepackLimit).
      extra: load.head.noPrepack ? { session: { disable_prepacking: '1' } } : {},
    });
  } catch (e) {
    const msg = oneLine(e);
    return fail(/unsupported data type/.test(msg) ? 'type' : 'load', msg);
  }
  const inputs = session.inputMetadata.map(meta);
  const outputs = session.outputMetadata.map(meta);
  // onnxruntime-node 1.30 loads int4/uint4 graph inputs and outputs but
  // cannot pass them (an input is refused, an output aborts Node), nor
  // sequences, maps or optionals: refuse such a model now.
  for (const [what, list] of [['input', inputs], ['output', outputs]]) {
    for (const v of list) {
      if (v.dtype !== 'string' && !TYPED[v.dtype]) {
        return fail('type', `graph ${what} "${v.name}" is of type ${v.dtype}, which ${PKG} ${version} cannot pass ` +
          '(it passes tensors of float32/64, float16, int8-64, uint8-64, bool and string)');
      }
    }
  }
  reply({ ok: true, version: (ort.env.versions && ort.env.versions.node) || version, inputs, outputs });

  for (;;) {
    const req = await next();
    if (!req) return;
    if (req.head.op !== 'run') {
      fail('protocol', `request ${req.head.op}: want run`);
      continue;
    }
    const given = req.head.inputs.map((i, k) => Object.assign({}, i, { data: req.take(req.head.sizes[k]) }));
    await runOnce(given);
  }

  async function runOnce(given) {
    const feeds = {};
    for (const g of given) {
      if (!inputs.some((i) => i.name === g.name)) {
        return fail('inputs', `no model input is named "${g.name}" (the model takes ${inputs.map((i) => `"${i.name}"`).join(', ')})`);
      }
      const n = g.shape.reduce((a, d) => a * d, 1);
      let data;
      try {
        if (g.dtype === 'string') {
          data = decodeStrings(Buffer.from(g.data.buffer, g.data.byteOffset, g.data.length), n);
        } else {
          const T = TYPED[g.dtype];
          if (!T) return fail('type', `input "${g.name}": element type ${g.dtype} is not one onnxruntime-node takes`);
          // Copy into an aligned buffer of the element type.
          const buf = new ArrayBuffer(g.data.length);
          new Uint8Array(buf).set(g.data);
          data = new T(buf);
        }
        feeds[g.name] = new ort.Tensor(g.dtype, data, g.shape);
      } catch (e) {
        return fail('inputs', `input "${g.name}": ${oneLine(e)}`);
      }
    }
    let res;
    try {
      res = await session.run(feeds);
    } catch (e) {
      return fail('run', oneLine(e));
    }
    const outs = [];
    const blobs = [];
    for (const name of session.outputNames) {
      const t = res[name];
      if (!t || typeof t.type !== 'string') return fail('type', `output "${name}" is not a tensor (sequences, maps and optionals do not pass through onnxruntime-node)`);
      let b;
      if (t.type === 'string') {
        b = encodeStrings(t.data);
      } else if (TYPED[t.type]) {
        b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      } else {
        return fail('type', `output "${name}": element type ${t.type} is not readable through onnxruntime-node`);
      }
      outs.push({ name, dtype: t.type, shape: t.dims.map(Number), bytes: b.length });
      blobs.push(b);
    }
    return reply({ ok: true, outputs: outs }, blobs);
  }
}

main().catch(frame.failed);
