package catboost

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures/hostile/catboost/shared_vector (made by make_hostile.go): 20,000
// float features that are one table, whose borders vector holds 16,384
// floats, are refused by the decode budget before the borders are copied
// 20,000 times.
func TestHostileSharedVector(t *testing.T) {
	_, err := New().Import(context.Background(), filepath.Join("..", "..", "fixtures", "hostile", "catboost", "shared_vector", "model.cbm"), nil)
	if err == nil || !strings.Contains(err.Error(), "referenced many times") {
		t.Errorf("shared vector: %v", err)
	}
}
