package tfjs_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/importers/tfjs"
)

// The TF.js files of fixtures/hostile (made by make_hostile.py) are
// refused in process by the guards made for them: symlinked shards and
// folders are *fsys.OutsideErrors, a shard listed 4,095 times is refused
// before it is read twice, If branches that fan out hit the expansion
// budget.
func TestHostileFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile", "tfjs")
	for _, c := range []struct {
		name, want string
		outside    bool
	}{
		{"symlink_shard", "symbolic link", true},
		{"symlink_folder", "symbolic link", true},
		{"shard_listed_many", "lists \"w.bin\", which weights group 0 lists already", false},
		{"if_fanout", "fan out exponentially", false},
	} {
		_, err := tfjs.ImportFile(context.Background(), filepath.Join(dir, c.name, "model.json"), tfjs.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		var oe *fsys.OutsideError
		if errors.As(err, &oe) != c.outside {
			t.Errorf("%s: %v: *fsys.OutsideError %v, want %v", c.name, err, !c.outside, c.outside)
		}
	}
}
