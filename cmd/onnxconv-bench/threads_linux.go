package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// threadTimes returns the CPU time of each of the process's threads
// (/proc/self/task/*/schedstat: nanoseconds on a CPU), by thread id; nil
// when unknown.
func threadTimes() map[int]time.Duration {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	out := make(map[int]time.Duration, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[tid] = time.Duration(ns)
		}
	}
	return out
}

// gettid is the calling thread's id.
func gettid() int { return unix.Gettid() }
