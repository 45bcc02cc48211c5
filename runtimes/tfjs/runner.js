// runner.js: loads one TF.js model once and runs it on every sample it is
// sent, for onnxconv's tfjs runtime (runtimes/tfjs). Embedded in the Go
// package, put after runtimes/node's frame.js and started as
// `node runner.js` with NODE_PATH set to the node_modules folder holding
// @tensorflow/tfjs 4.22.0 and @tensorflow/tfjs-backend-wasm 4.22.0.
//
// The model runs on TF.js's WebAssembly backend (XNNPACK; its SIMD build,
// loaded from the package's dist folder; TF.js does not run the threaded
// build under Node). The few kernels the WASM backend lacks run on the
// pure JavaScript CPU backend: each is registered for the WASM backend as
// the CPU kernel with its inputs copied to the CPU backend and its outputs
// copied back (cpuFallback), and every answer names the ones that ran
// ("cpu_ops"). A graph model with complex-valued ops (FFT, Complex, …:
// complex64 tensors, which the WASM backend cannot hold) runs on the CPU
// backend, as does every model without the WASM package ("cpu_reason").
//
// Protocol (runtimes/node's framed protocol, one answer per request):
//   load:   {"op": "load", "model": "/abs/model.json", "by_layer": true}
//           (by_layer: a Keras file the Go side exported: weights set layer by layer)
//   answer: {"ok": true, "kind": "layers-model"|"graph-model", "version": "4.22.0",
//            "backend": "wasm"|"cpu", "wasm_build": "tfjs-backend-wasm-simd.wasm",
//            "cpu_reason": why the CPU backend runs the whole model (complex64 ops, no WASM package),
//            "reset_after_gru": [names of the GRU layers computed by runner.js's reset-after GRU]}
//   run:    {"op": "run", "inputs": [{"name", "dtype": "float32"|"int32"|"bool", "shape"}],
//            "outputs": ["node" or "node:N", ...]}  input bytes (LE); outputs (optional): the tensors
//            to compute instead of the model's outputs, answered in that order (a layers model:
//            "layer:node:index", the outputs of a layer's call)
//   answer: {"ok": true, "method": "predict"|"execute"|"executeAsync",
//            "cpu_ops": [kernels run on the CPU backend so far, sorted],
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

// RESET_AFTER_GRU is the class name runner.js gives a Keras GRU layer
// with reset_after=true: TF.js 4.22's GRUCell refuses that parameter, so
// byLayer substitutes resetAfterGRU, the same computation in TF.js ops.
const RESET_AFTER_GRU = 'OnnxconvResetAfterGRU';

// activationFn is TF.js's activation of that name (as TF.js's own
// activations compute them: hard_sigmoid is clip(0.2x + 0.5, 0, 1)).
function activationFn(tf, name, layer) {
  switch (name === undefined || name === null ? 'linear' : name) {
    case 'tanh': return (x) => tf.tanh(x);
    case 'sigmoid': return (x) => tf.sigmoid(x);
    case 'hard_sigmoid': case 'hardSigmoid': return (x) => tf.clipByValue(tf.add(tf.mul(x, 0.2), 0.5), 0, 1);
    case 'relu': return (x) => tf.relu(x);
    case 'relu6': return (x) => tf.relu6(x);
    case 'elu': return (x) => tf.elu(x);
    case 'selu': return (x) => tf.selu(x);
    case 'softsign': return (x) => tf.div(x, tf.add(tf.abs(x), 1));
    case 'softplus': return (x) => tf.softplus(x);
    case 'swish': case 'silu': return (x) => tf.mul(x, tf.sigmoid(x));
    case 'linear': return (x) => x;
    default: throw new Error(`layer GRU ${layer}: activation ${JSON.stringify(name)} is not supported by the reset-after GRU`);
  }
}

// resetAfterGRUClass defines (once per process) the TF.js layer that
// computes Keras's GRU with reset_after=true, with Keras's weights in
// Keras's order: kernel [in, 3u], recurrent_kernel [u, 3u], bias [2, 3u]
// (row 0 the input bias, row 1 the recurrent bias); gate order z, r, h.
// Per step from a zero initial state:
//   x_z, x_r, x_h = split(x·W + b_in);  h_z, h_r, h_h = split(h·U + b_rec)
//   z = rec_act(x_z + h_z); r = rec_act(x_r + h_r)
//   n = act(x_h + r ⊙ h_h); h' = z ⊙ h + (1 − z) ⊙ n
// return_sequences, return_state, go_backwards (outputs in processing
// order, as Keras and TF.js give them), time_major and an input mask
// (masked steps keep the previous state) are honoured; stateful is refused.
let resetAfterGRU = null;
function resetAfterGRUClass(tf) {
  if (resetAfterGRU) return resetAfterGRU;
  const pick = (c, camel, snake, dflt) => (c[camel] !== undefined ? c[camel] : c[snake] !== undefined ? c[snake] : dflt);
  class ResetAfterGRU extends tf.layers.Layer {
    constructor(config) {
      super(config);
      const c = config || {};
      this.units = pick(c, 'units', 'units', 0);
      this.returnSequences = !!pick(c, 'returnSequences', 'return_sequences', false);
      this.returnState = !!pick(c, 'returnState', 'return_state', false);
      this.goBackwards = !!pick(c, 'goBackwards', 'go_backwards', false);
      this.timeMajor = !!pick(c, 'timeMajor', 'time_major', false);
      this.useBias = pick(c, 'useBias', 'use_bias', true) !== false;
      const act = pick(c, 'activation', 'activation', 'tanh');
      const rec = pick(c, 'recurrentActivation', 'recurrent_activation', 'sigmoid');
      this.activationName = act;
      this.recurrentActivationName = rec;
      this.act = activationFn(tf, act, this.name);
      this.recAct = activationFn(tf, rec, this.name);
      if (pick(c, 'stateful', 'stateful', false)) {
        throw new Error(`layer GRU ${this.name}: stateful=true is not supported by the reset-after GRU`);
      }
      if (!Number.isInteger(this.units) || this.units <= 0) {
        throw new Error(`layer GRU ${this.name}: units ${JSON.stringify(this.units)} must be a positive integer`);
      }
      this.supportsMasking = true;
    }

    build(inputShape) {
      const s = Array.isArray(inputShape[0]) ? inputShape[0] : inputShape;
      const inDim = s[s.length - 1];
      if (!Number.isInteger(inDim)) throw new Error(`layer GRU ${this.name}: the input's last dimension must be known`);
      const u = this.units;
      const zeros = tf.initializers.zeros();
      this.kernel = this.addWeight('kernel', [inDim, 3 * u], 'float32', zeros);
      this.recurrentKernel = this.addWeight('recurrent_kernel', [u, 3 * u], 'float32', zeros);
      if (this.useBias) this.bias = this.addWeight('bias', [2, 3 * u], 'float32', zeros);
      this.built = true;
    }

    computeOutputShape(inputShape) {
      const s = Array.isArray(inputShape[0]) ? inputShape[0] : inputShape;
      const [b, t] = this.timeMajor ? [s[1], s[0]] : [s[0], s[1]];
      const out = this.returnSequences ? (this.timeMajor ? [t, b, this.units] : [b, t, this.units]) : [b, this.units];
      return this.returnState ? [out, [b, this.units]] : out;
    }

    computeMask(inputs, mask) {
      const m = Array.isArray(mask) ? mask[0] : mask;
      const out = this.returnSequences ? (m || null) : null;
      return this.returnState ? [out, null] : out;
    }

    call(inputs, kwargs) {
      return tf.tidy(() => {
        let x = Array.isArray(inputs) ? inputs[0] : inputs;
        if (Array.isArray(inputs) && inputs.length > 1) {
          throw new Error(`layer GRU ${this.name}: an initial state input is not supported by the reset-after GRU`);
        }
        if (x.rank !== 3) throw new Error(`layer GRU ${this.name}: input of rank ${x.rank}, want 3`);
        if (this.timeMajor) x = tf.transpose(x, [1, 0, 2]);
        let mask = kwargs && kwargs.mask;
        if (Array.isArray(mask)) mask = mask[0];
        const [batch, steps] = x.shape;
        const u = this.units;
        const W = this.kernel.read();
        const U = this.recurrentKernel.read();
        let bIn = null;
        let bRec = null;
        if (this.useBias) {
          const [b0, b1] = tf.split(this.bias.read(), 2, 0);
          bIn = tf.reshape(b0, [3 * u]);
          bRec = tf.reshape(b1, [3 * u]);
        }
        // x·W + b_in for every step at once: [batch, steps, 3u].
        let xw = tf.reshape(tf.matMul(tf.reshape(x, [batch * steps, x.shape[2]]), W), [batch, steps, 3 * u]);
        if (bIn) xw = tf.add(xw, bIn);
        let h = tf.zeros([batch, u]);
        const outs = [];
        for (let k = 0; k < steps; k++) {
          const t = this.goBackwards ? steps - 1 - k : k;
          const xt = tf.reshape(tf.slice(xw, [0, t, 0], [batch, 1, 3 * u]), [batch, 3 * u]);
          let hu = tf.matMul(h, U);
          if (bRec) hu = tf.add(hu, bRec);
          const [xz, xr, xh] = tf.split(xt, 3, 1);
          const [hz, hr, hh] = tf.split(hu, 3, 1);
          const z = this.recAct(tf.add(xz, hz));
          const r = this.recAct(tf.add(xr, hr));
          const n = this.act(tf.add(xh, tf.mul(r, hh)));
          let next = tf.add(tf.mul(z, h), tf.mul(tf.sub(1, z), n));
          if (mask) {
            const mt = tf.reshape(tf.slice(tf.cast(mask, 'bool'), [0, t], [batch, 1]), [batch, 1]);
            next = tf.where(tf.broadcastTo(mt, [batch, u]), next, h);
          }
          h = next;
          outs.push(h);
        }
        let out = h;
        if (this.returnSequences) {
          out = tf.stack(outs, 1);
          if (this.timeMajor) out = tf.transpose(out, [1, 0, 2]);
        }
        return this.returnState ? [out, h] : out;
      });
    }

    getConfig() {
      return Object.assign({}, super.getConfig(), {
        units: this.units,
        returnSequences: this.returnSequences,
        returnState: this.returnState,
        goBackwards: this.goBackwards,
        timeMajor: this.timeMajor,
        useBias: this.useBias,
        activation: this.activationName,
        recurrentActivation: this.recurrentActivationName,
        resetAfter: true,
      });
    }

    static get className() { return RESET_AFTER_GRU; }
  }
  tf.serialization.registerClass(ResetAfterGRU);
  resetAfterGRU = ResetAfterGRU;
  return ResetAfterGRU;
}

// withResetAfterGRU returns a copy of a Keras topology whose top-level GRU
// layers with reset_after=true are the reset-after GRU above, and the
// names of those layers (none: the topology is returned as it is).
function withResetAfterGRU(tf, topo) {
  const names = [];
  const rewrite = (layers) => layers.map((l) => {
    if (!l || l.class_name !== 'GRU' || !l.config || !(l.config.reset_after === true || l.config.resetAfter === true)) return l;
    names.push(l.config.name || l.name || '');
    return Object.assign({}, l, { class_name: RESET_AFTER_GRU });
  });
  if (!topo || typeof topo !== 'object') return { topo, names };
  const hasMC = !!topo.model_config;
  const mc = hasMC ? topo.model_config : topo;
  if (!mc || !mc.config) return { topo, names };
  let cfg;
  if (Array.isArray(mc.config)) cfg = rewrite(mc.config);
  else if (Array.isArray(mc.config.layers)) cfg = Object.assign({}, mc.config, { layers: rewrite(mc.config.layers) });
  else return { topo, names };
  if (names.length === 0) return { topo, names };
  resetAfterGRUClass(tf);
  const out = Object.assign({}, mc, { config: cfg });
  return { topo: hasMC ? Object.assign({}, topo, { model_config: out }) : out, names };
}

async function byLayer(tf, art) {
  let model;
  const gru = withResetAfterGRU(tf, art.modelTopology);
  try {
    model = await tf.models.modelFromJSON({ modelTopology: withoutInitializers(gru.topo) });
  } catch (e) {
    const msg = (e && e.message) || '(TF.js gave an empty error)';
    const layer = failingLayer(tf, gru.topo);
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
  return { model, resetAfterGRU: gru.names };
}

// cpuOps are the kernels the WASM backend lacks that ran on the CPU
// backend (cpuFallback).
const cpuOps = new Set();

// cpuFallback registers, for every kernel the CPU backend has and the WASM
// backend lacks, a WASM kernel that copies its inputs to the CPU backend,
// runs the CPU kernel there and copies its outputs back.
function cpuFallback(tf) {
  const have = new Set(tf.getKernelsForBackend('wasm').map((k) => k.kernelName));
  const cpu = tf.findBackend('cpu');
  if (!cpu) throw new Error('the CPU backend of TF.js could not be initialized');
  for (const k of tf.getKernelsForBackend('cpu')) {
    if (have.has(k.kernelName)) continue;
    tf.registerKernel({
      kernelName: k.kernelName,
      backendName: 'wasm',
      kernelFunc: ({ inputs, backend, attrs }) => {
        cpuOps.add(k.kernelName);
        const made = [];
        const toCPU = (t) => {
          if (t == null) return t;
          if (t.dtype === 'string' || t.dtype === 'complex64') {
            throw new Error(`op ${k.kernelName}: the WASM backend lacks it and a ${t.dtype} input cannot be moved to the CPU backend`);
          }
          const dataId = cpu.write(backend.readSync(t.dataId), t.shape, t.dtype);
          made.push(dataId);
          return { dataId, shape: t.shape, dtype: t.dtype };
        };
        // Inputs are a map by name, or a list (Einsum, Concat, AddN).
        let ins;
        if (Array.isArray(inputs)) ins = inputs.map(toCPU);
        else {
          ins = {};
          for (const [name, v] of Object.entries(inputs)) ins[name] = Array.isArray(v) ? v.map(toCPU) : toCPU(v);
        }
        const out = k.kernelFunc({ inputs: ins, backend: cpu, attrs });
        const outs = Array.isArray(out) ? out : [out];
        const back = outs.map((o) => ({ dataId: backend.write(cpu.readSync(o.dataId), o.shape, o.dtype), shape: o.shape, dtype: o.dtype }));
        outs.forEach((o) => cpu.disposeData(o.dataId));
        made.forEach((d) => cpu.disposeData(d));
        return Array.isArray(out) ? back : back[0];
      },
    });
  }
}

// useWasm makes TF.js's WASM backend the backend, with its binaries from
// the package's dist folder and the CPU fallback; it returns the build
// loaded, or undefined when the package is not installed (the CPU backend
// then runs everything).
async function useWasm(tf) {
  let wasm;
  try {
    wasm = require('@tensorflow/tfjs-backend-wasm');
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND') return undefined;
    throw e;
  }
  const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
  wasm.setWasmPaths(dist + path.sep);
  if (!(await tf.setBackend('wasm'))) throw new Error(`the WASM backend of TF.js did not start (binaries in ${dist})`);
  await tf.ready();
  cpuFallback(tf);
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
  return simd && threads ? 'tfjs-backend-wasm-threaded-simd.wasm' : simd ? 'tfjs-backend-wasm-simd.wasm' : 'tfjs-backend-wasm.wasm';
}

// COMPLEX_OPS are the graph ops whose tensors are complex64, which the
// WASM backend cannot hold: a graph model with any of them runs on the
// CPU backend (complexOps).
const COMPLEX_OPS = new Set(['FFT', 'IFFT', 'RFFT', 'IRFFT', 'Complex', 'ComplexAbs', 'Real', 'Imag']);

// complexOps lists the complex-valued ops of a graph model's topology
// (its nodes and its library functions' nodes), sorted.
function complexOps(topo) {
  const found = new Set();
  const scan = (nodes) => (nodes || []).forEach((n) => { if (n && COMPLEX_OPS.has(n.op)) found.add(n.op); });
  scan(topo && topo.node);
  for (const f of (topo && topo.library && topo.library.function) || []) scan(f.nodeDef);
  return [...found].sort();
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
  const { json, art } = artifacts(req.head.model);
  const graph = isGraph(json);
  // cpuReason says why the CPU backend runs the whole model ("" when the
  // WASM backend does).
  let cpuReason = '';
  const complex = graph ? complexOps(json.modelTopology) : [];
  let wasmBuild;
  if (complex.length > 0) cpuReason = `the model's ${complex.join(', ')} take complex64 tensors, which the WASM backend cannot hold`;
  else if ((wasmBuild = await useWasm(tf)) === undefined) cpuReason = '@tensorflow/tfjs-backend-wasm is not installed';
  if (cpuReason) {
    await tf.setBackend('cpu');
    await tf.ready();
  }
  let model;
  let substituted = [];
  if (graph) model = await tf.loadGraphModel(tf.io.fromMemory(art));
  else if (req.head.by_layer) ({ model, resetAfterGRU: substituted } = await byLayer(tf, art));
  else model = await tf.loadLayersModel(tf.io.fromMemory(art));
  reply({ ok: true, kind: graph ? 'graph-model' : 'layers-model', version: tf.version.tfjs, backend: tf.getBackend(), wasm_build: wasmBuild || '', cpu_reason: cpuReason, reset_after_gru: substituted });

  for (;;) {
    const r = await next();
    if (!r) return;
    try {
      if (r.head.op !== 'run') throw new Error(`request ${r.head.op}: want run`);
      const inputs = r.head.inputs.map((t, k) => ({ name: t.name, tensor: toTensor(tf, Object.assign({}, t, { data: r.take(r.head.sizes[k]) })) }));
      const out = await runOnce(inputs, r.head.outputs);
      inputs.forEach((t) => t.tensor.dispose());
      const blobs = out.outputs.map((o) => o.buf);
      out.outputs.forEach((o) => { delete o.buf; });
      reply(out, blobs);
    } catch (e) {
      reply({ ok: false, error: String(e && e.message ? e.message : e) });
    }
  }

  async function runOnce(inputs, wanted) {
    const out = { ok: true, outputs: [], cpu_ops: [] };
    if (wanted && wanted.length && !graph) {
      // A layers model: the outputs of its layers' calls ("layer:node:index"),
      // computed by a model of the same inputs with those as its outputs.
      if (!model.getLayer) throw new Error('this layers model does not give its layers\' outputs');
      const outs = wanted.map((w) => {
        const m = /^(.*):(\d+):(\d+)$/.exec(w);
        if (!m) throw new Error(`${w}: want layer:node:index`);
        let t = model.getLayer(m[1]).getOutputAt(Number(m[2]));
        if (Array.isArray(t)) t = t[Number(m[3])];
        return t;
      });
      const sub = tf.model({ inputs: model.inputs, outputs: outs });
      let got = sub.predict(inputs.length === 1 ? inputs[0].tensor : inputs.map((t) => t.tensor));
      if (!Array.isArray(got)) got = [got];
      out.method = 'predict';
      got.forEach((x, i) => out.outputs.push(fromTensor(wanted[i], x)));
      got.forEach((x) => x.dispose());
      out.cpu_ops = [...cpuOps].sort();
      return out;
    }
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
      const outNames = wanted && wanted.length ? wanted : model.outputs.map((o) => o.name);
      try {
        res = model.execute(byName, outNames);
        out.method = 'execute';
      } catch (e) {
        // Control flow and dynamic ops (NonMaxSuppression, Where) need executeAsync.
        res = await model.executeAsync(byName, outNames);
        out.method = 'executeAsync';
      }
      if (!Array.isArray(res)) res = [res];
      res.forEach((x, i) => out.outputs.push(fromTensor(wanted && wanted.length ? outNames[i] : (outNames[i] || `output_${i}`).replace(/:0$/, ''), x)));
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
    out.cpu_ops = [...cpuOps].sort();
    return out;
  }
}

main().catch((e) => {
  reply({ ok: false, error: e && e.message ? e.message : `TF.js failed with an empty error (${String(e)})` });
  process.exitCode = 3;
});
