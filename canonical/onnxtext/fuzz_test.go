package onnxtext

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzParse checks that Parse never panics or hangs, and that whatever it
// accepts is expressible and survives Format→Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(baseText))
	f.Add([]byte(`g (float[N] x) => (float[N] y) { y = Neg (x) }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse("fuzz", src)
		if err != nil {
			if strings.Contains(err.Error(), "internal parser error") {
				t.Fatalf("parser panicked: %v", err)
			}
			return
		}
		if err := Expressible(m); err != nil {
			t.Fatalf("parsed model not expressible: %v", err)
		}
		text, err := Format(m)
		if err != nil {
			t.Fatalf("Format of a parsed model: %v", err)
		}
		back, err := Parse("formatted", text)
		if err != nil {
			t.Fatalf("Parse(Format(m)): %v\n%s", err, text)
		}
		if !proto.Equal(back, m) {
			t.Fatalf("Format→Parse differs:\n%s", text)
		}
	})
}
