//go:build linux

package sdk

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
)

// applyMemoryLimit bounds the process: the Go garbage collector is told to
// keep the heap under limit (debug.SetMemoryLimit), and the process's
// writable private memory (heap, anonymous mappings, stacks) may grow by at
// most limit beyond its current size (RLIMIT_DATA, which Linux applies to
// every such mapping since 4.7). An allocation past it fails and the Go
// runtime ends the process with "fatal error: runtime: out of memory",
// which the host reports.
//
// RLIMIT_AS is not used: the Go runtime reserves about a gigabyte of
// address space it never touches, and a cgo process (glibc) reserves 64 MiB
// arenas per thread, so the address space says little about memory use.
func applyMemoryLimit(limit int64) error {
	debug.SetMemoryLimit(limit - limit/8)
	base, err := vmData()
	if err != nil {
		return err
	}
	hard := uint64(base) + uint64(limit)
	rl := syscall.Rlimit{Cur: hard, Max: hard}
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &cur); err == nil && cur.Max < hard {
		// Already lower: keep it.
		return nil
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &rl); err != nil {
		return fmt.Errorf("setrlimit(RLIMIT_DATA): %w", err)
	}
	return nil
}

// vmData returns the current size of the process's private writable
// memory in bytes (VmData: what RLIMIT_DATA counts).
func vmData() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading the data size of the process: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("VmData:")); ok {
			f := bytes.Fields(rest)
			if len(f) != 2 || string(f[1]) != "kB" {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				break
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}
