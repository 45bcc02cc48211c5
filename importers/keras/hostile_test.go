package keras_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/keras"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// refused imports path (in its own goroutine, so that a hang is seen) and
// checks that the import fails with an error naming the file and
// containing want. The 60 s guard catches a hang only: wall time on a
// loaded machine says nothing of the work done (5 s was exceeded under
// CI's load); the 5 s CPU limit on hostile files is held by cmd/onnxconv's
// TestHostileFixtures, which measures the CLI's CPU time.
func refused(t *testing.T, path string, opts importers.Options, want ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- errors.New("PANIC")
			}
		}()
		res, err := keras.New().Import(context.Background(), path, opts)
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
		if !strings.Contains(err.Error(), filepath.Base(path)) {
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

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readShared(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(shared, p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// zipOf writes a zip of the given entries; sizes (when set) overrides the
// uncompressed size an entry declares (stored, not compressed).
func zipOf(t *testing.T, entries [][2]string, sizes map[string]uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e[0], Method: zip.Store}
		if s, ok := sizes[e[0]]; ok {
			h.UncompressedSize64 = s
			h.CompressedSize64 = uint64(len(e[1]))
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(e[1]))
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// flownetEntries are the entries of the Keras 3 fixture.
func flownetEntries(t *testing.T) [][2]string {
	t.Helper()
	data := readShared(t, "keras_v3/flownet_25-06_model/model.keras")
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(rc)
		rc.Close()
		out = append(out, [2]string{f.Name, b.String()})
	}
	return out
}

func TestTruncatedKerasZip(t *testing.T) {
	data := readShared(t, "keras_v3/flownet_25-06_model/model.keras")
	for _, n := range []int{4, 30, 100, 1000, len(data) / 2, len(data) - 30, len(data) - 1} {
		refused(t, writeFile(t, "model.keras", data[:n]), nil)
	}
}

func TestTruncatedH5(t *testing.T) {
	data := readShared(t, "keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5")
	for _, n := range []int{8, 100, 2000, len(data) / 2, len(data) - 100} {
		refused(t, writeFile(t, "model.h5", data[:n]), nil)
	}
	// A truncated weights file beside an architecture JSON.
	dir := t.TempDir()
	js := readShared(t, "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer.json")
	w := readShared(t, "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer_weights.h5")
	for _, n := range []int{100, len(w) / 3, len(w) - 200} {
		_ = os.WriteFile(filepath.Join(dir, "m.json"), js, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "m_weights.h5"), w[:n], 0o644)
		refused(t, filepath.Join(dir, "m.json"), nil)
	}
}

func TestLyingZipSizes(t *testing.T) {
	e := flownetEntries(t)
	cases := map[string]map[string]uint64{
		"config.json claims more": {"config.json": uint64(len(e[1][1])) + 100},
		"config.json claims less": {"config.json": 10},
		"config.json claims 1 TB": {"config.json": 1 << 40},
		"weights claim 1 TB":      {"model.weights.h5": 1 << 40},
		"weights claim less":      {"model.weights.h5": 1000},
	}
	for name, sizes := range cases {
		t.Run(name, func(t *testing.T) {
			refused(t, writeFile(t, "model.keras", zipOf(t, e, sizes)), nil)
		})
	}
}

func TestMalformedKeras(t *testing.T) {
	e := flownetEntries(t)
	deep := strings.Repeat("[", 100000)
	cases := []struct {
		name    string
		entries [][2]string
		want    string
	}{
		{"no weights", e[:2], "model.weights.h5"},
		{"no config", [][2]string{e[0], e[2], {"config.json.bak", "{}"}}, "config.json"},
		{"config not JSON", [][2]string{e[0], {"config.json", "{not json"}, e[2]}, "config.json"},
		{"config deep", [][2]string{e[0], {"config.json", deep}, e[2]}, "nested"},
		{"not a model", [][2]string{e[0], {"config.json", `{"a": 1}`}, e[2]}, "class_name"},
		{"twice", [][2]string{e[0], e[1], e[1], e[2]}, "twice"},
		{"weights not HDF5", [][2]string{e[0], e[1], {"model.weights.h5", "not hdf5 at all"}}, "HDF5"},
		{"lambda", [][2]string{e[0], {"config.json", `{"class_name":"Sequential","config":{"layers":[{"class_name":"Lambda","config":{"name":"l","function":"import os"}}]}}`}, e[2]}, "Lambda"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, writeFile(t, "model.keras", zipOf(t, tc.entries, nil)), nil, tc.want)
		})
	}
}

func TestArchitectureJSONWeights(t *testing.T) {
	dir := t.TempDir()
	js := readShared(t, "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer.json")
	p := filepath.Join(dir, "arch.json")
	_ = os.WriteFile(p, js, 0o644)
	// No weights beside it: the error says how to name them.
	refused(t, p, nil, "arch_weights.h5", "-O weights=")
	// Named with the option, relative to the JSON's folder.
	_ = os.WriteFile(filepath.Join(dir, "w.h5"), readShared(t, "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer_weights.h5"), 0o644)
	res, err := keras.New().Import(context.Background(), p, importers.Options{"weights": "w.h5"})
	if err != nil {
		t.Fatal(err)
	}
	res.Model.Close()
	// A weights-only .h5 given alone says to give the JSON.
	refused(t, filepath.Join(dir, "w.h5"), nil, "model_config", "weights=")
	// Weights of another architecture: a shape mismatch, not a panic.
	_ = os.WriteFile(filepath.Join(dir, "w2.h5"), readShared(t, "keras_h5/hls4ml_KERAS_1layer/KERAS_1layer_weights.h5"), 0o644)
	refused(t, p, importers.Options{"weights": "w2.h5"})
	// Unknown options are OptionErrors.
	_, err = keras.New().Import(context.Background(), p, importers.Options{"bogus": "1"})
	var oe *importers.OptionError
	if !errors.As(err, &oe) {
		t.Errorf("err = %v, want an *importers.OptionError", err)
	}
}

// FuzzLoad: no input makes the importer panic or hang; seeds are the
// Keras 3 zip, a Keras 2 full-model .h5 and an architecture JSON.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"keras_v3/flownet_25-06_model/model.keras", "keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5",
		"keras_h5/hls4ml_KERAS_conv1d_small/KERAS_conv1d_small.json"} {
		testpaths.AddFiles(f, filepath.Join(shared, p))
	}
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "m.keras")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = keras.New().Detect(p, data[:min(len(data), importers.HeadSize)])
		res, err := keras.New().Import(context.Background(), p, nil)
		if err == nil {
			res.Model.Close()
		}
	})
}
