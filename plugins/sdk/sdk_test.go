package sdk

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

func model(ops ...string) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{Name: proto.String("g")}
	for _, op := range ops {
		g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String(op)})
	}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g}
}

func entries(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

func TestValidate(t *testing.T) {
	imp := func(context.Context, []byte, map[string]string) (*onnxpb.ModelProto, error) { return nil, nil }
	cases := []struct {
		p    Plugin
		want string
	}{
		{Plugin{}, "neither"},
		{Plugin{Importer: &Importer{Import: imp}}, "no Name"},
		{Plugin{Importer: &Importer{Name: "x"}}, "neither Import nor ImportFile"},
		{Plugin{Importer: &Importer{Name: "x", Import: imp, Extensions: []string{"csv"}}}, "does not start with a dot"},
		{Plugin{Importer: &Importer{Name: "x", Import: imp, Magic: []Magic{{Offset: 3}}}}, "empty"},
		{Plugin{Exporter: &Exporter{Name: "y", ExportFile: func(context.Context, string, string, string, map[string]string) error { return nil }}}, "no Targets"},
		{Plugin{Importer: &Importer{Name: "x", Import: imp, Extensions: []string{".CSV"}}}, ""},
	}
	for _, c := range cases {
		err := c.p.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
	ii, ei := Plugin{Importer: cases[len(cases)-1].p.Importer}.Info()
	if ei != nil || ii.Format != "x" || ii.Extensions[0] != ".csv" {
		t.Errorf("Info = %+v, %+v", ii, ei)
	}
}

func TestRunNotStartedByHost(t *testing.T) {
	t.Setenv(protocol.EnvMagicCookie, "")
	err := Run(Plugin{Importer: &Importer{Name: "x", ImportFile: func(context.Context, string, string, map[string]string) error { return nil }}})
	if !errors.Is(err, ErrNotStartedByHost) {
		t.Errorf("Run = %v", err)
	}
	if err := Run(Plugin{}); err == nil || errors.Is(err, ErrNotStartedByHost) {
		t.Errorf("Run(invalid) = %v", err)
	}
	t.Setenv(protocol.EnvMagicCookie, protocol.MagicCookie)
	t.Setenv(protocol.EnvMemoryLimit, "12 GB")
	err = Run(Plugin{Importer: &Importer{Name: "x", ImportFile: func(context.Context, string, string, map[string]string) error { return nil }}})
	if err == nil || !strings.Contains(err.Error(), "want a number of bytes") {
		t.Errorf("Run with a bad memory limit = %v", err)
	}
}

func TestImporterServer(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("Relu Tanh"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	s := &importerServer{stderr: &stderr, imp: &Importer{Name: "t", Extensions: []string{".txt"}, Magic: []Magic{{Offset: 2, Bytes: []byte("lu")}},
		Import: func(ctx context.Context, data []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			switch opts["mode"] {
			case "panic":
				var empty []string
				_ = empty[len(opts)] // a runtime panic: index out of range
			case "nil":
				return nil, nil
			case "fail":
				return nil, errors.New("bad input")
			}
			Warn(ctx, "op count %d", len(strings.Fields(string(data))))
			return model(strings.Fields(string(data))...), nil
		}}}
	ctx := context.Background()
	out := filepath.Join(dir, "out.onnx")
	w, err := s.Import(ctx, in, out, nil)
	if err != nil || strings.Join(w, ";") != "op count 2" {
		t.Fatalf("Import = %q, %v", w, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil || len(m.GetGraph().GetNode()) != 2 || m.GetGraph().GetNode()[1].GetOpType() != "Tanh" {
		t.Errorf("model = %v, %v", m, err)
	}
	for mode, want := range map[string]string{"panic": "panic in Import: runtime error: index out of range [1] with length 0", "nil": "no model", "fail": "bad input"} {
		out := filepath.Join(dir, mode+".onnx")
		_, err := s.Import(ctx, in, out, map[string]string{"mode": mode})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mode %s: %v, want %q", mode, err, want)
		}
	}
	if !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("no stack trace on stderr: %q", stderr.String())
	}
	if got := entries(t, dir); got != "in.txt,out.onnx" {
		t.Errorf("folder holds %s", got)
	}
	// Default detection: magic (1), then extension (0.5).
	for _, c := range []struct {
		path, head string
		ok         bool
		conf       float32
	}{{"a.bin", "Relu", true, 1}, {"a.TXT", "Tanh", true, 0.5}, {"a.bin", "Tanh", false, 0}, {"a.bin", "R", false, 0}} {
		ok, conf, err := s.Detect(ctx, c.path, []byte(c.head))
		if ok != c.ok || conf != c.conf || err != nil {
			t.Errorf("Detect(%s, %s) = %v %v %v", c.path, c.head, ok, conf, err)
		}
	}
}

func TestExporterServer(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.onnx")
	data, _ := proto.Marshal(model("Relu", "Add"))
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &exporterServer{stderr: io.Discard, exp: &Exporter{Name: "e", Targets: []string{"txt"},
		Export: func(ctx context.Context, m *onnxpb.ModelProto, target string, opts map[string]string, w io.Writer) error {
			for _, n := range m.GetGraph().GetNode() {
				if _, err := io.WriteString(w, n.GetOpType()+"\n"); err != nil {
					return err
				}
				if opts["panic"] != "" {
					panic("half written")
				}
			}
			return nil
		}}}
	ctx := context.Background()
	if _, err := s.Export(ctx, in, filepath.Join(dir, "x.txt"), "trt", nil); err == nil || !strings.Contains(err.Error(), `does not write target "trt"`) {
		t.Errorf("Export(trt) = %v", err)
	}
	if _, err := s.Export(ctx, in, filepath.Join(dir, "p.txt"), "txt", map[string]string{"panic": "1"}); err == nil || !strings.Contains(err.Error(), "half written") {
		t.Errorf("Export(panic) = %v", err)
	}
	out := filepath.Join(dir, "ok.txt")
	if _, err := s.Export(ctx, in, out, "txt", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "Relu\nAdd\n" {
		t.Errorf("exported %q", got)
	}
	if got := entries(t, dir); got != "m.onnx,ok.txt" {
		t.Errorf("folder holds %s", got)
	}
}

func TestWarnOutsideCall(t *testing.T) {
	Warn(context.Background(), "ignored") // must not panic
	ctx, w := withWarnings(context.Background())
	Warn(ctx, "a %d", 1)
	if got := w.all(); len(got) != 1 || got[0] != "a 1" {
		t.Errorf("warnings = %q", got)
	}
}
