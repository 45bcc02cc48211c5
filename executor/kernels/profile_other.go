//go:build !linux

package kernels

import "time"

// ThreadCPUTime is the CPU time of the calling thread: 0 (measured on
// Linux only).
func ThreadCPUTime() time.Duration { return 0 }

func threadClock() (tid int, cpu time.Duration) { return 0, 0 }
