// Package importertest is the conformance suite every importer runs: on
// each fixture its Describe and Detect agree, Import is deterministic, an
// unknown option or a value that does not fit an option's spec is an
// *importers.OptionError (every spec is complete and its default fits),
// and truncated or corrupted copies of the file fail (or import) without
// a panic, within a time bound. Call Run from the importer's tests (or from importers/builtin's,
// for all the built-ins at once).
package importertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
)

// Bound is how long one import of a damaged file may take.
const Bound = 20 * time.Second

// Case is one fixture: a file of the importer's format and the options
// it is imported with.
type Case struct {
	Path    string
	Options importers.Options
	// MinDetect is the least confidence Detect must give the fixture (0:
	// any positive one).
	MinDetect float32
}

// Run runs the conformance checks of imp on each case, as subtests named
// after the fixture.
func Run(t *testing.T, imp importers.Importer, cases ...Case) {
	t.Helper()
	d := imp.Describe()
	if d.Name == "" || d.FormatName() == "" || d.Summary == "" {
		t.Errorf("incomplete description %+v", d)
	}
	specs(t, d)
	if len(cases) == 0 {
		t.Fatalf("%s: no fixture", d.Name)
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.Path), func(t *testing.T) {
			data, err := os.ReadFile(c.Path)
			if err != nil {
				t.Fatal(err)
			}
			detect(t, imp, c, data)
			deterministic(t, imp, c)
			unknownOption(t, imp, c)
			badValues(t, imp, c)
			damaged(t, imp, c, data)
		})
	}
}

// detect: the importer recognises its fixture from the head, no surer
// when the file is renamed.
func detect(t *testing.T, imp importers.Importer, c Case, data []byte) {
	t.Helper()
	head := data[:min(len(data), importers.HeadSize)]
	conf := imp.Detect(c.Path, head)
	if conf <= 0 || conf < c.MinDetect || conf > 1 {
		t.Errorf("Detect = %v, want in [%v, 1] and positive", conf, c.MinDetect)
	}
	if renamed := imp.Detect(filepath.Join(filepath.Dir(c.Path), "renamed.bin"), head); renamed > conf {
		t.Errorf("Detect = %v under its own name, %v renamed: a name must not make it surer", conf, renamed)
	}
}

// deterministic: two imports of the fixture encode to the same bytes.
func deterministic(t *testing.T, imp importers.Importer, c Case) {
	t.Helper()
	var out [2][]byte
	for i := range out {
		r, err := imp.Import(context.Background(), c.Path, c.Options)
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		var b bytes.Buffer
		err = canonical.Encode(&b, r.Model, canonical.SaveOptions{})
		r.Model.Close()
		if err != nil {
			t.Fatalf("encoding the import: %v", err)
		}
		out[i] = b.Bytes()
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("two imports differ (%d and %d bytes)", len(out[0]), len(out[1]))
	}
}

// unknownOption: an option the importer does not take is an
// *importers.OptionError naming it.
func unknownOption(t *testing.T, imp importers.Importer, c Case) {
	t.Helper()
	opts := importers.Options{"no_such_option_xyz": "1"}
	for k, v := range c.Options {
		opts[k] = v
	}
	r, err := imp.Import(context.Background(), c.Path, opts)
	if r != nil && r.Model != nil {
		r.Model.Close()
	}
	var oe *importers.OptionError
	if !errors.As(err, &oe) || oe.Key != "no_such_option_xyz" {
		t.Errorf("an unknown option: %v, want an *importers.OptionError for it", err)
	}
}

// specs: every option is declared whole: a name, a doc, a kind; an enum
// lists its values; a default fits the option's own spec.
func specs(t *testing.T, d importers.Description) {
	t.Helper()
	for _, o := range d.Options {
		if o.Name == "" || o.Doc == "" || o.Kind == "" {
			t.Errorf("%s: option %+v without a name, a doc or a kind", d.Name, o)
		}
		if (o.Kind == importers.KindEnum) != (len(o.Values) > 0) {
			t.Errorf("%s: option %s of kind %s with values %v", d.Name, o.Name, o.Kind, o.Values)
		}
		if o.Default != "" {
			if _, err := o.Check(o.Default); err != nil {
				t.Errorf("%s: option %s: its default %q does not fit it: %v", d.Name, o.Name, o.Default, err)
			}
		}
	}
}

// badValues: a value that does not fit an option's kind is an
// *importers.OptionError naming the option, with the reason.
func badValues(t *testing.T, imp importers.Importer, c Case) {
	t.Helper()
	for _, o := range imp.Describe().Options {
		switch o.Kind {
		case importers.KindBool, importers.KindInt, importers.KindFloat, importers.KindEnum:
		default:
			continue
		}
		opts := importers.Options{}
		for k, v := range c.Options {
			opts[k] = v
		}
		opts[o.Name] = "no such value"
		r, err := imp.Import(context.Background(), c.Path, opts)
		if r != nil && r.Model != nil {
			r.Model.Close()
		}
		var oe *importers.OptionError
		if !errors.As(err, &oe) || oe.Key != o.Name || oe.Err == nil {
			t.Errorf("option %s=%q: %v, want an *importers.OptionError for it", o.Name, opts[o.Name], err)
		}
	}
}

// damaged: copies cut short and with bytes overwritten import or fail
// without a panic, each within Bound. They lie beside the fixture's own
// files (in a copy of its folder), so that files it names are found.
func damaged(t *testing.T, imp importers.Importer, c Case, data []byte) {
	t.Helper()
	dir := t.TempDir()
	// Copy the fixture's folder (small) so that side files (weights) are
	// there.
	src := filepath.Dir(c.Path)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != filepath.Base(c.Path) {
			if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil && len(b) < 16<<20 {
				_ = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
			}
		}
	}
	path := filepath.Join(dir, filepath.Base(c.Path))
	var variants []struct {
		what string
		data []byte
	}
	for _, n := range []int{0, 1, 8, 16, len(data) / 4, len(data) / 2, len(data) - 1} {
		if n >= 0 && n < len(data) {
			variants = append(variants, struct {
				what string
				data []byte
			}{fmt.Sprintf("cut at %d", n), data[:n]})
		}
	}
	for _, off := range []int{0, 4, 8, 16, 64, len(data) / 3, len(data) / 2} {
		if off >= len(data) {
			continue
		}
		for _, b := range []byte{0x00, 0xff} {
			m := slices.Clone(data)
			m[off] = b
			variants = append(variants, struct {
				what string
				data []byte
			}{fmt.Sprintf("byte %d = %#x", off, b), m})
		}
	}
	for _, v := range variants {
		if err := os.WriteFile(path, v.data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), Bound)
		start := time.Now()
		panicked, stack := importNoPanic(ctx, imp, path, c.Options)
		cancel()
		if panicked != nil {
			t.Errorf("%s: Import panicked: %v\n%s", v.what, panicked, firstLines(stack, 12))
		}
		if d := time.Since(start); d > Bound {
			t.Errorf("%s: Import took %v (bound %v)", v.what, d, Bound)
		}
	}
}

// importNoPanic imports path and reports a panic instead of crashing.
func importNoPanic(ctx context.Context, imp importers.Importer, path string, opts importers.Options) (p any, stack []byte) {
	defer func() {
		if r := recover(); r != nil {
			p, stack = r, debug.Stack()
		}
	}()
	r, err := imp.Import(ctx, path, opts)
	if err == nil && r != nil && r.Model != nil {
		r.Model.Close()
	}
	return nil, nil
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
