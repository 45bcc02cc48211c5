package tflite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures/hostile/tflite/if_fanout: IF branches that fan out to a leaf
// of 2,000 operators (6^5 leaf conversions if expanded) hit the operator
// budget of the subgraph conversions.
func TestHostileIfFanout(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "hostile", "tflite", "if_fanout", "model.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = importProto(data, Options{})
	if err == nil || !strings.Contains(err.Error(), "operators for a model of this size") {
		t.Errorf("IF fan-out: %v", err)
	}
}
