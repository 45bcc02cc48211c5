package scrub

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"open /tmp/x1/.onnxconv-m-2/model.onnx: no such file", "open OUT: no such file"},
		{`writing "/tmp/x1/a b" failed`, `writing "OUT b" failed`},
		{"/tmp/x1", "OUT"},
		{"/tmp/x1/a and /tmp/x1/b", "OUT and OUT"},
		{"/tmp/x10/a stays", "OUT stays"}, // a prefix match is scrubbed too: no leak either way
		{"nothing here", "nothing here"},
	} {
		if got := String(c.in, "OUT", "/tmp/x1", ""); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestError(t *testing.T) {
	base := &fs.PathError{Op: "open", Path: "/tmp/x1/m.onnx", Err: fs.ErrNotExist}
	err := Error(fmt.Errorf("loading: %w", base), "the plugin's output", "/tmp/x1")
	if err.Error() != "loading: open the plugin's output: file does not exist" {
		t.Errorf("Error() = %q", err)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("classification lost: %v", err)
	}
	plain := errors.New("no path")
	if Error(plain, "x", "/tmp/x1") != plain || Error(nil, "x", "/tmp") != nil {
		t.Error("errors without the path changed")
	}
}
