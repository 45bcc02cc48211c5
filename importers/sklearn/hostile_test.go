package sklearn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// pk assembles a protocol 4 pickle from opcode pieces.
func pk(parts ...[]byte) []byte {
	return append(append([]byte{0x80, 4}, bytes.Join(parts, nil)...), '.')
}

func ustr(s string) []byte { return append([]byte{0x8c, byte(len(s))}, s...) }

func global(mod, name string) []byte {
	return append(append(ustr(mod), ustr(name)...), 0x93)
}

// call is callable(arg) through REDUCE.
func call(mod, name, arg string) []byte {
	return bytes.Join([][]byte{global(mod, name), ustr(arg), {0x85, 'R'}}, nil)
}

func nested(n int) []byte {
	b := bytes.Repeat([]byte{']'}, n)
	b = append(b, bytes.Repeat([]byte{'a'}, n-1)...)
	return pk(b)
}

// laughs memoizes list k as [list k-1, list k-1], 60 times: 2^60 leaves
// if expanded.
func laughs() []byte {
	b := []byte{']', 'K', 1, 'a', 0x94}
	for k := 1; k <= 60; k++ {
		idx := make([]byte, 4)
		binary.LittleEndian.PutUint32(idx, uint32(k-1))
		b = append(b, '0', '(', 'j')
		b = append(b, idx...)
		b = append(b, 'j')
		b = append(b, idx...)
		b = append(b, 'l', 0x94)
	}
	return pk(b)
}

// TestHostile feeds hostile files to the importer: each is refused
// quickly with an error naming the file and the fault, nothing it asks
// for is executed (the marker file its payload would create does not
// exist) and no model is returned.
func TestHostile(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "PWNED")
	touch := "touch " + marker
	valid, err := os.ReadFile(filepath.Join(fixtureDir, "logreg_binary.p4.pkl"))
	if err != nil {
		t.Fatal(err)
	}
	valid0, err := os.ReadFile(filepath.Join(fixtureDir, "logreg_binary.p0.pkl"))
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 8)
	binary.LittleEndian.PutUint64(big, 1<<62)
	rng := rand.New(rand.NewSource(7))
	random := make([]byte, 5000)
	rng.Read(random)
	randomPickle := append([]byte{0x80, 4}, random...)

	cases := []struct {
		name string
		data []byte
		want string // in the message
		as   any    // error type expected with errors.As
	}{
		{"os_system", pk(call("os", "system", touch)), "refusing to load os.system: not a scikit-learn class", new(*pickle.RefusedError)},
		{"posix_system", pk(call("posix", "system", touch)), "refusing to load posix.system", new(*pickle.RefusedError)},
		{"subprocess_popen_text_global", pk([]byte("csubprocess\nPopen\n"), ustr(touch), []byte{0x85, 'R'}), "refusing to load subprocess.Popen: not a scikit-learn class", new(*pickle.RefusedError)},
		{"builtins_eval", pk(call("builtins", "eval", "__import__('os').system('"+touch+"')")), "refusing to load builtins.eval", new(*pickle.RefusedError)},
		{"builtins_exec", pk(call("builtins", "exec", "import os; os.system('"+touch+"')")), "refusing to load builtins.exec", new(*pickle.RefusedError)},
		{"builtins_getattr", pk(call("builtins", "getattr", "x")), "refusing to load builtins.getattr", new(*pickle.RefusedError)},
		{"numpy_load", pk(call("numpy", "load", "/etc/passwd")), "refusing to load numpy.load", new(*pickle.RefusedError)},
		{"numpy_loadtxt_inst", pk([]byte("("), ustr("x"), []byte("inumpy\nloadtxt\n")), "refusing to load numpy.loadtxt", new(*pickle.RefusedError)},
		{"estimator_dict_payload", pk(global("sklearn.linear_model._base", "LinearRegression"), []byte{')', 0x81, '}', '('}, ustr("coef_"), call("os", "system", touch), []byte{'u', 'b'}), "refusing to load os.system", new(*pickle.RefusedError)},
		{"unsupported_estimator", pk(global("sklearn.ensemble._weight_boosting", "AdaBoostClassifier"), []byte{')', 0x81}), "scikit-learn class AdaBoostClassifier is not supported (nearest supported: ", new(*sklearn.UnsupportedClassError)},
		{"truncated", valid[:len(valid)/2], "truncated", new(*pickle.FormatError)},
		{"length_2_62", pk([]byte{0x8e}, big), "claims 4611686018427387904 bytes", new(*pickle.FormatError)},
		{"nested_200000_lists", nested(200000), "nesting depth", new(*pickle.LimitError)},
		{"nested_200000_marks", pk(bytes.Repeat([]byte{'('}, 200000)), "nesting depth", new(*pickle.LimitError)},
		{"memo_2_60", laughs(), "expected a scikit-learn estimator", nil},
		{"random_bytes", random, "not a pickle", new(*sklearn.NotPickleError)},
		{"random_after_proto", randomPickle, "", nil},
		{"empty", nil, "not a pickle", new(*sklearn.NotPickleError)},
		{"plain_dict", pk([]byte{'}', 0x94}), "expected a scikit-learn estimator, found {}", nil},
		{"persistent_id", pk(ustr("x"), []byte{'Q'}), "persistent id", new(*pickle.RefusedError)},
		{"out_of_band_buffer", pk([]byte{0x97}), "NEXT_BUFFER", new(*pickle.RefusedError)},
		// protocols 0 and 1 (no PROTO)
		{"p0_os_system", []byte("cos\nsystem\n(S'" + touch + "'\ntR."), "refusing to load os.system", new(*pickle.RefusedError)},
		{"p0_inst_popen", []byte("(S'" + touch + "'\nisubprocess\nPopen\n."), "refusing to load subprocess.Popen", new(*pickle.RefusedError)},
		{"p0_unicode_eval", []byte("c__builtin__\neval\n(V__import__('os').system('" + touch + "')\ntR."), "refusing to load __builtin__.eval", new(*pickle.RefusedError)},
		{"p1_obj_popen", []byte("(csubprocess\nPopen\nX\x02\x00\x00\x00lso."), "refusing to load subprocess.Popen", new(*pickle.RefusedError)},
		{"p0_persid", []byte("ccopy_reg\n_reconstructor\n(P0\ntR."), "persistent id", new(*pickle.RefusedError)},
		{"p0_bad_string", []byte("ccopy_reg\n_reconstructor\n(S'unterminated\ntR."), "not a pickle", new(*sklearn.NotPickleError)}, // Sniff refuses it
		{"p0_bad_escape", []byte("ccopy_reg\n_reconstructor\n(V\\u12\ntR."), "bad UNICODE", new(*pickle.FormatError)},
		{"p0_truncated", valid0[:len(valid0)/2], "truncated", new(*pickle.FormatError)},
		{"p0_get_unset", []byte("ccopy_reg\n_reconstructor\n(g99\ntR."), "never stored", new(*pickle.FormatError)},
		{"p0_nested_marks", append([]byte("ccopy_reg\n_reconstructor\n"), bytes.Repeat([]byte{'('}, 200000)...), "not a pickle", new(*sklearn.NotPickleError)}, // Sniff: more than 1000 marks
		{"text_file", []byte("cat notes.txt\nthen run it\n"), "not a pickle", new(*sklearn.NotPickleError)},
	}
	imp := sklearn.New()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".pkl")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := imp.Import(context.Background(), path, nil)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if err == nil {
				res.Model.Close()
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, path) {
				t.Errorf("the error does not name the file: %v", err)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %q", msg, c.want)
			}
			if c.as != nil && !errors.As(err, c.as) {
				t.Errorf("error %v is not a %T", err, c.as)
			}
			if len(msg) > 2000 {
				t.Errorf("error of %d bytes", len(msg))
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the payload ran: %s exists", marker)
			}
		})
	}
}

// TestOldJoblibRefusedClearly checks that a container this build cannot
// read (joblib < 0.10's ZF files) is named, with the fix.
func TestOldJoblibRefusedClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.joblib")
	if err := os.WriteFile(path, []byte("ZF0x10\x00rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sklearn.New().Import(context.Background(), path, nil)
	var ue *sklearn.UnsupportedContainerError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "compress=('zlib', 3)") {
		t.Fatalf("got %v", err)
	}
}

// TestHugeDictionaryRefused: an xz or lzma header asking for a
// dictionary of gigabytes is refused before anything is allocated.
func TestHugeDictionaryRefused(t *testing.T) {
	// xz: stream header (magic, flags, CRC32), then a block header of 12
	// bytes: one LZMA2 filter (0x21) whose dictionary code 38 is 2 GiB.
	xzHead := []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x02\x00\x21\x01\x26\x00\x00\x00\x00\x00\x00\x00rest of the stream")
	// lzma (alone): properties 0x5d, a 2 GiB dictionary, unknown size.
	lzmaHead := append([]byte{0x5d, 0, 0, 0, 0x80}, bytes.Repeat([]byte{0xff}, 8)...)
	lzmaHead = append(lzmaHead, make([]byte, 64)...)
	for name, data := range map[string][]byte{"xz": xzHead, "lzma": lzmaHead} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := sklearn.Parse(data)
			if err == nil || !strings.Contains(err.Error(), "dictionary") {
				t.Fatalf("got %v, want a refused dictionary", err)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}
