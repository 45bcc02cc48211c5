package keras_test

import (
	"path/filepath"
	"testing"
)

// The Keras and HDF5 files of fixtures/hostile (made by make_hostile.py)
// are refused in process, each by the guard made for it.
func TestHostileFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile")
	for _, c := range []struct {
		file string
		want string
	}{
		{"keras/zip_bomb/model.keras", "decompression bomb"},
		{"keras/zip_slip/model.keras", "leaves the archive"},
		{"keras/json_symlink_weights/model.json", "symbolic link to a file outside the folder"},
		{"hdf5/group_dag/model.keras", "dense"},
		{"hdf5/dataset_many_links/model.h5", "for a file of this size"},
		{"hdf5/gzip_chunk_bomb/model.h5", "for a file of this size"},
	} {
		refused(t, filepath.Join(dir, filepath.FromSlash(c.file)), nil, c.want)
	}
}
