package pickle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func allowAll(module, name string) error { return nil }

// TestLoadFixture reads a pickle written by Python's pickle.dump
// (protocol 5) and checks the recorded estimator and its attributes.
func TestLoadFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "fixtures", "sklearn", "logreg_binary.p5.pkl"))
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
