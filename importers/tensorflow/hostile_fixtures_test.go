package tensorflow

import (
	"path/filepath"
	"testing"
)

// The TensorFlow files of fixtures/hostile (made by make_hostile.go) are
// refused in process, each by the guard made for it, never a panic.
func TestHostileFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile", "tensorflow")
	for _, c := range []struct {
		file string
		want string
	}{
		{"graphdef_const_fill/frozen.pb", "filled to 8.0 GiB from 1 value"},
		{"graphdef_call_fanout/frozen.pb", "fan out exponentially"},
		{"graphdef_if_fanout/frozen.pb", "fan out exponentially"},
		{"savedmodel_symlink_shard/saved_model.pb", "symbolic link to a file outside the folder"},
		{"savedmodel_table_wrap/saved_model.pb", "past the end"},
		{"savedmodel_rawstring_overflow/saved_model.pb", "past the end"},
	} {
		refused(t, filepath.Join(dir, filepath.FromSlash(c.file)), nil, c.want)
	}
}
