package importers

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/options"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.bin")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if b, err := ReadFile(path, 0); err != nil || len(b) != 10 {
		t.Errorf("ReadFile without limit = %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(path, 9); !errors.As(err, &tl) || tl.Size != 10 || tl.Limit != 9 || !strings.Contains(err.Error(), path) {
		t.Errorf("over the limit: %v", err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(dir, 0); !errors.As(err, &nr) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "folder") {
		t.Errorf("a folder: %v", err)
	}
	missing := filepath.Join(dir, "nope")
	if _, err := ReadFile(missing, 0); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing: %v", err)
	}
}

func TestOptionsKeys(t *testing.T) {
	if got := strings.Join(Options{"b": "1", "a": "2", "c": ""}.Keys(), ","); got != "a,b,c" {
		t.Errorf("Keys = %s", got)
	}
	if got := options.Names([]OptionSpec{{Name: "x"}, {Name: "y"}}); strings.Join(got, ",") != "x,y" {
		t.Errorf("Names = %v", got)
	}
}
