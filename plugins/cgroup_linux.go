//go:build linux

package plugins

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupMemoryLimit returns the memory limit of the cgroup a process is
// in — given /proc/self/cgroup's text and where the cgroup file systems
// are mounted (/sys/fs/cgroup) — or 0 when there is none: cgroup v2's
// memory.max, v1's memory.limit_in_bytes, the smallest of the process's
// group and the groups above it. A container's limit is what the kernel
// enforces, not the host's RAM.
func cgroupMemoryLimit(self, root string) int64 {
	var limit int64
	for _, line := range strings.Split(self, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		var base, file string
		switch {
		case f[0] == "0" && f[1] == "": // v2, the unified hierarchy
			base, file = root, "memory.max"
		case containsWord(f[1], "memory"): // v1
			base, file = filepath.Join(root, "memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		dir := filepath.Join(base, filepath.FromSlash(filepath.Clean("/"+f[2])))
		for {
			if l := readLimit(filepath.Join(dir, file)); l > 0 && (limit == 0 || l < limit) {
				limit = l
			}
			if dir == base || len(dir) < len(base) {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
	return limit
}

// readLimit reads a cgroup memory limit file: 0 for "max", v1's
// "unlimited" (a number near 2^63) or a file that is not there.
func readLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

func containsWord(list, word string) bool {
	for _, w := range strings.Split(list, ",") {
		if w == word {
			return true
		}
	}
	return false
}
