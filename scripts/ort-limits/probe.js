// Prints the highest ai.onnx opset, IR version and ai.onnx.ml opset that
// the onnxruntime-node package installed under argv[2] accepts, by creating
// sessions for the probe models in argv[3] (made by measure.sh).
const ort = require(process.argv[2] + '/node_modules/onnxruntime-node');
const dir = process.argv[3] + '/';
(async () => {
  const res = {};
  for (const [kind, range] of [['op', [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]],
                               ['ir', [8, 9, 10, 11, 12, 13, 14]],
                               ['ml', [1, 2, 3, 4, 5, 6]]]) {
    let max = 0;
    for (const n of range) {
      try { await ort.InferenceSession.create(dir + kind + n + '.onnx'); max = n; } catch (e) { /* rejected */ }
    }
    res[kind] = max;
  }
  console.log(`max_opset ${res.op} max_ir_version ${res.ir} ml_max_opset ${res.ml}`);
})();
