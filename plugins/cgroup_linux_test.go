//go:build linux

package plugins

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCgroupMemoryLimit reads the limit from cgroup trees laid out as the
// kernel lays them out: v2 with the limit on a parent group, v2 inside a
// cgroup namespace, v1's memory controller, v1 without a limit.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name, self string
		files      map[string]string
		want       int64
	}{
		{"v2, the pod's limit above the container's max", "0::/kubepods/pod1/ctr\n",
			map[string]string{"kubepods/memory.max": "25769803776\n", "kubepods/pod1/memory.max": "2147483648\n", "kubepods/pod1/ctr/memory.max": "max\n"}, 2 << 30},
		{"v2 in a cgroup namespace", "0::/\n", map[string]string{"memory.max": "1073741824\n"}, 1 << 30},
		{"v1 memory controller", "5:devices:/docker/abc\n4:memory:/docker/abc\n0::/\n",
			map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n", "memory/docker/abc/memory.limit_in_bytes": "536870912\n"}, 512 << 20},
		{"v1 unlimited", "4:cpuacct,memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"no cgroup files", "0::/user.slice\n", nil, 0},
	} {
		root := t.TempDir()
		for name, content := range c.files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := cgroupMemoryLimit(c.self, root); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// This machine: never more than its RAM.
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	if m, total := physicalMemory(), int64(si.Totalram)*int64(si.Unit); m <= 0 || m > total {
		t.Errorf("physicalMemory %d, RAM %d", m, total)
	}
}
