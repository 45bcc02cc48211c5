// tfjs_predict.js: the reference for importers/keras's tests. Runs a Keras
// architecture with its weights in TensorFlow.js 4.22.0 (pure JavaScript
// CPU backend) and prints the outputs.
//
//   NODE_PATH=node_modules node tfjs_predict.js DIR
//
// DIR holds model.json (TF.js layers format: modelTopology and a
// weightsManifest whose entries are named LAYER/INDEX, INDEX the weight's
// position in the layer's Keras order), weights.bin and inputs.json
// ([{"shape": [...], "data": [...]}]). The topology is built with
// tf.models.modelFromJSON and each layer gets its weights with setWeights,
// in Keras's order (layer.weights), so the names TF.js would give the
// weights do not matter. Prints {"outputs": [{"shape", "data"}]}.
'use strict';
const fs = require('fs');
const path = require('path');
const toErr = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');
console.log = toErr; console.info = toErr; console.warn = toErr;
const tf = require('@tensorflow/tfjs');

async function main() {
  const dir = process.argv[2];
  await tf.setBackend('cpu');
  const mj = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const bin = fs.readFileSync(path.join(dir, 'weights.bin'));
  const model = await tf.models.modelFromJSON({modelTopology: mj.modelTopology});
  const byLayer = new Map();
  let off = 0;
  for (const w of mj.weightsManifest[0].weights) {
    const n = w.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(bin.buffer.slice(bin.byteOffset + off, bin.byteOffset + off + 4 * n));
    off += 4 * n;
    const slash = w.name.lastIndexOf('/');
    const layer = w.name.slice(0, slash);
    if (!byLayer.has(layer)) byLayer.set(layer, []);
    byLayer.get(layer).push(tf.tensor(data, w.shape, 'float32'));
  }
  for (const [name, ws] of byLayer) {
    const l = model.getLayer(name);
    if (l.weights.length !== ws.length) {
      throw new Error(`layer ${name}: TF.js has ${l.weights.length} weights, the file ${ws.length}`);
    }
    l.setWeights(ws);
  }
  for (const l of model.layers) {
    if (l.weights.length > 0 && !byLayer.has(l.name)) throw new Error(`layer ${l.name} got no weights`);
  }
  const ins = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'))
      .map((x) => tf.tensor(x.data, x.shape, 'float32'));
  let outs = model.predict(ins.length === 1 ? ins[0] : ins);
  if (!Array.isArray(outs)) outs = [outs];
  const res = [];
  for (const o of outs) res.push({shape: o.shape, data: Array.from(await o.data())});
  process.stdout.write(JSON.stringify({outputs: res, version: tf.version.tfjs}));
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
