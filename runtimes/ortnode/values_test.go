package ortnode

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// TestSequencesAndOptionals: ONNX Runtime under Node computes the outputs
// ONNX's reference implementation stored for the backend tests whose graph
// inputs or outputs are sequences or optionals (read from their
// SequenceProto and OptionalProto files): sequence inputs of 3 and of 0
// tensors, optional inputs with a value and None, sequence outputs of
// several lengths, optional outputs holding a tensor, a sequence or None.
func TestSequencesAndOptionals(t *testing.T) {
	r := testRuntime(t)
	for _, name := range []string{
		"test_identity_sequence",                         // sequence in and out
		"test_sequence_insert_at_back",                   // sequence in, longer sequence out
		"test_sequence_map_extract_shapes",               // sequence in, Loop inside, sequence out
		"test_sequence_map_add_2_sequences",              // two sequences in
		"test_split_to_sequence_1",                       // tensor in, sequence out
		"test_optional_get_element_optional_sequence",    // optional(sequence) in
		"test_optional_get_element_optional_tensor",      // optional(tensor) in
		"test_optional_has_element_empty_optional_input", // None in
		"test_if_opt",          // optional(sequence) out of If
		"test_loop16_seq_none", // optional(sequence) None in, sequence out
	} {
		t.Run(name, func(t *testing.T) {
			dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name)
			m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !verify.HasValues(m) {
				t.Fatalf("%s has tensor inputs and outputs only", name)
			}
			sets, err := backendtest.LoadDataSets(dir, verify.GraphInputs(m), m.Graph.Outputs)
			if err != nil || len(sets) == 0 {
				t.Fatalf("data sets: %v (%d)", err, len(sets))
			}
			sess, err := r.Open(context.Background(), filepath.Join(dir, "model.onnx"), runtimes.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			vs, ok := sess.(runtimes.ValueSession)
			if !ok {
				t.Fatalf("the session (%T) does not run values", sess)
			}
			for _, ds := range sets {
				got, err := vs.RunValues(context.Background(), ds.Inputs)
				if err != nil {
					t.Fatalf("%s: %v", ds.Name, err)
				}
				if len(got) != len(ds.Outputs) {
					t.Fatalf("%s: %d outputs, stored %d", ds.Name, len(got), len(ds.Outputs))
				}
				for i := range got {
					if err := backendtest.CompareValues(got[i], ds.Outputs[i], backendtest.DefaultRTol, 1e-7); err != nil {
						t.Errorf("%s: output %d (%s): %v", ds.Name, i, m.Graph.Outputs[i].Name, err)
					}
				}
			}
		})
	}
}

// TestValuesRefusedByOpen: Open itself refuses a model with sequence
// inputs as a runtime limit of kind "values" (New's sessions take it).
func TestValuesRefusedByOpen(t *testing.T) {
	_, modules := testpaths.Node(t, Package)
	env, err := Find(runtimetest.NodeModules(modules))
	if err != nil {
		t.Fatal(err)
	}
	path := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_identity_sequence", "model.onnx")
	_, err = Open(context.Background(), env, path, 1, false)
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "values" || !re.RuntimeLimit() {
		t.Fatalf("Open: %v, want a RunError of kind values", err)
	}
}

// TestMapsRefused: a graph output that is a sequence of maps cannot cross
// as tensors: RunValues refuses it with a one-line *RunError of kind type
// (a runtime limit, so that a caller falls back) naming the output.
func TestMapsRefused(t *testing.T) {
	r := testRuntime(t)
	dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_identity_sequence")
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	kt := int32(canonical.Int64)
	m.Graph.Outputs[0].Type = canonical.SequenceType(&onnxpb.TypeProto{Value: &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{
		KeyType: &kt, ValueType: canonical.TensorTypeNoShape(canonical.Float)}}})
	path := filepath.Join(t.TempDir(), "maps.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	sess, err := r.Open(context.Background(), path, runtimes.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	sets, err := backendtest.LoadDataSets(dir, verify.GraphInputs(m), nil)
	if err == nil && len(sets) == 0 {
		t.Fatal("no data set")
	}
	if err != nil {
		sets = []backendtest.DataSet{{}}
	}
	_, err = sess.(runtimes.ValueSession).RunValues(context.Background(), sets[0].Inputs)
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "type" || !re.RuntimeLimit() || !strings.Contains(err.Error(), `graph output "`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("RunValues: %v, want a one-line type *RunError naming the output", err)
	}
}
