package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestHostileLauncherRSS: a child started straight from this test binary
// after it held 128 MiB reports that peak as its own (os/exec starts
// children with vfork, CLONE_VM: the exec'd child's rusage starts from
// the peak RSS of the memory it shared), which is what TestHostileFixtures
// used to log as the CLI's peak; started through hostileLauncher the same
// program reports its own, and the launcher passes its exit code on.
func TestHostileLauncherRSS(t *testing.T) {
	prog, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	const held = 128 << 20
	b := make([]byte, held)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)

	direct := exec.Command(prog, "-c", "exit 3")
	_ = direct.Run()
	ru, ok := direct.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage")
	}
	if rss := int64(ru.Maxrss) * 1024; rss < held {
		// Not a failure of ours: a kernel that does not carry the
		// peak over would make the launcher unnecessary, not wrong.
		t.Logf("started directly: peak RSS %d MiB, under the %d MiB this binary held (the kernel does not carry it over)", rss>>20, held>>20)
	} else {
		t.Logf("started directly: peak RSS %d MiB (this binary's own peak)", rss>>20)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "rusage.json")
	cmd := exec.Command(self, prog, "-c", "exit 3")
	cmd.Env = append(os.Environ(), hostileLauncherEnv+"="+report)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("the launcher exited %d, want the command's 3: %s", code, out)
	}
	rb, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no report: %v: %s", err, out)
	}
	var u launcherUsage
	if err := json.Unmarshal(rb, &u); err != nil {
		t.Fatal(err)
	}
	t.Logf("through the launcher: %+v", u)
	if u.Code != 3 || u.Err != "" {
		t.Errorf("report %+v, want code 3 and no error", u)
	}
	if u.MaxRSS <= 0 || u.MaxRSS >= held/2 {
		t.Errorf("through the launcher: peak RSS %d MiB, want above 0 and under %d MiB", u.MaxRSS>>20, held>>21)
	}
}
