package tflite

import (
	"encoding/binary"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"

	"github.com/onnxconv/onnxconv/internal/recovered"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzImport feeds arbitrary bytes to Import: it must return a model or an
// error, never panic, and never report a panic of its own code (a
// recovered.Error: a panic outside the flatbuffers accessors). The seed
// corpus in testdata/fuzz/FuzzImport holds the fixtures; the fixtures are
// also added here, and one-op Landmarks2TransformMatrix models of both
// versions with the custom_options of fixtures/mediapipe (FlexBuffers
// maps the flatbuffers library wrote, some that MediaPipe's kernel
// refuses).
func FuzzImport(f *testing.F) {
	for _, name := range fixtureModels {
		testpaths.AddFiles(f, fixture(name+".tflite"))
	}
	for _, s := range []struct {
		opts    string
		version int32
		in      []int32
	}{
		{"matrix_face/options.bin", 2, []int32{1, 12, 3}}, {"matrix_odd/options.bin", 2, []int32{1, 9, 3}},
		{"matrix_v1_face/options.bin", 1, []int32{1, 1, 1, 36}}, {"matrix_v1_odd/options.bin", 1, []int32{1, 1, 1, 27}},
		{"matrix_v1_refused/subset_empty.bin", 1, []int32{1, 1, 1, 15}}, {"matrix_v1_refused/output_hw.bin", 1, []int32{1, 1, 1, 15}},
	} {
		f.Add(landmarksMatrixModel(s.version, readFile(f, "../../fixtures/mediapipe/data/"+s.opts), s.in...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mp, err := importProto(data, Options{})
		if err != nil {
			if mp != nil {
				t.Fatalf("model and error both returned")
			}
			if recovered.In(err) {
				t.Fatalf("converter panicked: %v", err)
			}
			return
		}
		if mp.GetGraph() == nil {
			t.Fatalf("nil graph without error")
		}
	})
}

// Hostile files give clear errors.
func TestHostileInputs(t *testing.T) {
	good := readFile(t, fixture("cnn.tflite"))
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "too short"},
		"not tflite":     {[]byte("hello world, not a model"), "identifier"},
		"truncated half": {good[:len(good)/2], ""},
		"truncated 12":   {good[:12], ""},
		"root offset":    {mutate(func(b []byte) []byte { binary.LittleEndian.PutUint32(b, 0xfffffff0); return b }), "root table offset"},
	}
	// Random bytes behind a valid header.
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 200; i++ {
		b := make([]byte, 9+rng.Intn(300))
		rng.Read(b)
		copy(b[4:], "TFL3")
		binary.LittleEndian.PutUint32(b, uint32(8+rng.Intn(len(b)-8)))
		cases["random"+string(rune('A'+i%26))+string(rune('a'+i/26))] = struct {
			data []byte
			want string
		}{b, ""}
	}
	for name, tc := range cases {
		_, err := importProto(tc.data, Options{})
		if err == nil {
			// Random bytes may decode as an empty but valid model; only the
			// named cases must fail.
			if !strings.HasPrefix(name, "random") {
				t.Errorf("%s: no error", name)
			}
			continue
		}
		if recovered.In(err) {
			t.Errorf("%s: %v", name, err)
		}
		if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want it to mention %q", name, err, tc.want)
		}
	}
}

// buildModel writes a one-op model with flatbuffers directly, so that
// indices and sizes can lie.
type lie struct {
	bufferIndex  uint32 // weight tensor's buffer
	opcodeIndex  uint32
	inputIndex   int32 // the op's first input
	weightBytes  int   // bytes in the weight buffer
	subgraphs    int
	outputTensor int32
}

func buildModel(l lie) []byte {
	b := flatbuffers.NewBuilder(1024)
	str := func(s string) flatbuffers.UOffsetT { return b.CreateString(s) }
	ivec := func(v []int32, start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		start(b, len(v))
		for i := len(v) - 1; i >= 0; i-- {
			b.PrependInt32(v[i])
		}
		return b.EndVector(len(v))
	}
	// Buffers: 0 empty, 1 weights.
	data := b.CreateByteVector(make([]byte, l.weightBytes))
	fb.BufferStart(b)
	b0 := fb.BufferEnd(b)
	fb.BufferStart(b)
	fb.BufferAddData(b, data)
	b1 := fb.BufferEnd(b)
	tensor := func(name string, shape []int32, buf uint32) flatbuffers.UOffsetT {
		n := str(name)
		s := ivec(shape, fb.TensorStartShapeVector)
		fb.TensorStart(b)
		fb.TensorAddName(b, n)
		fb.TensorAddShape(b, s)
		fb.TensorAddBuffer(b, buf)
		fb.TensorAddType(b, fb.TensorTypeFLOAT32)
		return fb.TensorEnd(b)
	}
	t0 := tensor("x", []int32{1, 4}, 0)
	t1 := tensor("w", []int32{3, 4}, l.bufferIndex)
	t2 := tensor("y", []int32{1, 3}, 0)
	fb.SubGraphStartTensorsVector(b, 3)
	b.PrependUOffsetT(t2)
	b.PrependUOffsetT(t1)
	b.PrependUOffsetT(t0)
	tensors := b.EndVector(3)
	opIn := ivec([]int32{l.inputIndex, 1}, fb.OperatorStartInputsVector)
	opOut := ivec([]int32{2}, fb.OperatorStartOutputsVector)
	fb.OperatorStart(b)
	fb.OperatorAddOpcodeIndex(b, l.opcodeIndex)
	fb.OperatorAddInputs(b, opIn)
	fb.OperatorAddOutputs(b, opOut)
	op := fb.OperatorEnd(b)
	fb.SubGraphStartOperatorsVector(b, 1)
	b.PrependUOffsetT(op)
	ops := b.EndVector(1)
	gin := ivec([]int32{0}, fb.SubGraphStartInputsVector)
	gout := ivec([]int32{l.outputTensor}, fb.SubGraphStartOutputsVector)
	fb.SubGraphStart(b)
	fb.SubGraphAddTensors(b, tensors)
	fb.SubGraphAddInputs(b, gin)
	fb.SubGraphAddOutputs(b, gout)
	fb.SubGraphAddOperators(b, ops)
	sg := fb.SubGraphEnd(b)
	fb.OperatorCodeStart(b)
	fb.OperatorCodeAddBuiltinCode(b, fb.BuiltinOperatorFULLY_CONNECTED)
	fb.OperatorCodeAddDeprecatedBuiltinCode(b, int8(fb.BuiltinOperatorFULLY_CONNECTED))
	fb.OperatorCodeAddVersion(b, 1)
	oc := fb.OperatorCodeEnd(b)
	fb.ModelStartOperatorCodesVector(b, 1)
	b.PrependUOffsetT(oc)
	codes := b.EndVector(1)
	fb.ModelStartSubgraphsVector(b, l.subgraphs)
	for i := 0; i < l.subgraphs; i++ {
		b.PrependUOffsetT(sg)
	}
	sgs := b.EndVector(l.subgraphs)
	fb.ModelStartBuffersVector(b, 2)
	b.PrependUOffsetT(b1)
	b.PrependUOffsetT(b0)
	bufs := b.EndVector(2)
	fb.ModelStart(b)
	fb.ModelAddVersion(b, 3)
	fb.ModelAddOperatorCodes(b, codes)
	fb.ModelAddSubgraphs(b, sgs)
	fb.ModelAddBuffers(b, bufs)
	m := fb.ModelEnd(b)
	b.FinishWithFileIdentifier(m, []byte("TFL3"))
	return b.FinishedBytes()
}

func TestLyingIndices(t *testing.T) {
	ok := lie{bufferIndex: 1, weightBytes: 48, subgraphs: 1, outputTensor: 2}
	if _, err := importProto(buildModel(ok), Options{}); err != nil {
		t.Fatalf("valid hand-built model: %v", err)
	}
	cases := []struct {
		name string
		l    lie
		want string
	}{
		{"buffer index", lie{bufferIndex: 9, weightBytes: 48, subgraphs: 1, outputTensor: 2}, "buffer index 9 out of range"},
		{"opcode index", lie{bufferIndex: 1, opcodeIndex: 5, weightBytes: 48, subgraphs: 1, outputTensor: 2}, "opcode index 5 out of range"},
		{"tensor index", lie{bufferIndex: 1, inputIndex: 77, weightBytes: 48, subgraphs: 1, outputTensor: 2}, "tensor index 77 out of range"},
		{"negative tensor index", lie{bufferIndex: 1, inputIndex: -5, weightBytes: 48, subgraphs: 1, outputTensor: 2}, "tensor index -5 out of range"},
		{"size lies", lie{bufferIndex: 1, weightBytes: 40, subgraphs: 1, outputTensor: 2}, "needs 48 bytes, buffer 1 holds 40"},
		{"no subgraphs", lie{bufferIndex: 1, weightBytes: 48, subgraphs: 0, outputTensor: 2}, "no subgraphs"},
		{"graph output index", lie{bufferIndex: 1, weightBytes: 48, subgraphs: 1, outputTensor: 3}, "tensor index 3 out of range"},
	}
	for _, tc := range cases {
		_, err := importProto(buildModel(tc.l), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := importProto(buildModel(ok), Options{Subgraph: 1}); err == nil || !strings.Contains(err.Error(), "subgraph 1 out of range") {
		t.Errorf("subgraph option: %v", err)
	}
	if _, err := importProto(readFile(t, filepath.Join(sharedDir, "seanet", "conv1.tflite")), Options{Opset: 17}); err == nil || !strings.Contains(err.Error(), "opset 21") {
		t.Errorf("int16 at opset 17: %v", err)
	}
}
