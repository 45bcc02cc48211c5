package importers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// folderImp is an importer that reads folders holding one of files.
type folderImp struct {
	name  string
	files []string
}

func (f folderImp) Describe() Description {
	return Description{Name: f.name, FolderFiles: f.files}
}
func (folderImp) Detect(string, []byte) float32 { return 0 }
func (folderImp) Import(context.Context, string, Options) (*Result, error) {
	return nil, errors.New("not used")
}

// FolderModel picks the first file of the importers' FolderFiles that the
// folder holds as a regular file of its own: a link is not followed, a
// name leaving the folder is never looked at, and a folder holding none
// is a *FolderError naming the files looked for.
func TestFolderModel(t *testing.T) {
	reg, err := NewRegistry(folderImp{"a", []string{"model.json"}}, folderImp{"b", []string{"../x.pb", "saved_model.pb"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = reg.FolderModel(dir)
	var fe *FolderError
	if !errors.As(err, &fe) || len(fe.Looked) != 2 || fe.Looked[0] != "model.json" || fe.Looked[1] != "saved_model.pb" {
		t.Fatalf("empty folder: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(outside, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "model.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "x.pb"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := reg.FolderModel(dir); err == nil {
		t.Fatalf("followed a link or left the folder: %s", p)
	}
	if err := os.WriteFile(filepath.Join(dir, "saved_model.pb"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := reg.FolderModel(dir); err != nil || p != filepath.Join(dir, "saved_model.pb") {
		t.Fatalf("got %q, %v", p, err)
	}
}
