package canonical_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/opset/convert"
)

// cloneTestModels lists every ONNX 1.22 backend-test model and every
// fixture model.
func cloneTestModels(t *testing.T) []string {
	t.Helper()
	root := testpaths.RepoRoot(t)
	backend, err := filepath.Glob(filepath.Join(root, "..", "shared", "onnx-v1.22", "backend-tests", "*", "*", "model.onnx"))
	if err != nil || len(backend) == 0 {
		t.Fatalf("no backend-test models (%v)", err)
	}
	fixtures, err := filepath.Glob(filepath.Join(root, "fixtures", "models", "*", "model.onnx"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixture models (%v)", err)
	}
	return append(backend, fixtures...)
}

func snapshotProto(t *testing.T, m *canonical.Model) *onnxpb.ModelProto {
	t.Helper()
	mp, err := m.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	return proto.Clone(mp).(*onnxpb.ModelProto)
}

// otherOpset picks a target opset away from the model's own.
func otherOpset(m *canonical.Model) int {
	if m.Opset("") >= 14 {
		return 7
	}
	return 21
}

func TestCloneConvertLeavesOriginal(t *testing.T) {
	paths := cloneTestModels(t)
	changed := 0
	for _, p := range paths {
		m, err := canonical.Load(p, canonical.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		before := snapshotProto(t, m)
		c, err := m.Clone()
		if err != nil {
			t.Fatalf("%s: Clone: %v", p, err)
		}
		if got := snapshotProto(t, c); !proto.Equal(got, before) {
			t.Errorf("%s: ToProto(clone) differs from ToProto(model)", p)
		}
		// Blocked conversions leave the clone partly converted: that is a
		// mutation too, so errors are not failures here.
		_, _ = convert.Convert(c, convert.Options{To: otherOpset(m)})
		if !proto.Equal(snapshotProto(t, m), before) {
			t.Errorf("%s: converting the clone to opset %d changed the original", p, otherOpset(m))
		}
		if !proto.Equal(snapshotProto(t, c), before) {
			changed++
		}
		m.Close()
		c.Close()
	}
	t.Logf("%d models; %d clones changed by the conversion, no original changed", len(paths), changed)
	if changed < len(paths)/2 {
		t.Fatalf("only %d of %d clones changed: the conversion did not run", changed, len(paths))
	}
}

func TestCloneAdaptLeavesOriginal(t *testing.T) {
	p15, err := profiles.Get("onnxruntime-1.15")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Glob(filepath.Join(testpaths.RepoRoot(t), "fixtures", "models", "*", "model.onnx"))
	if len(fixtures) == 0 {
		t.Fatal("no fixture models")
	}
	for _, p := range fixtures {
		m, err := canonical.Load(p, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before := snapshotProto(t, m)
		for _, opset := range []int{7, 19} {
			c, err := m.Clone()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adapt.Adapt(c, p15, adapt.Options{Opset: opset, AllowViolations: true}); err != nil {
				t.Logf("%s: adapt to opset %d: %v", filepath.Base(filepath.Dir(p)), opset, err)
			}
			if proto.Equal(snapshotProto(t, c), before) {
				t.Logf("%s: adapt to opset %d left the model as it was", filepath.Base(filepath.Dir(p)), opset)
			}
			if !proto.Equal(snapshotProto(t, m), before) {
				t.Errorf("%s: adapting the clone to onnxruntime-1.15 opset %d changed the original", p, opset)
			}
			c.Close()
		}
		m.Close()
	}
}

// scribble changes, in place, everything of g a caller can reach.
func scribble(g *canonical.Graph) {
	_ = canonical.WalkGraphs(g, func(g *canonical.Graph, _ string) error {
		g.Name += "_x"
		g.DocString += "x"
		for _, list := range [][]*canonical.Value{g.Inputs, g.Outputs, g.ValueInfo, g.Initializers} {
			for _, v := range list {
				if v == nil {
					continue
				}
				_ = g.RenameValue(v, v.Name+"_x")
				if tt := v.Type.GetTensorType(); tt != nil {
					tt.ElemType = proto.Int32(99)
					for _, d := range tt.GetShape().GetDim() {
						d.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 12345}
					}
				}
				if v.Const != nil {
					for i := range v.Const.Dims {
						v.Const.Dims[i] = 7
					}
					v.Const.DataType = canonical.Double
					v.Const.SetBytes([]byte{1, 2, 3})
				}
			}
		}
		for i := range g.MetadataProps {
			g.MetadataProps[i].Value += "x"
		}
		for _, n := range append([]*canonical.Node(nil), g.Nodes...) {
			n.Name += "_x"
			n.OpType += "X"
			for _, o := range n.Outputs {
				if o != nil {
					_ = g.RenameValue(o, o.Name+"_y")
				}
			}
			for _, a := range n.Attributes {
				a.I++
				a.F++
				for i := range a.Ints {
					a.Ints[i]++
				}
				for i := range a.Floats {
					a.Floats[i]++
				}
				for i := range a.S {
					a.S[i] ^= 1
				}
				for _, s := range a.Strings {
					for i := range s {
						s[i] ^= 1
					}
				}
				if a.T != nil {
					for i := range a.T.Dims {
						a.T.Dims[i]++
					}
				}
				if tt := a.TP.GetTensorType(); tt != nil {
					tt.ElemType = proto.Int32(98)
				}
			}
			n.SetAttr(canonical.IntAttr("added_by_scribble", 1))
		}
		if len(g.Nodes) > 1 {
			g.RemoveNode(g.Nodes[0])
		}
		return nil
	})
}

func TestCloneInPlaceEditsLeaveOriginal(t *testing.T) {
	for _, p := range cloneTestModels(t) {
		m, err := canonical.Load(p, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before := snapshotProto(t, m)
		c, err := m.Clone()
		if err != nil {
			t.Fatal(err)
		}
		scribble(c.Graph)
		for _, f := range c.Functions {
			f.Name += "_x"
			scribble(f.Body)
		}
		for i := range c.OpsetImports {
			c.OpsetImports[i].Version++
		}
		c.ProducerName += "x"
		if !proto.Equal(snapshotProto(t, m), before) {
			t.Errorf("%s: editing the clone in place changed the original", p)
		}
		// And the other way round: the clone is independent of m.
		c2, err := m.Clone()
		if err != nil {
			t.Fatal(err)
		}
		scribble(m.Graph)
		if !proto.Equal(snapshotProto(t, c2), before) {
			t.Errorf("%s: editing the original changed a clone", p)
		}
		m.Close()
		c.Close()
		c2.Close()
	}
}

// TestCloneOutlivesClose reads a clone's tensors after the model it came
// from is closed: the mappings (model file and external data) must stay.
func TestCloneOutlivesClose(t *testing.T) {
	src := filepath.Join(testpaths.RepoRoot(t), "fixtures", "models", "squeezenet", "model.onnx")
	m0, err := canonical.Load(src, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ext := filepath.Join(dir, "model.onnx")
	if err := canonical.Save(ext, m0, canonical.SaveOptions{ExternalData: true}); err != nil {
		t.Fatal(err)
	}
	m0.Close()
	for _, path := range []string{src, ext} {
		m, err := canonical.Load(path, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for _, v := range m.Graph.Initializers {
			b, err := v.Const.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, append([]byte(nil), b...))
		}
		c, err := m.Clone()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Clone(); !errors.Is(err, canonical.ErrClosed) {
			t.Errorf("Clone after Close: %v, want ErrClosed", err)
		}
		external := 0
		for i, v := range c.Graph.Initializers {
			if v.Const.IsExternal() {
				external++
			}
			b, err := v.Const.Bytes()
			if err != nil {
				t.Fatalf("%s: clone's %q after the original closed: %v", path, v.Name, err)
			}
			if !bytes.Equal(b, want[i]) {
				t.Fatalf("%s: clone's %q differs from the original's data", path, v.Name)
			}
		}
		if path == ext && external == 0 {
			t.Fatalf("the re-saved model has no external tensors")
		}
		// The clone saves like the original did.
		out := filepath.Join(t.TempDir(), "again.onnx")
		if err := canonical.Save(out, c, canonical.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(out); err != nil || st.Size() == 0 {
			t.Fatalf("saved clone: %v", err)
		}
	}
}
