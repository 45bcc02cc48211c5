package node

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	b, err := Frame(map[string]int{"n": 3}, []byte("ab"), []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	var head struct{ N int }
	rest, err := Unframe(b, &head)
	if err != nil || head.N != 3 || string(rest) != "abc" {
		t.Fatalf("Unframe = %+v %q %v", head, rest, err)
	}
	if _, err := Unframe(b[:2], &head); err == nil {
		t.Error("a short answer is not an error")
	}
	if _, err := Unframe(b[:6], &head); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a cut header: %v", err)
	}
}

// A missing node names the runtime, what it installs next and the one
// command; a missing package where it was looked for.
func TestMissing(t *testing.T) {
	s := Spec{Runtime: "demo", Then: "the demo", Install: "npm install demo", Package: "demo", Build: "demo.js"}
	_, err := s.Find(FindOptions{
		Getenv:   func(string) string { return "" },
		LookPath: func(string) (string, error) { return "", exec.ErrNotFound },
	})
	var me *MissingError
	if !errors.As(err, &me) || me.What != "node" || !strings.HasPrefix(err.Error(), "demo runtime: Node.js not found") ||
		!strings.Contains(err.Error(), "then the demo with:\n  npm install demo") {
		t.Errorf("no node: %v", err)
	}
	empty := t.TempDir()
	_, err = s.Find(FindOptions{
		Getenv: func(k string) string {
			if k == EnvNodeModules {
				return empty
			}
			return ""
		},
		LookPath: func(string) (string, error) { return "/usr/bin/node", nil },
	})
	if !errors.As(err, &me) || me.What != "demo" || len(me.Looked) != 1 || me.Looked[0] != empty {
		t.Errorf("no package: %v", err)
	}
}

// Exec keeps at most MaxStdout bytes of the answer and the tail of stderr.
func TestExecLimits(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := Exec(context.Background(), Process{
		Node:      sh,
		Args:      []string{"-c", "cat; printf 0123456789; printf abcdef >&2"},
		Stdin:     []byte("in:"),
		MaxStdout: 8,
		MaxStderr: 3,
	})
	if err != nil || out.Err != nil {
		t.Fatal(err, out.Err)
	}
	if string(out.Stdout) != "in:01234" || !out.Truncated || string(out.Stderr) != "def" {
		t.Errorf("stdout %q (truncated %v), stderr %q", out.Stdout, out.Truncated, out.Stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Exec(ctx, Process{Node: sh, Args: []string{"-c", "sleep 5"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}
