//go:build linux

package plugins

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in its own process group, so that killing
// the group also ends anything it started, and has the kernel kill it if
// the host dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the plugin's process group and the plugin.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// physicalMemory returns the memory this process may use in bytes: the
// size of RAM, or its cgroup's limit (a container's) when smaller; 0 if
// unknown.
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	total := int64(si.Totalram) * int64(si.Unit)
	if self, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		if l := cgroupMemoryLimit(string(self), "/sys/fs/cgroup"); l > 0 && l < total {
			return l
		}
	}
	return total
}
