package sklearn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// TestHostileSkops: each file of fixtures/hostile/skops (made by its
// make_hostile.py) is refused with an error of the expected type that
// names the member or node at fault; none panics, hangs or allocates
// what the file declares.
func TestHostileSkops(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile", "skops")
	cases := []struct {
		file string
		// member and node the *SkopsError must name ("" = not checked);
		// refused: the error is the allow-list's *pickle.RefusedError
		// naming that module.
		member, node, refused, says string
	}{
		{file: "dotdot.skops", member: "../evil.npy", says: ".."},
		{file: "missing_member.skops", member: "s.npy", says: "does not have"},
		{file: "cycle.skops", node: "StandardScaler.mean_", says: "cycle"},
		{file: "os_system.skops", refused: "os", says: "StandardScaler.mean_"},
		{file: "method.skops", refused: "sklearn.preprocessing._data", says: "bound method"},
		{file: "deep.skops", member: "schema.json", says: "deep"},
		{file: "protocol9.skops", member: "schema.json", says: "protocol 9"},
		{file: "short_array.skops", member: "m.npy", says: "want"},
		{file: "overlap_bomb.skops", says: "zip bomb"},
		{file: "declared_huge.skops", member: "m.npy", says: "zip bomb"},
		{file: "duplicate.skops", member: "m.npy", says: "two members"},
		{file: "bad_schema.skops", member: "schema.json", says: "EOF"},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".skops") {
			n++
		}
	}
	if n != len(cases) {
		t.Errorf("%d .skops files in %s, %d cases: every hostile file needs its case", n, dir, len(cases))
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			head, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if conf := sklearn.New().Detect(path, head[:min(len(head), 512)]); conf != 1 {
				t.Errorf("Detect gives %v", conf)
			}
			_, err = sklearn.New().Import(context.Background(), path, nil)
			if err == nil {
				t.Fatal("imported")
			}
			t.Log(err)
			if c.refused != "" {
				var re *pickle.RefusedError
				if !errors.As(err, &re) || re.Module != c.refused {
					t.Errorf("want the allow-list's refusal of a name in %s, got %v", c.refused, err)
				}
			} else {
				var se *sklearn.SkopsError
				if !errors.As(err, &se) {
					t.Fatalf("want a *sklearn.SkopsError, got %T %v", err, err)
				}
				if c.member != "" && se.Member != c.member {
					t.Errorf("names member %q, want %q", se.Member, c.member)
				}
				if c.node != "" && se.Node != c.node {
					t.Errorf("names node %q, want %q", se.Node, c.node)
				}
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("the message does not say %q", c.says)
			}
			if !strings.Contains(err.Error(), c.file) {
				t.Errorf("the message does not name the file")
			}
		})
	}
}
