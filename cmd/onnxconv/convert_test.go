package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func backendModel(t *testing.T, suite, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
	return filepath.Join(dir, "..", "shared", "onnx-v1.22", "backend-tests", suite, name, "model.onnx")
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func loadProto(t *testing.T, path string) *onnxpb.ModelProto {
	t.Helper()
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mp, err := m.ToProtoInline()
	if err != nil {
		t.Fatal(err)
	}
	return proto.Clone(mp).(*onnxpb.ModelProto)
}

func TestConvertBinary(t *testing.T) {
	in := backendModel(t, "pytorch-converted", "test_Conv2d")
	out := filepath.Join(t.TempDir(), "out.onnx")
	if code, _, stderr := runCmd("convert", in, out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !proto.Equal(loadProto(t, out), loadProto(t, in)) {
		t.Fatal("converted model differs from the input")
	}
}

func TestConvertExternalData(t *testing.T) {
	in := backendModel(t, "pytorch-converted", "test_Conv2d")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.onnx")
	if code, _, stderr := runCmd("convert", in, out, "--external-data", "--external-threshold", "100"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := os.Stat(out + ".data")
	if err != nil {
		t.Fatalf("no external data file: %v", err)
	}
	if st.Size() != 288 { // the 4x3x3x2 float weight (the 16-byte bias stays inline)
		t.Fatalf("external data file has %d bytes, want 288", st.Size())
	}
	// Converted again without --external-data, it keeps external data (as
	// its input had); with --no-external-data the data is inlined and
	// equals the input.
	again := filepath.Join(dir, "again.onnx")
	if code, _, stderr := runCmd("convert", out, again, "--external-threshold", "100"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(again + ".data"); err != nil || st.Size() != 288 {
		t.Fatalf("a model with external data was not written with external data (%v)", err)
	}
	back := filepath.Join(dir, "back.onnx")
	if code, _, stderr := runCmd("convert", out, back, "--no-external-data"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(back + ".data"); !os.IsNotExist(err) {
		t.Fatalf("--no-external-data wrote %s.data (%v)", back, err)
	}
	if !proto.Equal(loadProto(t, back), loadProto(t, in)) {
		t.Fatal("model differs after external data and back")
	}
}

func TestConvertText(t *testing.T) {
	in := backendModel(t, "node", "test_if")
	dir := t.TempDir()
	txt := filepath.Join(dir, "m.onnxtxt")
	if code, _, stderr := runCmd("convert", in, txt); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	src, err := os.ReadFile(txt)
	if err != nil || !strings.Contains(string(src), "If (cond)") {
		t.Fatalf("text output unexpected (%v):\n%s", err, src)
	}
	back := filepath.Join(dir, "back.onnx")
	if code, _, stderr := runCmd("convert", txt, back); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, stdout, _ := runCmd("check", back); code != 0 || !strings.Contains(stdout, "valid") {
		t.Fatalf("check of the model read back from text: exit %d %s", code, stdout)
	}
}

func TestConvertUnreadableKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "bad.onnx", []byte{0x0a, 0xff})
	out := writeFile(t, dir, "out.onnx", []byte("keep me"))
	code, _, stderr := runCmd("convert", in, out)
	if code != 2 || !strings.Contains(stderr, in) {
		t.Fatalf("exit %d, want 2 naming %s: %s", code, in, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Fatal("the existing output was modified")
	}
	if code, _, _ := runCmd("convert", in); code != 2 {
		t.Fatalf("convert with one argument: exit %d, want 2", code)
	}
}

func TestInspect(t *testing.T) {
	in := backendModel(t, "pytorch-converted", "test_Conv2d")
	code, stdout, stderr := runCmd("inspect", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"ir_version:  3", "pytorch", "ai.onnx 6", "float[2,3,7,5]", "Conv", "parameters:  76 in 2 initializers, 304 B"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("inspect output lacks %q:\n%s", w, stdout)
		}
	}
	code, stdout, stderr = runCmd("inspect", "--json", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s struct {
		File       string
		IRVersion  int64 `json:"ir_version"`
		Parameters int64
		Ops        []struct {
			Op    string
			Count int
		}
		Inputs []struct{ Name, Type string }
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if s.File != in || s.IRVersion != 3 || s.Parameters != 76 || len(s.Ops) != 1 || s.Ops[0].Op != "Conv" || s.Ops[0].Count != 1 || len(s.Inputs) != 3 || s.Inputs[0].Type != "float[2,3,7,5]" {
		t.Fatalf("unexpected summary: %+v", s)
	}
}

func TestInspectExternalFiles(t *testing.T) {
	in := backendModel(t, "pytorch-converted", "test_Conv2d")
	out := filepath.Join(t.TempDir(), "e.onnx")
	if code, _, stderr := runCmd("convert", in, out, "--external-data", "--external-threshold", "1"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, _ := runCmd("inspect", out)
	if code != 0 || !strings.Contains(stdout, "e.onnx.data") || !strings.Contains(stdout, "2 tensors, 304 B") {
		t.Fatalf("inspect does not list the external data file:\n%s", stdout)
	}
}
