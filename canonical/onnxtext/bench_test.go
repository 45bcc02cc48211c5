package onnxtext

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"google.golang.org/protobuf/proto"
)

// BenchmarkFormatParse formats and parses a mid-size model (27 KB of
// protobuf: an expanded function with If subgraphs and constants).
func BenchmarkFormatParse(b *testing.B) {
	path := filepath.Join(sharedDir(b), "onnx-v1.22", "backend-tests", "node", "test_affine_grid_2d_align_corners_expanded", "model.onnx")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skip(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		b.Fatal(err)
	}
	text, err := Format(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := Format(m)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Parse("bench", out); err != nil {
			b.Fatal(err)
		}
	}
}
