package kernels

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock reads the calling thread's id and CPU time.
func threadClock() (tid int, cpu time.Duration) {
	return unix.Gettid(), ThreadCPUTime()
}

// ThreadCPUTime is the CPU time of the calling thread (0 when unknown).
// A goroutine that reads it twice must stay on its thread in between
// (runtime.LockOSThread).
func ThreadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
