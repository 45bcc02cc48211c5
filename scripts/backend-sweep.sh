#!/bin/bash
# backend-sweep.sh: issue 37's "Done when" sweep over the ONNX backend tests.
# A plain `onnxconv convert model.onnx out.onnx` (verified by default) of
# every model.onnx under ../shared/onnx-v1.22/backend-tests, each in a data
# folder of its own (no reference runtimes installed unless ORT=1 is set
# in the environment and `runtimes install` succeeds).
#
#   go build -o /tmp/onnxconv ./cmd/onnxconv
#   nice scripts/backend-sweep.sh /tmp/onnxconv /tmp/backend-sweep
#
# With GEN=1 each model.onnx is copied alone into a scratch folder first,
# so that its inputs are generated (the generator's sweep) instead of read
# from the test_data_set_N folders beside it. ONLY=FILE runs only the
# folders FILE lists, one a line as sweep.txt names them (node/test_add),
# e.g. the failures of an earlier sweep:
#   grep -v '^0|' OLD/sweep.txt | cut -d'|' -f3 > failed.txt
#
# Writes one line per model (exit code|verdict|folder|first error line)
# into OUT/sweep.txt and prints a count per exit code and verdict, then per
# failure class (the first error line with numbers and names blanked).
# About 10 minutes on 2 busy cores; with ORT=1 (two Node processes a
# model) 4-15 s a model on 2 cores shared by 8 agents, hours for all;
# not run by CI.
set -u
bin=$(realpath "$1")
out=$(realpath -m "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
tests=$(realpath "$repo/../shared/onnx-v1.22/backend-tests")
[ -n "${ONLY:-}" ] && ONLY=$(realpath "$ONLY")
mkdir -p "$out/work" "$out/logs"
export XDG_DATA_HOME="$out/xdg" HOME="$out/home"
mkdir -p "$HOME"
if [ "${ORT:-0}" = 1 ]; then
  "$bin" runtimes install > "$out/logs/install.log" 2>&1 || { echo "runtimes install failed: $out/logs/install.log"; exit 2; }
fi
cd "$out/work" || exit 2
models() {
  if [ -n "${ONLY:-}" ]; then
    sed "s|^|$tests/|; s|\$|/model.onnx|" "$ONLY"
  else
    find "$tests" -name model.onnx | sort
  fi
}
models | while read -r f; do
  d=$(dirname "$f")
  name=${d#"$tests"/}
  log=$out/logs/${name//\//_}
  src=$f
  if [ "${GEN:-0}" = 1 ]; then
    mkdir -p "$out/work/gen" && cp "$f" "$out/work/gen/model.onnx" && src=$out/work/gen/model.onnx
  fi
  timeout 300 "$bin" convert "$src" "$out/work/out.onnx" > "$log.out" 2> "$log.err"
  rc=$?
  # The verdict of the run: exit 0 is EQUIVALENT (a comparison excused
  # where ONNX Runtime and ONNX's reference differ says NOT EQUIVALENT in
  # its own line), else the first verdict printed.
  v=$(grep -o 'NOT VERIFIED' "$log.out" | head -1)
  [ -z "$v" ] && [ $rc = 0 ] && v=EQUIVALENT
  [ -z "$v" ] && grep -q 'NOT EQUIVALENT' "$log.out" && v='NOT EQUIVALENT'
  e=$( (grep '^onnxconv: ' "$log.err"; grep -v '^\(/\|verifying\|wrote\|verify: generated\|  \)' "$log.err") | head -1 | tr '|' '/')
  echo "$rc|${v#: }|$name|$e"
  rm -f "$out/work/out.onnx"
done > "$out/sweep.txt"
echo "== exit code | verdict"
cut -d'|' -f1-2 "$out/sweep.txt" | sort | uniq -c | sort -rn
echo "== failure classes (exit code | first error line, numbers and quoted names blanked)"
awk -F'|' '$1 != 0 {print $1 "|" $4}' "$out/sweep.txt" |
  sed -E 's/"[^"]*"/"…"/g; s/[0-9]+/N/g; s#/[^ :]*##g' | cut -c1-140 | sort | uniq -c | sort -rn
