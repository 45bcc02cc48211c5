package tensorflow

import (
	"context"
	"errors"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// refused imports path and checks that it fails, without a panic, with
// an error naming the file and containing want. The 60 s guard catches a
// hang only (wall time on a loaded machine says nothing of the work
// done); the 5 s CPU limit on hostile files is held by cmd/onnxconv's
// TestHostileFixtures.
func refused(t *testing.T, path string, opts map[string]string, want ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- errors.New("PANIC")
			}
		}()
		res, err := New().Import(context.Background(), path, opts)
		if err == nil {
			res.Model.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("%s: imported, want an error", path)
		}
		if err.Error() == "PANIC" {
			t.Fatalf("%s: panicked", path)
		}
		if !strings.Contains(err.Error(), filepath.Base(path)) && !strings.Contains(err.Error(), filepath.Base(filepath.Dir(path))) {
			t.Errorf("error %q does not name the file", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: not refused within 60 s: a hang", path)
	}
	return nil
}

// copySavedModel copies the SavedModel folder name into a temporary folder
// and returns the copy's path.
func copySavedModel(t *testing.T, name string) string {
	t.Helper()
	src := testpaths.Shared(t, "models", "tf_savedmodel", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func node(name, op string, inputs ...string) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: op, Input: inputs, Attr: map[string]*tfpb.AttrValue{
		"T": {Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_FLOAT}}}}
}

// A TF1 while loop (Enter/Merge/Switch/NextIteration/Exit) is refused
// naming the op, the node and what to do.
func TestSwitchMergeRefused(t *testing.T) {
	x := &tfpb.NodeDef{Name: "x", Op: "Placeholder", Attr: map[string]*tfpb.AttrValue{
		"dtype": {Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_FLOAT}}}}
	gd := &tfpb.GraphDef{Node: []*tfpb.NodeDef{
		x,
		node("pred", "Placeholder"),
		node("while/Enter", "Enter", "x"),
		node("while/Merge", "Merge", "while/Enter", "while/NextIteration"),
		node("while/Switch", "Switch", "while/Merge", "pred"),
		node("while/Identity", "Identity", "while/Switch:1"),
		node("while/NextIteration", "NextIteration", "while/Identity"),
		node("while/Exit", "Exit", "while/Switch"),
	}}
	b, err := proto.Marshal(gd)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "loop.pb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = refused(t, p, nil, "while/", "TF1 control flow", "re-export")
	// TF1 frames are recovered (or refused) by the TF-op mapping.
	var oe *tfops.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v (%T), want a *tfops.OpError", err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "Enter") && !strings.Contains(msg, "Switch") && !strings.Contains(msg, "Merge") {
		t.Errorf("error %q does not name the control-flow op", err)
	}
	t.Logf("%v", err)
}

func TestTruncatedGraphDef(t *testing.T) {
	data, err := os.ReadFile(testpaths.Shared(t, "models", "tf_graphdef", "tf2onnx_fc-layers", "frozen.pb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 10, 200, len(data) / 2, len(data) - 3} {
		p := filepath.Join(t.TempDir(), "frozen.pb")
		_ = os.WriteFile(p, data[:n], 0o644)
		refused(t, p, nil)
	}
}

func TestTruncatedSavedModel(t *testing.T) {
	for _, f := range []string{"saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001"} {
		for _, frac := range []float64{0, 0.3, 0.9} {
			dir := copySavedModel(t, "tfjs_node_module_with_multiple_signatures")
			p := filepath.Join(dir, f)
			b, _ := os.ReadFile(p)
			n := int(float64(len(b)) * frac)
			if n == len(b) {
				n--
			}
			_ = os.WriteFile(p, b[:n], 0o644)
			res, err := New().Import(context.Background(), dir, nil)
			if err == nil {
				// A SavedModel whose signatures read no variable may
				// convert without them; it must not panic or hang.
				res.Model.Close()
				if f == "saved_model.pb" {
					t.Errorf("%s cut to %d bytes: imported", f, n)
				}
				continue
			}
			if !strings.Contains(err.Error(), dir) && !strings.Contains(err.Error(), filepath.Base(f)) {
				t.Errorf("%s cut to %d: error %q does not name the file", f, n, err)
			}
		}
	}
	// Variables missing altogether.
	dir := copySavedModel(t, "tf2onnx_regression")
	_ = os.RemoveAll(filepath.Join(dir, "variables"))
	refused(t, dir, nil)
}

// A tensor bundle whose index lies about offsets and sizes is refused.
func TestLyingBundle(t *testing.T) {
	dir := copySavedModel(t, "tf2onnx_regression")
	idx := filepath.Join(dir, "variables", "variables.index")
	orig, _ := os.ReadFile(idx)
	// Flip each byte of the index in turn (a few hundred files): every
	// result is an error or a model, within the time limit, never a panic.
	start := time.Now()
	for i := 0; i < len(orig); i++ {
		b := append([]byte(nil), orig...)
		b[i] ^= 0xff
		_ = os.WriteFile(idx, b, 0o644)
		res, err := New().Import(context.Background(), dir, nil)
		if err == nil {
			res.Model.Close()
		}
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("%d corrupt indexes took %v", len(orig), time.Since(start))
	}
	// The data shard shorter than the index says.
	_ = os.WriteFile(idx, orig, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "variables", "variables.data-00000-of-00001"), []byte{1, 2}, 0o644)
	refused(t, dir, nil)
}

// FuzzGraphDef: frozen GraphDef bytes never panic or hang the importer.
func FuzzGraphDef(f *testing.F) {
	testpaths.AddFiles(f, "../../../shared/models/tf_graphdef/tf2onnx_regression/frozen.pb")
	// Small graphs, cheap to mutate: two of the hostile fixtures'
	// GraphDefs (a plain graph, a Const fill; the fan-outs take a second
	// each, too slow for a seed).
	for _, c := range []string{"graphdef_as_onnx", "graphdef_const_fill"} {
		testpaths.AddFiles(f, filepath.Join("../../fixtures/hostile/tensorflow", c, "frozen.pb"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "frozen.pb")
		_ = os.WriteFile(p, data, 0o644)
		_ = New().Detect(p, data)
		if res, err := New().Import(context.Background(), p, nil); err == nil {
			res.Model.Close()
		}
	})
}

// FuzzSavedModel: saved_model.pb bytes (beside real variables) and
// variables.index bytes (beside a real saved_model.pb) never panic or hang
// the importer.
func FuzzSavedModel(f *testing.F) {
	src := "../../../shared/models/tf_savedmodel/tf2onnx_regression"
	pb, err1 := os.ReadFile(filepath.Join(src, "saved_model.pb"))
	idx, err2 := os.ReadFile(filepath.Join(src, "variables", "variables.index"))
	shard, err3 := os.ReadFile(filepath.Join(src, "variables", "variables.data-00000-of-00001"))
	if err := errors.Join(err1, err2, err3); err != nil {
		f.Fatalf("fuzz seeds from ../shared/models: %v", err)
	}
	f.Add(pb, false)
	f.Add(idx, true)
	f.Fuzz(func(t *testing.T, data []byte, isIndex bool) {
		dir := t.TempDir()
		_ = os.MkdirAll(filepath.Join(dir, "variables"), 0o755)
		p, i := data, idx
		if isIndex {
			p, i = pb, data
		}
		_ = os.WriteFile(filepath.Join(dir, "saved_model.pb"), p, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.index"), i, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.data-00000-of-00001"), shard, 0o644)
		if res, err := New().Import(context.Background(), dir, nil); err == nil {
			res.Model.Close()
		}
	})
}
