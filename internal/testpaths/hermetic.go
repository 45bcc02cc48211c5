package testpaths

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The tests of a package see a home of their own: Main (and Hermetic,
// for a TestMain that does not run its tests through Main) points HOME,
// the XDG base folders and TMPDIR at new empty folders for the test
// process, so that what `onnxconv runtimes install`, a user plugin or a
// user setting left in the real home and data folders cannot change what
// a test finds. Child processes the tests start (the built CLI, plugins,
// Node) inherit it. Go's own folders (GOCACHE, GOMODCACHE, GOPATH, GOENV)
// are pinned to where they were, so that a test that runs `go build`
// reuses the build cache rather than start from nothing.

// hermeticVars are the variables Hermetic points at folders of their own.
var hermeticVars = []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR"}

// goVars are Go's folders, which default to places under HOME.
var goVars = []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}

// Hermetic points HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME,
// XDG_STATE_HOME and TMPDIR at new empty folders under one temporary
// folder (GOCACHE, GOMODCACHE, GOPATH and GOENV keep their values) and
// returns the function that removes that folder and restores the
// variables. It is for TestMain, before m.Run: it changes the process's
// environment.
func Hermetic() (restore func(), err error) {
	pinned, err := goFolders()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "onnxconv-test-home-")
	if err != nil {
		return nil, fmt.Errorf("hermetic test folders: %w", err)
	}
	saved := map[string]*string{}
	for _, k := range append(append([]string{}, hermeticVars...), goVars...) {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = &v
		} else {
			saved[k] = nil
		}
	}
	restore = func() {
		for k, v := range saved {
			if v == nil {
				_ = os.Unsetenv(k)
			} else {
				_ = os.Setenv(k, *v)
			}
		}
		_ = os.RemoveAll(root)
	}
	set := func(k, v string) error {
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("hermetic test folders: %w", err)
		}
		return nil
	}
	for k, v := range pinned {
		if err := set(k, v); err != nil {
			restore()
			return nil, err
		}
	}
	for _, k := range hermeticVars {
		d := filepath.Join(root, k)
		if err := os.Mkdir(d, 0o700); err != nil {
			restore()
			return nil, fmt.Errorf("hermetic test folders: %w", err)
		}
		if err := set(k, d); err != nil {
			restore()
			return nil, err
		}
	}
	return restore, nil
}

// goFolders returns Go's folders as `go env` reports them now, or none
// when there is no go command (a test binary run on its own, which
// builds nothing).
func goFolders() (map[string]string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, nil
	}
	out, err := exec.Command(goCmd, append([]string{"env", "-json"}, goVars...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("hermetic test folders: go env: %w", err)
	}
	vals := map[string]string{}
	if err := json.Unmarshal(out, &vals); err != nil {
		return nil, fmt.Errorf("hermetic test folders: go env: %w", err)
	}
	for k, v := range vals {
		if v == "" {
			delete(vals, k)
		}
	}
	return vals, nil
}
