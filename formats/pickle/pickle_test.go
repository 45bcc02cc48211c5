package pickle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func allowAll(module, name string) error { return nil }

// TestLoadFixture reads a pickle written by Python's pickle.dump
// (protocol 5) and checks the recorded estimator and its attributes.
func TestLoadFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures", "sklearn", "logreg_binary.p5.pkl"))
	if err != nil {
		t.Fatal(err)
	}
	v, n, err := Load(data, Options{Allow: allowAll})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(data) {
		t.Errorf("read %d of %d bytes", n, len(data))
	}
	o, ok := v.(*Object)
	if !ok || o.Class() == nil || o.Class().String() != "sklearn.linear_model._logistic.LogisticRegression" || o.Op != "NEWOBJ" {
		t.Fatalf("got %s", Describe(v))
	}
	a := o.Attrs()
	if s, _ := a.Get("solver"); s != "lbfgs" {
		t.Errorf("solver %v", s)
	}
	if c, _ := a.Get("C"); c != 1.0 {
		t.Errorf("C %v", c)
	}
	if n, _ := a.Get("n_features_in_"); n != int64(5) {
		t.Errorf("n_features_in_ %v", n)
	}
	coef, _ := a.Get("coef_")
	co, ok := coef.(*Object)
	if !ok || co.Class().Name != "_frombuffer" || len(co.Args) != 4 {
		t.Fatalf("coef_ %s", Describe(coef))
	}
	if b, ok := co.Args[0].(Bytes); !ok || len(b) != 40 {
		t.Errorf("coef_ data %s", Describe(co.Args[0]))
	}
}

// TestNoAllowRefusesAll checks that a nil Allow refuses every name.
func TestNoAllowRefusesAll(t *testing.T) {
	data := []byte("\x80\x04\x8c\x02os\x8c\x06system\x93.")
	_, _, err := Load(data, Options{})
	var re *RefusedError
	if !errors.As(err, &re) || re.Module != "os" || re.Name != "system" {
		t.Fatalf("got %v", err)
	}
}

// TestAllocationBound checks that DUP and TUPLE of memo references cannot
// allocate beyond the budget.
func TestAllocationBound(t *testing.T) {
	b := []byte{0x80, 4, ']', 0x94}
	for i := 0; i < 100000; i++ {
		b = append(b, 'h', 0)
	}
	b = append(b, 't')
	start := time.Now()
	_, _, err := Load(append(b, '.'), Options{Allow: allowAll, MaxAlloc: 100000})
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

// TestProtocol0And1Opcodes: the text opcodes of protocols 0 and 1
// (STRING with escapes, UNICODE with raw-unicode-escape, INT booleans,
// FLOAT, PUT/GET, GLOBAL, INST, OBJ) and Python 2 strs decoded as
// latin-1, written as Python's pickle module writes them.
func TestProtocol0And1Opcodes(t *testing.T) {
	allow := Options{Allow: func(m, n string) error { return nil }}
	// pickle.dumps(('a\xe9\n', u'\u20ac\\', 1.5, True, [1, 2]), protocol=0) from Python 2
	p0 := []byte("(S'a\\xe9\\n'\np0\nV\\u20ac\\u005c\np1\nF1.5\nI01\n(lp2\nI1\naI2\natp3\n.")
	v, n, err := Load(p0, allow)
	if err != nil || n != len(p0) {
		t.Fatalf("protocol 0: %v (read %d of %d)", err, n, len(p0))
	}
	tu, ok := v.(*Tuple)
	if !ok || len(tu.Items) != 5 {
		t.Fatalf("got %s", Describe(v))
	}
	if s := tu.Items[0].(string); s != "a\u00e9\n" {
		t.Errorf("STRING: %q", s)
	}
	if s := tu.Items[1].(string); s != "\u20ac\\" {
		t.Errorf("UNICODE: %q", s)
	}
	if tu.Items[2] != 1.5 || tu.Items[3] != true {
		t.Errorf("FLOAT, INT: %v %v", tu.Items[2], tu.Items[3])
	}
	if l := tu.Items[4].(*List); len(l.Items) != 2 || l.Items[1] != int64(2) {
		t.Errorf("list %s", Describe(l))
	}
	// protocol 1: INST and OBJ, BINSTRING and SHORT_BINSTRING as latin-1.
	p1 := []byte("((cmod\nK\nU\x02\xe9xo(U\x01aimod\nK\n]q\x00(K\x01K\x02et.")
	v, _, err = Load(p1, allow)
	if err != nil {
		t.Fatalf("protocol 1: %v", err)
	}
	tu, ok = v.(*Tuple)
	if !ok || len(tu.Items) != 3 {
		t.Fatalf("protocol 1: got %s", Describe(v))
	}
	obj, inst := tu.Items[0].(*Object), tu.Items[1].(*Object)
	if obj.Op != "OBJ" || obj.Class().String() != "mod.K" || obj.Args[0] != "\u00e9x" {
		t.Errorf("OBJ: %s %s", obj.Op, Describe(obj))
	}
	if inst.Op != "INST" || inst.Args[0] != "a" {
		t.Errorf("INST: %s %s", inst.Op, Describe(inst))
	}
	// pickle.dumps(A(), protocol=0), A a class of __main__
	obj0 := []byte("ccopy_reg\n_reconstructor\np0\n(c__main__\nA\np1\nc__builtin__\nobject\np2\nNtp3\nRp4\n.")
	if _, _, err := Load(obj0, allow); err != nil {
		t.Errorf("protocol 0 object: %v", err)
	}
	if Sniff(obj0) != 0 || Sniff(p0) != -1 || Sniff([]byte("\x80\x04\x95")) != 4 {
		t.Errorf("Sniff: %d, %d, %d (a protocol 0 or 1 pickle must name a global)", Sniff(obj0), Sniff(p0), Sniff([]byte("\x80\x04\x95")))
	}
	if got := Sniff([]byte("(cmod\nK\nU\x02\xe9xo")); got != 1 {
		t.Errorf("Sniff of protocol 1: %d", got)
	}
	for _, text := range []string{"copy this text\nplease\n", "c\n\n", "(ccsv\nwriter\n(tR-not an opcode", "I1\nI2\n.", "hello world"} {
		if got := Sniff([]byte(text)); got != -1 {
			t.Errorf("Sniff(%q) = %d, want -1", text, got)
		}
	}
}

// TestPersistentLoad: persistent ids are refused without a
// PersistentLoad, and replaced by what it returns with one.
func TestPersistentLoad(t *testing.T) {
	data := []byte("\x80\x02(X\x07\x00\x00\x00storageq\x00K\x05tQ.")
	_, _, err := Load(data, Options{})
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("want a refusal, got %v", err)
	}
	v, _, err := Load(data, Options{PersistentLoad: func(pid Value) (Value, error) {
		tu, ok := pid.(*Tuple)
		if !ok || len(tu.Items) != 2 || tu.Items[0] != "storage" {
			return nil, errors.New("unexpected pid")
		}
		return "loaded", nil
	}})
	if err != nil || v != "loaded" {
		t.Fatalf("got %v, %v", v, err)
	}
	v, _, err = Load([]byte("Pkey 1\n."), Options{PersistentLoad: func(pid Value) (Value, error) { return pid, nil }})
	if err != nil || v != "key 1" {
		t.Fatalf("PERSID: %v, %v", v, err)
	}
}
