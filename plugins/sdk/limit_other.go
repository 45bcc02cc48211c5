//go:build !linux

package sdk

import "runtime/debug"

// applyMemoryLimit can only ask the Go garbage collector to keep the heap
// under limit on this system; the host's time limit still bounds the call.
func applyMemoryLimit(limit int64) error {
	debug.SetMemoryLimit(limit)
	return nil
}
