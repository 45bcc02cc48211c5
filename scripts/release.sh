#!/usr/bin/env bash
# Release builds of onnxconv:
#
#   bash scripts/release.sh [OUT]        # default OUT: dist/
#
# - onnxconv for linux, darwin and windows on amd64 and arm64: static
#   binaries (CGO_ENABLED=0, -trimpath), one archive each
#   (onnxconv_VERSION_OS_ARCH.tar.gz, .zip for windows);
# - the cgo runtime plugins for linux/amd64, each in an archive of its own:
#   onnxconv-plugin-onnxruntime (ONNX Runtime, loaded at run time from
#   npm's onnxruntime-node or $ONNXRUNTIME_LIB) always, and
#   onnxconv-plugin-libtorch when Debian's libtorch-dev and g++ are
#   installed (it links libtorch dynamically; the machine that runs it
#   needs libtorch too). A plugin goes into ~/.config/onnxconv/plugins/.
# - SHA256SUMS over every archive.
#
# Then it checks the linux/amd64 binary: statically linked (file(1)), and
# it runs (--version). scripts/test.sh, and so CI, runs this script during
# its fuzz stage, with ONNXCONV_RELEASE_PLUGINS=0: the six binaries and
# their checks, not the cgo plugins (the tests build those themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
mkdir -p "$out"
rm -f "$out"/onnxconv_* "$out"/onnxconv-plugin-* "$out"/SHA256SUMS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pack() { # pack NAME DIR: DIR's files into $out/NAME.tar.gz (or .zip)
  local name=$1 dir=$2
  if [[ $name == *windows* ]]; then
    (cd "$dir" && zip -q -X "$out/$name.zip" ./*)
  else
    tar -C "$dir" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" .
  fi
}

# ONNXCONV_RELEASE_PLATFORMS="linux/amd64 …" builds only those (a quick
# local check); the checks below need linux/amd64 among them.
platforms=${ONNXCONV_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
case " $platforms " in
  *" linux/amd64 "*) ;;
  *) echo "release: ONNXCONV_RELEASE_PLATFORMS must include linux/amd64 (the binary checked static and run)" >&2; exit 2 ;;
esac
for platform in $platforms; do
  os=${platform%/*} arch=${platform#*/}
  dir="$work/${os}_$arch"
  mkdir -p "$dir"
  exe=onnxconv
  [ "$os" = windows ] && exe=onnxconv.exe
  echo "release: onnxconv $version $os/$arch"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags='-s -w' -o "$dir/$exe" ./cmd/onnxconv
  cp README.md "$dir/"
  pack "onnxconv_${version}_${os}_${arch}" "$dir"
done

# The linux/amd64 binary is static and runs.
bin="$work/linux_amd64/onnxconv"
desc=$(file -b "$bin")
case "$desc" in
  *"statically linked"*) ;;
  *) echo "release: $bin is not statically linked: $desc" >&2; exit 1 ;;
esac
"$bin" --version >/dev/null

if [ "${ONNXCONV_RELEASE_PLUGINS:-1}" = 0 ]; then
  echo "release: the cgo plugins are not built (ONNXCONV_RELEASE_PLUGINS=0)"
elif [ "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" = linux/amd64 ] && command -v gcc >/dev/null; then
  dir="$work/plugin-ort"
  mkdir -p "$dir"
  echo "release: onnxconv-plugin-onnxruntime $version linux/amd64 (cgo)"
  CGO_ENABLED=1 go build -trimpath -o "$dir/onnxconv-plugin-onnxruntime" ./cmd/onnxconv-plugin-onnxruntime
  pack "onnxconv-plugin-onnxruntime_${version}_linux_amd64" "$dir"
  if [ -f /usr/include/torch/script.h ] && command -v g++ >/dev/null; then
    dir="$work/plugin-libtorch"
    mkdir -p "$dir"
    echo "release: onnxconv-plugin-libtorch $version linux/amd64 (cgo, libtorch-dev)"
    CGO_ENABLED=1 go build -trimpath -tags libtorch -o "$dir/onnxconv-plugin-libtorch" ./cmd/onnxconv-plugin-libtorch
    pack "onnxconv-plugin-libtorch_${version}_linux_amd64" "$dir"
  else
    echo "release: onnxconv-plugin-libtorch not built: needs Debian's libtorch-dev and g++ (apt-get install libtorch-dev g++)" >&2
  fi
else
  echo "release: the cgo plugins are built on linux/amd64 with a C compiler only" >&2
fi

(cd "$out" && sha256sum onnxconv*_"$version"_* > SHA256SUMS)
echo "release: $(wc -l < "$out/SHA256SUMS") archives and SHA256SUMS in $out"
