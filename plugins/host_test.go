//go:build unix

package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

func TestDetect(t *testing.T) {
	h := newHost(t, testOptions(t, pluginDir(t, "good", "failing", "panic")))
	work := t.TempDir()
	ctx := context.Background()
	cases := []struct {
		file, content string
		name, format  string
		wantErr       error
	}{
		// Magic bytes at offset 4, whatever the extension.
		{file: "a.bin", content: "abcdGOODMODEL\nRelu\n", name: "good", format: "goodfmt"},
		// Magic bytes win over another importer's extension.
		{file: "b.failing", content: "xxxxGOODMODEL\n", name: "good", format: "goodfmt"},
		// The magic must be at its offset.
		{file: "c.bin", content: "GOODMODEL\n", wantErr: ErrNoMatch},
		// Extension, case-insensitive.
		{file: "d.GOOD", content: "Relu\n", name: "good", format: "goodfmt"},
		{file: "e.failing", content: "Relu\n", name: "failing", format: "failing"},
		{file: "f.onnx", content: "Relu\n", wantErr: ErrNoMatch},
		// Detection does not run the importer: a plugin that panics in
		// Import is still chosen for its extension.
		{file: "g.panic", content: "", name: "panic", format: "panic"},
	}
	for _, c := range cases {
		path := writeFile(t, filepath.Join(work, c.file), c.content)
		name, format, err := h.Detect(ctx, path)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("Detect(%s) = %q, %v; want %v naming the file", c.file, name, err, c.wantErr)
			}
			continue
		}
		if err != nil || name != c.name || format != c.format {
			t.Errorf("Detect(%s) = %q, %q, %v; want %q, %q", c.file, name, format, err, c.name, c.format)
		}
	}
	if _, _, err := h.Detect(ctx, filepath.Join(work, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Detect(missing) error = %v", err)
	}
	assertNoChildren(t)
}

// Two importers claim the same extension: each is asked (its Detect call)
// and the most confident wins.
func TestDetectAsksPluginsWhenAmbiguous(t *testing.T) {
	opts := testOptions(t, pluginDir(t, "good"))
	// A built-in that claims ".good" too in its description, listed first.
	// Served by the misbehave binary in mode "failing", its real Detect only
	// knows ".failing" and says no; the good plugin says yes (0.5).
	opts.Executable = misbehaveBin
	opts.Builtins = []Builtin{{Name: "failing", Importer: &protocol.ImporterInfo{Description: importers.Description{Name: "failing", Format: "failing", Extensions: []string{".good"}}}}}
	h := newHost(t, opts)
	path := writeFile(t, filepath.Join(t.TempDir(), "x.good"), "Relu\n")
	name, _, err := h.Detect(context.Background(), path)
	if err != nil || name != "good" {
		t.Errorf("Detect = %q, %v; want good", name, err)
	}
	assertNoChildren(t)
}

func TestImportAndExport(t *testing.T) {
	h := newHost(t, testOptions(t, pluginDir(t, "good")))
	p, _ := h.Plugin("good")
	if p.Kind() != "importer+exporter" || strings.Join(p.Exporter.Targets, ",") != "optext" ||
		len(p.Importer.Magic) != 1 || p.Importer.Magic[0].Offset != 4 || string(p.Importer.Magic[0].Bytes) != "GOODMODEL" {
		t.Fatalf("plugin = %+v importer %+v exporter %+v", p, p.Importer, p.Exporter)
	}
	ctx := context.Background()
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "m.good"), "abcdGOODMODEL\nRelu\nTanh\nSoftmax\n")
	model := filepath.Join(work, "m.onnx")
	// An existing output is replaced only on success.
	writeFile(t, model, "old")
	if _, err := h.Import(ctx, "good", in, model, nil); err != nil {
		t.Fatalf("Import: %v", err)
	}
	if got := strings.Join(opTypes(readModel(t, model)), ","); got != "Relu,Tanh,Softmax" {
		t.Errorf("op types = %s", got)
	}
	txt := filepath.Join(work, "m.txt")
	if _, err := h.Export(ctx, "good", model, txt, "optext", nil); err != nil {
		t.Fatalf("Export: %v", err)
	}
	if data, err := os.ReadFile(txt); err != nil || string(data) != "Relu\nTanh\nSoftmax\n" {
		t.Errorf("exported %q, %v", data, err)
	}
	// Unknown target: the plugin's error, no output.
	_, err := h.Export(ctx, "good", model, filepath.Join(work, "x.out"), "tensorrt", nil)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `does not write target "tensorrt"`) {
		t.Errorf("Export(tensorrt) error = %v", err)
	}
	// A failed import leaves the previous output untouched.
	bad := writeFile(t, filepath.Join(work, "bad.good"), "Relu\n")
	if _, err := h.Import(ctx, "failing", bad, model, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Import with an unknown plugin: %v", err)
	}
	if _, err := h.Export(ctx, "good", bad, model, "optext", nil); err == nil || !strings.Contains(err.Error(), "parsing input model") {
		t.Errorf("Export of a non-model: %v", err)
	}
	if got := strings.Join(opTypes(readModel(t, model)), ","); got != "Relu,Tanh,Softmax" {
		t.Errorf("after failed calls op types = %s", got)
	}
	assertDirEntries(t, work, "bad.good", "m.good", "m.onnx", "m.txt")
	if _, err := h.Import(ctx, "good", filepath.Join(work, "nope"), model, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Import of a missing file: %v", err)
	}
	if _, err := h.Import(ctx, "good", in, in, nil); err == nil {
		t.Error("Import onto its own input succeeded")
	}
	assertNoChildren(t)
}

func TestDiscover(t *testing.T) {
	path1 := pluginDir(t, "good", "failing")
	path2 := pluginDir(t, "good", "panic", "garbage")
	// Not plugins: wrong prefix, not executable.
	writeFile(t, filepath.Join(path2, "other-tool"), "#!/bin/sh\n")
	if err := os.WriteFile(filepath.Join(path2, ExecutablePrefix+"notexec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	user := pluginDir(t, "exit")
	opts := testOptions(t, path1+string(os.PathListSeparator)+"/does/not/exist"+string(os.PathListSeparator)+path2)
	opts.UserDir = user
	opts.Executable = misbehaveBin
	opts.Builtins = []Builtin{
		{Name: "failing"}, // shadows path1's; described by starting it
		{Name: "hang", Importer: &protocol.ImporterInfo{Description: importers.Description{Name: "hang", Format: "hang"}}},
	}
	infos, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range infos {
		got = append(got, p.Name+":"+p.Kind())
	}
	want := "failing:importer,hang:importer,good:importer+exporter,garbage:broken,panic:importer,exit:importer"
	if strings.Join(got, ",") != want {
		t.Errorf("discovered %s\nwant       %s", strings.Join(got, ","), want)
	}
	if p := findPlugin(infos, "failing"); p == nil || !p.Builtin || p.Path != misbehaveBin ||
		strings.Join(p.Args, " ") != "__plugin serve failing" || p.Importer.Version != "1.0" {
		t.Errorf("failing = %+v", p)
	}
	if p := findPlugin(infos, "good"); p == nil || p.Path != filepath.Join(path1, ExecutablePrefix+"good") {
		t.Errorf("good = %+v", p)
	}
	if p := findPlugin(infos, "garbage"); p == nil || !errors.Is(p.Err, ErrHandshake) {
		t.Errorf("garbage = %+v", p)
	}
	if p := findPlugin(infos, "exit"); p == nil || p.Path != filepath.Join(user, ExecutablePrefix+"exit") {
		t.Errorf("exit = %+v", p)
	}
	assertNoChildren(t)
}

func TestCheckModelFile(t *testing.T) {
	dir := t.TempDir()
	good, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(9), ProducerName: proto.String("x"),
		Graph:       &onnxpb.GraphProto{Name: proto.String("g"), Node: []*onnxpb.NodeProto{{OpType: proto.String("Relu")}}},
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(13)}}})
	if err != nil {
		t.Fatal(err)
	}
	noGraph, _ := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(9)})
	// A graph field longer than 64 KiB, to go through the seek path.
	big, _ := proto.Marshal(&onnxpb.ModelProto{Graph: &onnxpb.GraphProto{DocString: proto.String(strings.Repeat("d", 200<<10))},
		ProducerName: proto.String("after")})
	cases := []struct {
		name string
		data []byte
		want string // "" for valid
	}{
		{"good", good, ""},
		{"big", big, ""},
		{"empty", nil, "empty"},
		{"text", []byte("this is not an ONNX model"), "not an ONNX model"},
		{"truncated", good[:len(good)-3], "not an ONNX model"},
		{"truncated big", big[:len(big)-10], "past the end"},
		{"no graph", noGraph, "no graph"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkModelFile(path)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: checkModelFile = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestHeadTailBuffer(t *testing.T) {
	b := newHeadTailBuffer(4, 6)
	for _, s := range []string{"ab", "cdef", "ghij", "klmnopq", "r"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatal(n, err)
		}
	}
	if got := b.String(); got != "abcd\n[…]\nmnopqr" {
		t.Errorf("got %q", got)
	}
	b = newHeadTailBuffer(4, 6)
	b.Write([]byte("abcdefg"))
	if got := b.String(); got != "abcdefg" {
		t.Errorf("got %q", got)
	}
}

func TestKeyLine(t *testing.T) {
	cases := map[string]string{
		"log line\npanic: boom\n\ngoroutine 1 [running]:\nmain.main()\n":                                          "panic: boom",
		"runtime: out of memory: cannot allocate\nfatal error: out of memory\n":                                   "fatal error: out of memory",
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\nrax 0x0\ngs 0x0\n": "runtime/cgo: pthread_create failed: Resource temporarily unavailable",
		"giving up\n\n": "giving up",
		"":              "",
	}
	for in, want := range cases {
		if got := keyLine(in); got != want {
			t.Errorf("keyLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// A built-in plugin is the host executable started as `EXE __plugin serve
// NAME`; given its description it is not started to be listed or detected.
func TestBuiltinImport(t *testing.T) {
	opts := testOptions(t, "")
	opts.NoThirdParty = true
	opts.Executable = misbehaveBin
	opts.Builtins = []Builtin{{Name: "good", Importer: &protocol.ImporterInfo{Description: importers.Description{Name: "good", Format: "goodfmt",
		Magic: []protocol.Magic{{Offset: 4, Bytes: []byte("GOODMODEL")}}}}}}
	h := newHost(t, opts)
	if len(h.Plugins()) != 1 {
		t.Fatalf("plugins = %+v", h.Plugins())
	}
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "in"), "1234GOODMODEL\nConv\nRelu\n")
	name, format, err := h.Detect(context.Background(), in)
	if err != nil || name != "good" || format != "goodfmt" {
		t.Fatalf("Detect = %q %q %v", name, format, err)
	}
	out := filepath.Join(work, "out.onnx")
	if _, err := h.Import(context.Background(), name, in, out, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(opTypes(readModel(t, out)), ","); got != "Conv,Relu" {
		t.Errorf("op types = %s", got)
	}
	assertNoChildren(t)
}

// BenchmarkImport measures one import call: start the plugin process,
// handshake, import a small file, stop the process.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	if err := os.Link(misbehaveBin, filepath.Join(dir, ExecutablePrefix+"good")); err != nil {
		b.Fatal(err)
	}
	h, err := NewHost(context.Background(), Options{PluginPath: dir, UserDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	in := filepath.Join(dir, "in.good")
	if err := os.WriteFile(in, []byte("Relu\nTanh\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out.onnx")
	for b.Loop() {
		if _, err := h.Import(context.Background(), "good", in, out, nil); err != nil {
			b.Fatal(err)
		}
	}
}
