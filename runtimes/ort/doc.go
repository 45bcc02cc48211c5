// Package ort is a thin cgo bridge to ONNX Runtime (1.30, C API version 24
// or newer) through github.com/yalue/onnxruntime_go. It runs an .onnx file
// on ONNX tensors (onnxpb.TensorProto) and returns the graph outputs as
// ONNX tensors, so that ONNX Runtime can serve as a reference for the
// built-in executor, for fixtures and for benchmarks.
//
// The command line's ONNX Runtime is runtimes/ortnode (npm's
// onnxruntime-node under Node, no cgo, installed by 'onnxconv runtimes
// install'): it computes every ONNX source by default. The plugin built on
// this package (cmd/onnxconv-plugin-onnxruntime) serves the runtime name
// "onnxruntime" only where that built-in is not installed; it passes
// bfloat16 and float8 tensors, which onnxruntime-node cannot.
//
// # cgo only: never import this from the onnxconv binary
//
// This package needs cgo and a shared libonnxruntime at run time. The
// onnxconv binary (cmd/onnxconv) builds with CGO_ENABLED=0 and must never
// import this package, directly or through another package; anything that
// wants ONNX Runtime from the command line does so through a separate
// plugin executable (see ARCHITECTURE.md). Every file but this one has a
// `//go:build cgo` constraint, so CGO_ENABLED=0 builds of ./... pass over
// the package (it is then empty).
//
// # Getting the library
//
// npm's onnxruntime-node ships the library. In the repository root:
//
//	npm ci --ignore-scripts   # or: npm install --ignore-scripts onnxruntime-node@1.30.0
//
// installs node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1.
// FindLibrary looks for it, in order, at $ONNXRUNTIME_LIB, beside the
// running executable (so an installed plugin works from any folder when
// libonnxruntime.so.1 is copied beside it), in the user plugins folder,
// under the node_modules of a checkout above the working directory, and in
// the dynamic loader's folders; a miss is a *LibraryNotFoundError that
// lists every folder searched.
//
// # Process-global state
//
// onnxruntime_go keeps one ONNX Runtime environment per process (a C
// library handle and an OrtEnv in package variables). Open initialises it
// on first use and every later Open with the same library shares it; Open
// with a different library fails. The environment lives until the process
// ends: Runtime.Close releases only what that Runtime owns, because other
// Runtimes may still use the environment. The package-level mutex and the
// recorded library path in this package exist only to guard that forced
// global; sessions themselves hold no global state.
//
// # Tensors
//
// Supported element types: float32, float64, float16, bfloat16, the 8-bit
// floats (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ; not E8M0), int8, int16, int32,
// int64, uint8, uint16, uint32, uint64, bool and string; not the packed
// 4- and 2-bit types nor complex. Scalars (rank 0) are supported for the
// types with a Go equivalent (not float16, bfloat16, float8, string).
// Sequences, maps and optionals are not supported. Inputs
// may carry their data in raw_data or in the typed fields; outputs are
// returned with raw_data (little endian) or string_data for strings. The
// bridge assumes a little-endian host (amd64, arm64), as ONNX Runtime does.
//
// onnxruntime_go cannot take back rank-0 outputs or float16/bfloat16
// outputs that ONNX Runtime allocated; the bridge allocates those itself,
// from the declared shape, or, when it is not static, from a probe session
// (the same graph ending in Shape ops) run first on the same inputs.
package ort
