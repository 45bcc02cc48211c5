// Package ortagree holds one test: every ONNX model of the repository's
// fixtures/, of ../shared/models and of the ONNX backend tests in
// ../shared/onnx-v1.22 runs in both the built-in executor and ONNX Runtime
// (runtimes/ort, cgo) on the same inputs, and the outputs must agree within
// verify's tolerance, which scales with each output (see
// TestExecutorAgreesWithORT). docs/ort-agreement.md has the counts and
// what each list holds.
//
// It is a package of its own so that the executor's package stays free of
// cgo: the test needs ONNX Runtime's shared library and follows the
// ONNXCONV_SKIP_ORT / ONNXCONV_REQUIRE_ORT scheme of internal/testpaths.
package ortagree
