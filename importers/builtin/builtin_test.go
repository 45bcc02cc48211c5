package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
)

const (
	fixtures    = "../../fixtures"
	tfliteMicro = "../../../shared/tflite-micro"
)

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fixtureFiles returns the fixture files of each format.
func fixtureFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := map[string][]string{
		"xgboost": append(glob(t, filepath.Join(fixtures, "xgboost", "*.json")), glob(t, filepath.Join(fixtures, "xgboost", "*.ubj"))...),
		"tflite":  glob(t, filepath.Join(fixtures, "tflite", "*.tflite")),
		"onnx":    glob(t, filepath.Join(fixtures, "models", "*", "model.onnx")),
	}
	// The xgboost folder also holds manifest.json, which is not a model.
	var xgb []string
	for _, f := range files["xgboost"] {
		if filepath.Base(f) != "manifest.json" {
			xgb = append(xgb, f)
		}
	}
	files["xgboost"] = xgb
	err := filepath.WalkDir(tfliteMicro, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".tflite") {
			files["tflite"] = append(files["tflite"], path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", tfliteMicro, err)
	}
	for f, list := range files {
		if len(list) < 3 {
			t.Fatalf("only %d %s fixtures found: %v", len(list), f, list)
		}
	}
	return files
}

func head(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, importers.HeadSize)
	n, _ := f.Read(b)
	return b[:n]
}

func TestRegistry(t *testing.T) {
	imps := Importers()
	if _, err := importers.NewRegistry(imps...); err != nil {
		t.Fatalf("the built-ins do not form a registry: %v", err)
	}
	r := Registry()
	formats := r.Formats()
	if formats[0] != "tflite" || formats[len(formats)-1] != "onnx" {
		t.Errorf("formats %v: want tflite (a real magic number) first and onnx (structural detection) last", formats)
	}
	for _, want := range []string{"tflite", "xgboost", "onnx"} {
		if !slices.Contains(formats, want) {
			t.Errorf("formats %v lack %s", formats, want)
		}
	}
	for _, imp := range imps {
		d := imp.Describe()
		// Formats without a magic number (JSON, protobuf) are detected by
		// content; they still need a summary and extensions.
		if d.Summary == "" || len(d.Extensions) == 0 {
			t.Errorf("%s: incomplete description %+v", d.Name, d)
		}
		got, err := r.Lookup(strings.ToUpper(d.Name))
		if err != nil || got.Describe().Name != d.Name {
			t.Errorf("Lookup(%s) = %v, %v", d.Name, got, err)
		}
	}
	var ue *importers.UnknownFormatError
	if _, err := r.Lookup("xgbost"); !errors.As(err, &ue) || ue.Suggestion != "xgboost" {
		t.Errorf("Lookup(xgbost) = %v", err)
	}
}

// Every fixture is recognised by its own importer with that importer's
// confidence and by no other, through the importers and through the
// registry.
func TestDetectFixtures(t *testing.T) {
	// The least confidence each importer gives its own fixtures: magic
	// numbers for tflite and xgboost, the structure of a ModelProto (0.9)
	// for onnx.
	minConf := map[string]float32{"tflite": 1, "xgboost": 1, "onnx": 0.9}
	r := Registry()
	n := 0
	for format, files := range fixtureFiles(t) {
		for _, path := range files {
			n++
			h := head(t, path)
			for _, imp := range Importers() {
				name := imp.Describe().Name
				c := imp.Detect(path, h)
				switch {
				case name == format && c < minConf[name]:
					t.Errorf("%s: %s.Detect = %v, want >= %v", path, name, c, minConf[name])
				case name != format && c != 0:
					t.Errorf("%s (%s): %s.Detect = %v, want 0", path, format, name, c)
				}
				// Detection must not depend on the file name: a renamed
				// file is still recognised (or still refused).
				renamed := imp.Detect("model.bin", h)
				if name != format && renamed != 0 || name == format && renamed < minConf[name] {
					t.Errorf("%s renamed: %s.Detect = %v", path, name, renamed)
				}
			}
			imp, conf, err := r.Detect(path)
			if err != nil || imp.Describe().Name != format || conf < minConf[format] {
				t.Errorf("%s: registry Detect = %v %v %v, want %s", path, imp, conf, err, format)
			}
		}
	}
	t.Logf("%d fixtures", n)

	// Nothing recognises a text file; the error names it.
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var nm *importers.NoMatchError
	if _, _, err := r.Detect(other); !errors.As(err, &nm) || !strings.Contains(err.Error(), other) {
		t.Errorf("Detect(text) = %v", err)
	}
}

// Each built-in imports one of its fixtures through the interface, and
// reports an unknown option as an *importers.OptionError.
func TestImportThroughRegistry(t *testing.T) {
	r := Registry()
	ctx := context.Background()
	for _, path := range []string{
		filepath.Join(fixtures, "tflite", "cnn.tflite"),
		filepath.Join(fixtures, "xgboost", "binary_logistic.ubj"),
		filepath.Join(fixtures, "models", "mlp_opset9", "model.onnx"),
	} {
		imp, _, err := r.Detect(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := imp.Import(ctx, path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if res.Model == nil || res.Model.Graph == nil || len(res.Model.Graph.Nodes) == 0 {
			t.Errorf("%s: empty model", path)
		}
		res.Model.Close()
		var oe *importers.OptionError
		_, err = imp.Import(ctx, path, importers.Options{"no_such_option": "1"})
		if !errors.As(err, &oe) || oe.Importer != imp.Describe().Name || oe.Key != "no_such_option" {
			t.Errorf("%s: unknown option: %v", path, err)
		}
		if len(oe.Known) != len(imp.Describe().Options) {
			t.Errorf("%s: OptionError.Known %v, Describe().Options %v", path, oe.Known, imp.Describe().Options)
		}
	}
}
