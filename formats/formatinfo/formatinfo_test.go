package formatinfo

import "testing"

func TestMatch(t *testing.T) {
	head := []byte("0123ONNXrest")
	if !MatchMagic(head, []Magic{{Offset: 0, Bytes: []byte("x")}, {Offset: 4, Bytes: []byte("ONNX")}}) {
		t.Error("magic at offset 4 not found")
	}
	for _, m := range []Magic{{Offset: 5, Bytes: []byte("ONNX")}, {Offset: 10, Bytes: []byte("rest")}, {Offset: -1, Bytes: []byte("0")}, {Offset: 0}} {
		if MatchMagic(head, []Magic{m}) {
			t.Errorf("%+v matched", m)
		}
	}
	if n := ExtensionLength("/d/model.TAR.gz", []string{".gz", ".tar.gz", ".zip"}); n != len(".tar.gz") {
		t.Errorf("ExtensionLength = %d", n)
	}
	if n := ExtensionLength("/d.gz/model", []string{".gz"}); n != 0 || MatchExtension("/d.gz/model", []string{".gz"}) {
		t.Errorf("folder extension matched: %d", n)
	}
}
