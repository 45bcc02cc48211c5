package executor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestRunLeavesInputsUnchanged runs every ONNX backend node test and
// every fixture model, with fusion, on 1 and 2 threads, twice each (the
// build, then a replay with reused buffers), and checks that no input's
// bytes changed: float32 inputs are borrowed (borrowCanonical), so a
// kernel writing into its input would write into the caller's tensor.
func TestRunLeavesInputsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the backend node tests")
	}
	var dirs []string
	node := filepath.Join(testpaths.RepoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", "node")
	if ents, err := os.ReadDir(node); err == nil {
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(node, e.Name()))
		}
	}
	fix := filepath.Join("..", "fixtures", "models")
	if ents, err := os.ReadDir(fix); err == nil {
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(fix, e.Name()))
		}
	}
	sort.Strings(dirs)
	if len(dirs) < 100 {
		t.Fatalf("only %d model folders found", len(dirs))
	}
	checked := 0
	for _, dir := range dirs {
		m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
		if err != nil {
			continue
		}
		var ins []*canonical.Tensor
		for i := 0; ; i++ {
			b, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", "input_"+strconv.Itoa(i)+".pb"))
			if err != nil {
				break
			}
			tp := &onnxpb.TensorProto{}
			if err := proto.Unmarshal(b, tp); err != nil {
				ins = nil // a sequence or an optional
				break
			}
			x, err := canonical.TensorFromProto(tp)
			if err != nil {
				ins = nil
				break
			}
			ins = append(ins, x)
		}
		want := make([][]byte, len(ins))
		float := false
		for i, x := range ins {
			b, err := x.Bytes()
			if err != nil {
				continue
			}
			want[i] = bytes.Clone(b)
			float = float || x.DataType == canonical.Float
		}
		if !float {
			m.Close()
			continue
		}
		for _, th := range []int{1, 2} {
			ex, err := New(m, Options{Threads: th})
			if err != nil {
				break
			}
			for r := 0; r < 2; r++ {
				if _, err := ex.Run(context.Background(), ins); err != nil {
					break
				}
			}
			ex.Close()
			for i, x := range ins {
				if want[i] == nil {
					continue
				}
				if b, _ := x.Bytes(); !bytes.Equal(b, want[i]) {
					t.Fatalf("%s: input %d changed by a run on %d threads", filepath.Base(dir), i, th)
				}
			}
		}
		checked++
		m.Close()
	}
	t.Logf("%d models with float32 inputs checked", checked)
	if checked < 100 {
		t.Fatalf("only %d models checked", checked)
	}
}
