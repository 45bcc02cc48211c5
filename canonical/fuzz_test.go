package canonical

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// FuzzLoad checks that decoding arbitrary bytes never panics; that a model
// that decodes means what proto.Unmarshal reads from the same bytes; and
// that it can be validated, summarized, encoded and decoded again to the
// same message. The seed corpus (testdata/fuzz/FuzzLoad) holds small real
// models.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, "", LoadOptions{})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		want := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, want); err != nil {
			t.Fatalf("Decode accepted bytes that proto.Unmarshal rejects: %v", err)
		}
		got, err := m.ToProto()
		if err != nil {
			t.Fatalf("ToProto: %v", err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("Decode+ToProto differs from proto.Unmarshal")
		}
		_ = Validate(m)
		_ = Summarize(m)
		if m.Graph != nil {
			_, _ = m.Graph.TopoSort()
		}
		var buf bytes.Buffer
		if err := Encode(&buf, m, SaveOptions{}); err != nil {
			return // external data, which has no folder here
		}
		m2, err := Decode(buf.Bytes(), "", LoadOptions{})
		if err != nil {
			t.Fatalf("a model that decoded once does not decode after Encode: %v", err)
		}
		got2, err := m2.ToProto()
		if err != nil {
			t.Fatalf("ToProto after Encode: %v", err)
		}
		if !proto.Equal(got2, want) {
			t.Fatalf("Encode+Decode changed the model")
		}
	})
}
