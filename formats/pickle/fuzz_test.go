package pickle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzLoad checks that no input makes Load panic, hang or exceed its
// limits; the seed corpus is real scikit-learn pickles and hostile ones.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"logreg_binary.p4.pkl", "logreg_multinomial.p5.pkl", "pipeline_scaler_logreg.p4.pkl", "mlp_classifier.p5.pkl", "kmeans.joblib", "logreg_binary.p0.pkl", "pipeline_scaler_logreg.p1.pkl"} {
		b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(f), "fixtures", "sklearn", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02ls\x85R."))
	f.Add([]byte("\x80\x02csubprocess\nPopen\n(X\x02\x00\x00\x00lstR."))
	f.Add([]byte("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x40."))
	f.Add([]byte("\x80\x04]\x94(h\x00h\x00l\x94."))
	f.Add([]byte("\x80\x05\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(K\x01\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09u."))
	f.Add([]byte("cos\nsystem\n(S'ls'\ntR."))
	f.Add([]byte("(S'a\\xe9\\n'\nV\\u20ac\nF1.5\nI01\ntPpid\n."))
	f.Fuzz(func(t *testing.T, data []byte) {
		if p := Sniff(data); p < -1 || p > 5 {
			t.Fatalf("Sniff gives %d", p)
		}
		v, n, err := Load(data, Options{Allow: func(m, n string) error { return nil }, AfterBuild: func(d *Decoder, o *Object) (Value, error) {
			if d.Remaining() > 0 && o.Class() != nil && o.Class().Name == "Nested" {
				return d.LoadNested()
			}
			return o, nil
		}})
		if err == nil {
			if n > len(data) {
				t.Fatalf("read %d of %d bytes", n, len(data))
			}
			_ = Describe(v)
		}
	})
}
