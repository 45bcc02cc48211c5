#!/bin/bash
# verify-sweep.sh: issue 23's "Done when" sweep. A plain `onnxconv convert`
# (verified by default) of every TFLite model in ../shared and fixtures/,
# and of the TF.js, Keras, LightGBM, CatBoost, XGBoost and scikit-learn
# models, run from a folder outside the checkout after
# `onnxconv runtimes install` (into a data folder of its own).
#
#   go build -o /tmp/onnxconv ./cmd/onnxconv
#   scripts/verify-sweep.sh /tmp/onnxconv /tmp/sweep
#
# Prints one line per model (format|exit code|verdict|file) into
# OUT/sweep.txt and a count per format and verdict at the end. Needs Node
# and the npm registry (for `runtimes install`) and ../shared beside the
# checkout.
set -u
bin=$(realpath "$1")
out=$(realpath -m "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(realpath "$repo/../shared/models")
mkdir -p "$out/work" "$out/logs"
export XDG_DATA_HOME="$out/xdg"
cd "$out/work" || exit 2
"$bin" runtimes install > "$out/logs/install.log" 2>&1 || { echo "runtimes install failed: $out/logs/install.log"; exit 2; }
list() {
  ls "$repo"/fixtures/tflite/*.tflite "$shared"/tflite/*/*.tflite | sed 's/^/tflite /'
  ls "$repo"/fixtures/tfjs/*/model.json | sed 's/^/tfjs /'
  ls "$repo"/fixtures/keras_rnn/*.json | sed 's/^/keras /'
  ls -d "$shared"/tf_savedmodel/*/ "$shared"/tf_graphdef/*/frozen.pb "$shared"/tf_checkpoint/*/model.meta | sed 's/^/tensorflow /'
  ls "$shared"/keras_h5/*/*.h5 "$shared"/keras_v3/*/*.keras | grep -v _weights.h5 | sed 's/^/keras /'
  ls "$shared"/keras_h5/*/*.json | sed 's/^/keras /'
  find "$shared"/lightgbm \( -name "*.txt" -o -name "*.model" \) | grep -v -i "pred\|_data\|true\|LICENSE\|README" | sed 's/^/lightgbm /'
  find "$shared"/catboost -name "*.cbm" | sed 's/^/catboost /'
  ls "$repo"/fixtures/xgboost/*.json "$repo"/fixtures/xgboost/*.ubj | grep -v manifest | sed 's/^/xgboost /'
  ls "$repo"/fixtures/sklearn/*.joblib "$repo"/fixtures/sklearn/*.pkl | sed 's/^/sklearn /'
}
i=0
list | while read -r kind f; do
  i=$((i+1))
  timeout 300 "$bin" convert "$f" "$out/work/$i.onnx" -q > "$out/logs/$i.out" 2> "$out/logs/$i.err"
  rc=$?
  v=$(grep -o 'NOT EQUIVALENT\|NOT VERIFIED\|: EQUIVALENT' "$out/logs/$i.out" | head -1)
  echo "$kind|$rc|${v#: }|$f"
  rm -f "$out/work/$i.onnx"
done > "$out/sweep.txt"
cut -d'|' -f1-3 "$out/sweep.txt" | sort | uniq -c | sort -k2
