//go:build !unix

package plugins

import (
	"os"
	"os/exec"
)

func setProcAttr(*exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func physicalMemory() int64 { return 0 }
