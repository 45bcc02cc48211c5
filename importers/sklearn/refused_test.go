package sklearn_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// TestRefusedSVCProbability: SVC(probability=True) is refused with the
// fix, not converted with probabilities that differ from libsvm's.
func TestRefusedSVCProbability(t *testing.T) {
	path := filepath.Join(fixtureDir, "refused_svc_proba.p4.pkl")
	_, err := sklearn.New().Import(context.Background(), path, nil)
	var oe *sklearn.UnsupportedOptionError
	if !errors.As(err, &oe) || oe.Option != "probability=True" {
		t.Fatalf("got %v, want an UnsupportedOptionError for probability=True", err)
	}
	if !strings.Contains(err.Error(), "probability=False") {
		t.Errorf("the message does not give the fix: %v", err)
	}
}
