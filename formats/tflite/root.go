package tflite

import fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"

// Root is the Model table of the flatbuffer model. Every read of a TFLite
// file starts here: the buffer is cut to its length (a full slice
// expression), so an offset or a length that points past the file's end
// fails a bounds check instead of reading the bytes that follow it in
// memory (a slice from os.ReadFile, or the fuzzer's shared buffer, often
// has capacity beyond its length: a 1.8 KB file once read a 16 MB "name"
// from there).
func Root(model []byte) *fb.Model {
	return fb.GetRootAsModel(model[:len(model):len(model)], 0)
}
