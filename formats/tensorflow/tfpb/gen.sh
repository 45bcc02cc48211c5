#!/usr/bin/env bash
# Regenerates the Go code of TensorFlow's GraphDef, SavedModel and tensor
# bundle protos (TensorFlow 2.15, ../shared/tensorflow-proto) into package
# tfpb. Needs protoc and protoc-gen-go (the version in go.mod).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${TF_PROTO_DIR:-$here/../../../../shared/tensorflow-proto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg=github.com/onnxconv/onnxconv/formats/tensorflow/tfpb
files=$(cd "$src" && find tensorflow -name '*.proto' | sort)
opts=()
for f in $files; do opts+=(--go_opt="M$f=$pkg;tfpb"); done
protoc -I "$src" --go_out="$tmp" "${opts[@]}" --go_opt=paths=source_relative $files
rm -f "$here"/*.pb.go
for f in $files; do
  cp "$tmp/${f%.proto}.pb.go" "$here/$(basename "${f%.proto}").pb.go"
done
