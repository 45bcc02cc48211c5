// Package pgtest starts a PostgreSQL server of its own for a test: a new
// cluster in a temporary folder (initdb), listening on a free loopback
// port, stopped and removed when the test ends. The programs are
// Debian's postgresql package's, found by testpaths.Postgres (which skips
// the test, counted, when they are missing).
//
// PostgreSQL refuses to run as root, and CI runs the tests as root: then
// the cluster belongs to the "postgres" user Debian's package creates
// (else "nobody"), and every program runs through runuser.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// Start runs a new PostgreSQL cluster for t and returns its URL (user
// onnxconv, trusted on loopback, database postgres).
func Start(t testing.TB) string {
	t.Helper()
	bin := testpaths.Postgres(t)
	dir, as, err := clusterDir(t)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	data := filepath.Join(dir, "data")
	run := func(prog string, args ...string) {
		t.Helper()
		cmd := as.command(filepath.Join(bin, prog), args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pgtest: %s %v: %v\n%s", prog, args, err, out)
		}
	}
	run("initdb", "-D", data, "-U", "onnxconv", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	port, err := freePort()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// fsync off: the cluster lives as long as the test.
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off", port, dir)
	run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "60", "start")
	t.Cleanup(func() {
		cmd := as.command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("pgtest: stopping PostgreSQL: %v\n%s", err, out)
		}
	})
	return fmt.Sprintf("postgres://onnxconv@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// runner runs the PostgreSQL programs: this process, or (as root) an
// unprivileged user through runuser.
type runner struct{ name string }

func (r runner) command(prog string, args ...string) *exec.Cmd {
	if r.name == "" {
		return exec.Command(prog, args...)
	}
	return exec.Command("runuser", append([]string{"-u", r.name, "--", prog}, args...)...)
}

// clusterDir makes the cluster's folder and chooses who runs
// PostgreSQL: this process in a test folder; as root, the "postgres"
// user (or "nobody"), owning a new folder in /tmp (the test's temporary
// folder is closed to other users), removed when the test ends.
func clusterDir(t testing.TB) (string, runner, error) {
	if os.Geteuid() != 0 {
		return t.TempDir(), runner{}, nil
	}
	dir, err := os.MkdirTemp("/tmp", "onnxconv-pgtest-")
	if err != nil {
		return "", runner{}, fmt.Errorf("making the cluster's folder: %w", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	as, err := runAs(dir)
	return dir, as, err
}

// runAs gives dir to an unprivileged user.
func runAs(dir string) (runner, error) {
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return runner{}, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user and there is neither postgres nor nobody: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return runner{}, fmt.Errorf("giving %s to %s: %w", dir, u.Username, err)
	}
	return runner{name: u.Username}, nil
}

// freePort is a loopback TCP port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
