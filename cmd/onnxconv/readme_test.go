package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// firstCommands returns the shell commands of the fenced blocks of
// README's first section (before its first "## " heading), comments
// dropped and continued lines joined, in order.
func firstCommands(readme []byte) []string {
	var cmds []string
	fenced := false
	cont := ""
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		s := strings.TrimSpace(line)
		if !fenced || s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if c, ok := strings.CutSuffix(s, `\`); ok {
			cont += c + " "
			continue
		}
		cmds = append(cmds, cont+s)
		cont = ""
	}
	return cmds
}

// newcomerEnv is the environment of a new user: the process's variables
// without onnxconv's and ONNX Runtime's, HOME, TMPDIR and the XDG folders
// empty and new, Go's build and module caches kept (so that the build
// reuses them, with -trimpath so that the clone's folder does not change
// the cache keys).
func newcomerEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "ONNXCONV_"), strings.HasPrefix(k, "ONNXRUNTIME"), strings.HasPrefix(k, "XDG_"),
			k == "HOME", k == "TMPDIR", k == "GOFLAGS", k == "GOCACHE", k == "GOMODCACHE", k == "GOPATH":
			continue
		}
		env = append(env, kv)
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 4 {
		t.Fatalf("go env printed %q", out)
	}
	home := t.TempDir()
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	return append(env, "HOME="+home, "TMPDIR="+tmp, "GOCACHE="+v[0], "GOMODCACHE="+v[1], "GOPATH="+v[2],
		"GOFLAGS="+strings.TrimSpace(v[3]+" -trimpath"))
}

// TestREADMEFirstSteps follows README as a new user does: the commands of
// its first section, run in a fresh `git clone` of this repository (the
// committed tree) with an empty HOME and nothing installed, must end in a
// verified conversion (exit 0, EQUIVALENT against the source, the files
// written). Paths under /tmp in the commands are moved into the test's
// folder; `bash scripts/test.sh`, the test suite itself (which runs this
// test), is checked to exist and not run.
func TestREADMEFirstSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds onnxconv")
	}
	root := repoDir(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("%s is not a git checkout", root)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on $PATH")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := firstCommands(readme)
	if len(cmds) == 0 {
		t.Fatal("README's first section has no fenced command")
	}
	clone := filepath.Join(t.TempDir(), "onnxconv")
	if out, err := exec.Command(git, "clone", "--quiet", "--no-local", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	env := newcomerEnv(t)
	tmp := t.TempDir()
	var log bytes.Buffer
	ran := 0
	for _, c := range cmds {
		if strings.Contains(c, "scripts/test.sh") {
			if _, err := os.Stat(filepath.Join(clone, "scripts", "test.sh")); err != nil {
				t.Errorf("README runs %q, but the clone has no scripts/test.sh", c)
			}
			continue
		}
		c = strings.ReplaceAll(c, "/tmp/", tmp+"/")
		cmd := exec.Command("sh", "-c", c)
		cmd.Dir, cmd.Env = clone, env
		out, err := cmd.CombinedOutput()
		log.WriteString("$ " + c + "\n")
		log.Write(out)
		if err != nil {
			t.Fatalf("README command %q in a fresh clone: %v\n%s", c, err, log.String())
		}
		for _, f := range strings.Fields(c) {
			if strings.HasPrefix(f, tmp+"/") {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%q did not write %s", c, f)
				}
			}
		}
		ran++
	}
	got := log.String()
	if ran == 0 || !strings.Contains(got, "verify against the source") || !strings.Contains(got, ": EQUIVALENT") || strings.Contains(got, "NOT EQUIVALENT") {
		t.Errorf("README's first commands did not end in a verified conversion:\n%s", got)
	}
	t.Logf("ran %d of README's %d first commands in a fresh clone:\n%s", ran, len(cmds), got)
}
