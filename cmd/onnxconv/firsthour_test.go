package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rough edges a new user met in the first hour: each answered before
// any work, with a message that says what to do.

// A mistyped flag gets the nearest flag, as a mistyped command does.
func TestFlagSuggestion(t *testing.T) {
	code, _, errs := runCmd("convert", "a.onnx", "b.onnx", "--tagret", "onnxruntime-1.17")
	if code != exitBadInput || !strings.Contains(errs, "unknown flag: --tagret; did you mean --target?") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	// Nothing near enough: no guess.
	code, _, errs = runCmd("convert", "a.onnx", "b.onnx", "--zzzzzzzz")
	if code != exitBadInput || strings.Contains(errs, "did you mean") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}

// An output that is a folder, or whose extension names no format onnxconv
// writes, is refused before the input is imported (no "format …
// (importer …)" line).
func TestOutputPathCheckedFirst(t *testing.T) {
	in := backendModel(t, "node", "test_relu")
	dir := t.TempDir()
	for _, c := range []struct {
		out  string
		want []string
	}{
		{dir, []string{dir + " is a folder", filepath.Join(dir, "model.onnx")}},
		{filepath.Join(dir, "x.bin"), []string{"does not write .bin files", ".onnx", ".onnxtxt", ".tflite"}},
		{filepath.Join(dir, "missing", "x.onnx"), []string{"the output folder", "does not exist"}},
	} {
		for _, cmd := range [][]string{{"convert", in, c.out}, {"opset", in, c.out, "--opset", "13"}, {"optimize", in, c.out}} {
			code, _, errs := runCmd(cmd...)
			if code != exitBadInput || strings.Contains(errs, "(importer ") {
				t.Errorf("%v: exit %d, stderr:\n%s", cmd, code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("%v: stderr lacks %q:\n%s", cmd, w, errs)
				}
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused outputs left files: %v", ents)
	}
}

// A file whose extension names a format but whose content is not that
// format is told so, with the --from that makes the importer say why.
func TestNoImporterExtensionHint(t *testing.T) {
	in := filepath.Join(t.TempDir(), "model.tflite")
	if err := os.WriteFile(in, []byte("not a flatbuffer at all, just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd("convert", in, filepath.Join(t.TempDir(), "out.onnx"))
	if code != exitBadInput || !strings.Contains(errs, "the extension .tflite names format tflite") || !strings.Contains(errs, "--from tflite") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}

// A model that uses what onnxconv cannot map exits 4, distinct from bad
// usage (2), and the message lists the part: a CatBoost model with text
// features, read by the catboost importer plugin (the error crosses the
// plugin boundary as a typed error).
func TestUnsupportedExitCode(t *testing.T) {
	in := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(backendModel(t, "node", "test_relu")))), "..", "..", "models", "catboost", "catboost_cgo", "text", "text.cbm")
	if _, err := os.Stat(in); err != nil {
		t.Fatalf("the CatBoost text-feature model of ../shared: %v", err)
	}
	code, _, errs := runCmd("convert", in, filepath.Join(t.TempDir(), "out.onnx"), "--no-verify")
	if code != exitUnsupported || !strings.Contains(errs, "not supported") || !strings.Contains(errs, "text feature") {
		t.Fatalf("exit %d (want %d), stderr:\n%s", code, exitUnsupported, errs)
	}
}

// --help shows Usage right after the one-line summary, before the prose.
func TestHelpUsageFirst(t *testing.T) {
	for _, cmd := range []string{"convert", "opset", "verify", "runtimes"} {
		code, out, _ := runCmd(cmd, "--help")
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 4 || lines[2] != "Usage:" {
			t.Errorf("%s --help: exit %d, first lines:\n%s", cmd, code, strings.Join(lines[:min(len(lines), 6)], "\n"))
		}
	}
}
