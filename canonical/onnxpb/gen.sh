#!/usr/bin/env bash
# Regenerates onnx-ml.pb.go and onnx-data.pb.go from the ONNX 1.22 protos.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${ONNX_PROTO_DIR:-$here/../../../shared/onnx-v1.22/proto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/onnx"
cp "$src/onnx-ml.proto" "$src/onnx-data.proto" "$tmp/onnx/"
pkg=github.com/onnxconv/onnxconv/canonical/onnxpb
protoc -I "$tmp" --go_out="$tmp" \
  --go_opt=Monnx/onnx-ml.proto=$pkg --go_opt=Monnx/onnx-data.proto=$pkg \
  --go_opt=paths=source_relative \
  onnx/onnx-ml.proto onnx/onnx-data.proto
cp "$tmp/onnx/onnx-ml.pb.go" "$tmp/onnx/onnx-data.pb.go" "$here/"
