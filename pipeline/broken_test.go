package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
	tfliteimp "github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

func TestMain(m *testing.M) { os.Exit(testpaths.Main(m, "pipeline")) }

// swappingImporter is the TFLite importer with a bug planted: it swaps
// the data of two initializers of the same type and shape. Its source is
// computed by Google's TFLite interpreter (runtimes/tflite), as the
// reference runtime plugin computes it.
type swappingImporter struct {
	importers.Importer
	env     tflite.Env
	swapped *[2]string
}

func (s swappingImporter) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	r, err := s.Importer.Import(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	inits := r.Model.Graph.Initializers
	for i, a := range inits {
		for _, b := range inits[i+1:] {
			if a.Const == nil || b.Const == nil || a.Const.DataType != canonical.Float || b.Const.DataType != canonical.Float ||
				!slices.Equal(a.Const.Dims, b.Const.Dims) {
				continue
			}
			if n, err := a.Const.NumElements(); err != nil || n < 2 {
				continue // weights, not the bounds of a Clip
			}
			da, err1 := a.Const.Bytes()
			db, err2 := b.Const.Bytes()
			if err1 != nil || err2 != nil || bytes.Equal(da, db) {
				continue
			}
			a.Const.SetBytes(bytes.Clone(db))
			b.Const.SetBytes(bytes.Clone(da))
			*s.swapped = [2]string{a.Name, b.Name}
			return r, nil
		}
	}
	r.Model.Close()
	return nil, fmt.Errorf("%s: no two initializers to swap", path)
}

type tfliteSource struct {
	env  tflite.Env
	path string
}

func (s swappingImporter) Source(_ context.Context, path string, _ importers.Options) (importers.Source, error) {
	return tfliteSource{env: s.env, path: path}, nil
}

func (tfliteSource) Describe() string { return "Google's TFLite interpreter (tfjs-tflite, under Node)" }
func (tfliteSource) Close() error     { return nil }
func (s tfliteSource) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	pbs := make([]*onnxpb.TensorProto, 0, len(inputs))
	for _, t := range inputs {
		p, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, err
		}
		pbs = append(pbs, p)
	}
	res, err := tflite.Run(ctx, s.env, s.path, pbs, 1)
	if err != nil {
		return nil, err
	}
	out := make([]*canonical.Tensor, len(res.Outputs))
	for i, p := range res.Outputs {
		if out[i], err = canonical.TensorFromProto(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// A converter bug (two weights swapped) is caught by convert's
// verification against the source framework: not equivalent, exit kind
// invalid, the diverging outputs named, nothing written.
func TestBrokenImporterIsCaught(t *testing.T) {
	testpaths.Node(t, tflite.Package)
	env, err := tflite.Find(tflite.FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var swapped [2]string
	reg, err := importers.NewRegistry(swappingImporter{Importer: tfliteimp.New(), env: env, swapped: &swapped})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var res *Result
	var out string
	for _, name := range []string{"cnn", "ops", "misc", "more", "lstm"} {
		out = filepath.Join(dir, name+".onnx")
		res, err = Convert(context.Background(), "../fixtures/tflite/"+name+".tflite", out, Options{Env: Env{Importers: reg, Exporters: builtins().Exporters, Runtimes: builtins().Runtimes}, Verify: &VerifyOptions{}})
		if swapped[0] != "" {
			break
		}
	}
	var ne *NotEquivalentError
	if !errors.As(err, &ne) || KindOf(err) != KindInvalid {
		t.Fatalf("err %v (swapped %q and %q), want NotEquivalentError", err, swapped[0], swapped[1])
	}
	if !res.Verified || len(res.Comparisons) == 0 { // then the result in ONNX Runtime, when installed
		t.Fatalf("result %+v", res)
	}
	var failed []string
	for _, o := range res.Comparisons[0].Report.Outputs {
		if !o.Pass {
			failed = append(failed, o.Name)
		}
	}
	if len(failed) == 0 {
		t.Fatalf("no output named as diverging (swapped %q and %q)", swapped[0], swapped[1])
	}
	t.Logf("swapped %q and %q; diverging outputs %v", swapped[0], swapped[1], failed)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the broken result was written (%v)", err)
	}
}

// A Keras/TF.js model imported channels-first (-O layout=nchw) is still
// verified against TF.js, which computes it channels-last: the inputs and
// outputs the importer moved are transposed for the source side.
func TestLayoutNCHWVerified(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	res, err := Convert(context.Background(), "../fixtures/tfjs/cnn/model.json", filepath.Join(t.TempDir(), "cnn.onnx"),
		Options{Env: builtins(), ImportOptions: importers.Options{"layout": "nchw"}, Verify: &VerifyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || !res.Equivalent || !strings.Contains(res.Conversion.Reference, "tfjs") {
		t.Fatalf("verified %v, equivalent %v, reference %q, not verified %q", res.Verified, res.Equivalent, res.Conversion.Reference, res.Conversion.NotVerified)
	}
}
