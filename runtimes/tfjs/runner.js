// runner.js: loads one TF.js model once and runs it on every sample it is
// sent, for onnxconv's tfjs runtime (runtimes/tfjs). Embedded in the Go
// package, put after runtimes/node's frame.js and started as
// `node runner.js` with NODE_PATH set to the node_modules folder holding
// @tensorflow/tfjs 4.22.0 (its pure JavaScript CPU backend).
//
// Protocol (runtimes/node's framed protocol, one answer per request):
//   load:   {"op": "load", "model": "/abs/model.json", "by_layer": true}
//           (by_layer: a Keras file the Go side exported: weights set layer by layer)
//   answer: {"ok": true, "kind": "layers-model"|"graph-model", "version": "4.22.0", "backend"}
//   run:    {"op": "run", "inputs": [{"name", "dtype": "float32"|"int32"|"bool", "shape"}]}  input bytes (LE)
//   answer: {"ok": true, "method": "predict"|"execute"|"executeAsync",
//            "outputs": [{"name", "dtype", "shape", "bytes"}]}                                  output bytes
//        or {"ok": false, "error": "..."}
// The process ends when stdin is closed (or after a failed load).
// The model only computes: weights are read from the files its manifest
// names, inside the model's folder; nothing the file holds is executed.
'use strict';
const fs = require('fs');
const path = require('path');

// Everything TF.js prints goes to stderr; stdout carries the answer only.
const toErr = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');
console.log = toErr; console.info = toErr; console.warn = toErr;

const { reply } = frame;

function inside(dir, p) {
  if (typeof p !== 'string' || p === '' || path.isAbsolute(p) || p.includes('://')) {
    throw new Error(`weight path ${JSON.stringify(p)} must be relative to the model's folder`);
  }
  const full = path.resolve(dir, p);
  const rel = path.relative(dir, full);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new Error(`weight path ${JSON.stringify(p)} leaves the model's folder`);
  }
  return full;
}

function artifacts(modelPath) {
  const dir = path.dirname(modelPath);
  const json = JSON.parse(fs.readFileSync(modelPath, 'utf8'));
  if (!json || typeof json !== 'object' || !json.modelTopology) {
    throw new Error(`${modelPath}: not a TF.js model.json (no modelTopology)`);
  }
  const specs = [];
  const bufs = [];
  for (const g of json.weightsManifest || []) {
    for (const p of g.paths || []) bufs.push(fs.readFileSync(inside(dir, p)));
    for (const w of g.weights || []) specs.push(w);
  }
  const all = Buffer.concat(bufs);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return {
    json,
    art: {
      modelTopology: json.modelTopology,
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy,
      weightSpecs: specs,
      weightData,
      signature: json.signature,
      userDefinedMetadata: json.userDefinedMetadata,
      modelInitializer: json.modelInitializer,
      trainingConfig: json.trainingConfig,
    },
  };
}

function toTensor(tf, t) {
  const b = t.data;
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  let vals;
  switch (t.dtype) {
    case 'float32': vals = new Float32Array(ab); break;
    case 'int32': vals = new Int32Array(ab); break;
    case 'bool': vals = new Uint8Array(ab); break;
    default: throw new Error(`input ${t.name}: dtype ${t.dtype} is not supported`);
  }
  return tf.tensor(vals, t.shape, t.dtype);
}

function fromTensor(name, x) {
  const d = x.dataSync();
  let buf;
  if (x.dtype === 'bool') buf = Buffer.from(Uint8Array.from(d));
  else buf = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  return { name, dtype: x.dtype, shape: x.shape, bytes: buf.length, buf };
}

// byLayer builds a layers model from a Keras file exported by the Go side
// (runtimes/tfjs/keras.go): the topology with tf.models.modelFromJSON, then
// each top-level layer gets its weights with setWeights, in Keras's order
// (the manifest names them LAYER/INDEX), so the names TF.js would give
// the variables do not matter. Every weight of the file must find its
// layer, and every layer with weights must get all of them.
// withoutInitializers returns a copy of a Keras config whose
// *_initializer entries are Zeros: byLayer sets every weight right after
// building the model, so initializing them is wasted work (TF.js's
// Orthogonal initializer takes minutes on a long LSTM's recurrent kernel).
function withoutInitializers(cfg) {
  if (Array.isArray(cfg)) return cfg.map(withoutInitializers);
  if (!cfg || typeof cfg !== 'object') return cfg;
  const out = {};
  for (const [k, v] of Object.entries(cfg)) {
    out[k] = k.endsWith('_initializer') && v ? { class_name: 'Zeros', config: {} } : withoutInitializers(v);
  }
  return out;
}

// failingLayer names the first layer of a Keras config that TF.js cannot
// build on its own (keys converted as TF.js converts them, roughly), so an
// error from building the model (some TF.js errors are empty) can say
// which layer it came from.
function failingLayer(tf, topo) {
  const camel = (v) => {
    if (Array.isArray(v)) return v.map(camel);
    if (!v || typeof v !== 'object') return v;
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())] = camel(x);
    return o;
  };
  const cfg = topo && (topo.model_config || topo);
  const layers = (cfg && cfg.config && (cfg.config.layers || cfg.config)) || [];
  const map = tf.serialization.SerializationMap.getMap().classNameMap;
  for (const l of Array.isArray(layers) ? layers : []) {
    const entry = map[l.class_name];
    if (!entry || l.class_name === 'InputLayer') continue;
    try {
      entry[1](entry[0], camel(l.config || {}));
    } catch (e) {
      return `${l.class_name} ${(l.config && l.config.name) || l.name || ''}`.trim();
    }
  }
  return '';
}

async function byLayer(tf, art) {
  let model;
  try {
    model = await tf.models.modelFromJSON({ modelTopology: withoutInitializers(art.modelTopology) });
  } catch (e) {
    const msg = (e && e.message) || '(TF.js gave an empty error)';
    const layer = failingLayer(tf, art.modelTopology);
    throw new Error(layer ? `layer ${layer}: ${msg}` : msg);
  }
  const all = new Uint8Array(art.weightData);
  const groups = new Map();
  let off = 0;
  for (const w of art.weightSpecs) {
    if (w.dtype !== 'float32') throw new Error(`weight ${w.name}: dtype ${w.dtype}, want float32`);
    const n = w.shape.reduce((a, b) => a * b, 1);
    if (off + 4 * n > all.byteLength) throw new Error(`weight ${w.name}: the weights file is too short`);
    const data = new Float32Array(all.slice(off, off + 4 * n).buffer);
    off += 4 * n;
    const slash = w.name.lastIndexOf('/');
    const layer = w.name.slice(0, slash);
    if (!groups.has(layer)) groups.set(layer, []);
    groups.get(layer).push(tf.tensor(data, w.shape, 'float32'));
  }
  for (const [name, ws] of groups) {
    const l = model.getLayer(name);
    if (l.weights.length !== ws.length) {
      throw new Error(`layer ${name}: TF.js has ${l.weights.length} weights, the Keras file ${ws.length}`);
    }
    try {
      l.setWeights(ws);
    } catch (e) {
      throw new Error(`layer ${name}: ${(e && e.message) || '(TF.js gave an empty error)'}`);
    }
  }
  for (const l of model.layers) {
    if (l.weights.length > 0 && !groups.has(l.name)) throw new Error(`layer ${l.name}: the Keras file has no weights for it`);
  }
  return model;
}

function isGraph(json) {
  if (json.format === 'graph-model') return true;
  if (json.format === 'layers-model') return false;
  return !!(json.modelTopology && json.modelTopology.node);
}

async function main() {
  const next = frame.stream();
  const req = await next();
  if (!req) return;
  if (req.head.op !== 'load') throw new Error(`first request is ${req.head.op}, not load`);
  const tf = require('@tensorflow/tfjs');
  await tf.setBackend('cpu');
  await tf.ready();
  const { json, art } = artifacts(req.head.model);
  const graph = isGraph(json);
  let model;
  if (graph) model = await tf.loadGraphModel(tf.io.fromMemory(art));
  else model = req.head.by_layer ? await byLayer(tf, art) : await tf.loadLayersModel(tf.io.fromMemory(art));
  reply({ ok: true, kind: graph ? 'graph-model' : 'layers-model', version: tf.version.tfjs, backend: tf.getBackend() });

  for (;;) {
    const r = await next();
    if (!r) return;
    try {
      if (r.head.op !== 'run') throw new Error(`request ${r.head.op}: want run`);
      const inputs = r.head.inputs.map((t, k) => ({ name: t.name, tensor: toTensor(tf, Object.assign({}, t, { data: r.take(r.head.sizes[k]) })) }));
      const out = await runOnce(inputs);
      inputs.forEach((t) => t.tensor.dispose());
      const blobs = out.outputs.map((o) => o.buf);
      out.outputs.forEach((o) => { delete o.buf; });
      reply(out, blobs);
    } catch (e) {
      reply({ ok: false, error: String(e && e.message ? e.message : e) });
    }
  }

  async function runOnce(inputs) {
    const out = { ok: true, outputs: [] };
    let res;
    if (graph) {
      const names = model.inputs.map((i) => i.name);
      const byName = {};
      inputs.forEach((t, i) => {
        let n = t.name;
        if (!names.includes(n) && names.includes(n + ':0')) n = n + ':0';
        if (!names.includes(n)) n = names[i];
        if (n === undefined) throw new Error(`input ${t.name}: the model has ${names.length} inputs (${names.join(', ')})`);
        byName[n] = t.tensor;
      });
      const outNames = model.outputs.map((o) => o.name);
      try {
        res = model.execute(byName, outNames);
        out.method = 'execute';
      } catch (e) {
        // Control flow and dynamic ops (NonMaxSuppression, Where) need executeAsync.
        res = await model.executeAsync(byName, outNames);
        out.method = 'executeAsync';
      }
      if (!Array.isArray(res)) res = [res];
      res.forEach((x, i) => out.outputs.push(fromTensor((outNames[i] || `output_${i}`).replace(/:0$/, ''), x)));
    } else {
      if (inputs.length !== model.inputs.length) {
        throw new Error(`the model takes ${model.inputs.length} inputs, ${inputs.length} given`);
      }
      res = model.predict(inputs.length === 1 ? inputs[0].tensor : inputs.map((t) => t.tensor));
      out.method = 'predict';
      if (!Array.isArray(res)) res = [res];
      res.forEach((x, i) => out.outputs.push(fromTensor(model.outputNames ? model.outputNames[i] : `output_${i}`, x)));
    }
    res.forEach((x) => x.dispose());
    return out;
  }
}

main().catch((e) => {
  reply({ ok: false, error: e && e.message ? e.message : `TF.js failed with an empty error (${String(e)})` });
  process.exitCode = 3;
});
