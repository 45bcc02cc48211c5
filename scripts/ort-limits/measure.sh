#!/usr/bin/env bash
# Measures the highest ai.onnx opset, IR version and ai.onnx.ml opset that
# each ONNX Runtime release accepts (the onnxruntime-N profiles of
# exporters/profiles/data/onnxruntime.json): installs onnxruntime-node@V
# from npm (--ignore-scripts) for each V given (default: 1.17.0 to 1.30.0),
# makes one-op probe models with onnxconv, and loads them with node.
#
#   scripts/ort-limits/measure.sh [VERSION ...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(1.17.0 1.18.0 1.19.2 1.20.1 1.21.1 1.22.0 1.23.2 1.24.3 1.25.1 1.26.0 1.27.0 1.29.0 1.30.0)

(cd "$repo" && CGO_ENABLED=0 go build -o "$work/onnxconv" ./cmd/onnxconv)
m="$work/models"
mkdir -p "$m"
model() { # name, ir, opset imports, body
	printf '<ir_version: %s, opset_import: [%s]>\ng (float[2] x) => (float[2] y) {\n  y = %s(x)\n}\n' "$2" "$3" "$4" > "$m/$1.onnxtxt"
	"$work/onnxconv" convert "$m/$1.onnxtxt" "$m/$1.onnx" -q
}
for op in 17 18 19 20 21 22 23 24 25 26 27; do model "op$op" 8 "\"\" : $op" Relu; done
for ir in 8 9 10 11 12 13; do model "ir$ir" "$ir" '"" : 13' Relu; done
# IR 14 does not exist yet: onnxconv refuses to write it, so patch IR 13's varint.
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); assert b[:2]==b'\x08\x0d'; b[1]=14; open(sys.argv[2],'wb').write(b)" "$m/ir13.onnx" "$m/ir14.onnx"
for ml in 1 2 3 4 5 6; do model "ml$ml" 8 "\"\" : 13, \"ai.onnx.ml\" : $ml" ai.onnx.ml.Binarizer; done

for v in "${versions[@]}"; do
	mkdir -p "$work/$v"
	(cd "$work/$v" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "onnxruntime-node@$v" >/dev/null)
	printf 'onnxruntime %-8s ' "$v"
	node "$repo/scripts/ort-limits/probe.js" "$work/$v" "$m"
done
