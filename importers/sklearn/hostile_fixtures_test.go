package sklearn_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// The joblib bombs of fixtures/hostile (zlib, bz2, xz; made by
// make_hostile.py) stop at the inflation ratio, an *fsys.InflateError, and
// an xz stream that holds no pickle says so.
func TestHostileFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile", "sklearn")
	for _, name := range []string{"zlib_bomb", "bz2_bomb", "xz_bomb"} {
		_, err := sklearn.New().Import(context.Background(), filepath.Join(dir, name, "model.joblib"), nil)
		var ie *fsys.InflateError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an *fsys.InflateError", name, err)
		}
	}
	_, err := sklearn.New().Import(context.Background(), filepath.Join(dir, "xz_not_pickle", "model.joblib"), nil)
	if err == nil || !strings.Contains(err.Error(), "not a pickle") {
		t.Errorf("xz_not_pickle: %v", err)
	}
}
