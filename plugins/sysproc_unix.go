//go:build unix && !linux

package plugins

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in its own process group, so that killing
// the group also ends anything it started.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the plugin's process group and the plugin.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func physicalMemory() int64 { return 0 }
