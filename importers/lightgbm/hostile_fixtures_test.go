package lightgbm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures/hostile/lightgbm/shared_bitset: 200 categorical splits sharing
// one 4,096-word bitset are refused before the bitset is expanded per
// split.
func TestHostileSharedBitset(t *testing.T) {
	_, err := New().Import(context.Background(), filepath.Join("..", "..", "fixtures", "hostile", "lightgbm", "shared_bitset", "model.txt"), nil)
	if err == nil || !strings.Contains(err.Error(), "used by a second split") {
		t.Errorf("shared bitset: %v", err)
	}
}
