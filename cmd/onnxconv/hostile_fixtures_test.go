package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileCase is one entry of fixtures/hostile/cases.json (written by
// make_hostile.py and make_hostile.go beside it).
type hostileCase struct {
	Dir   string   `json:"dir"`
	Model string   `json:"model"`
	Class string   `json:"class"`
	Args  []string `json:"args"`
}

// The limits every hostile file is held to (issue 24).
const (
	hostileWall = 5 * time.Second
	hostileRSS  = 1 << 30
)

// openRE matches a successful open in strace -y output: the resolved
// path of the returned descriptor.
var openRE = regexp.MustCompile(`open(?:at2?)?\(.*\) = \d+<(.*)>$`)

// TestHostileFixtures runs the built CLI on every regression file under
// fixtures/hostile/: each is refused (exit 1 or 2) within 5 s, with a
// peak RSS under 1 GiB (the child's rusage, which counts the plugin
// processes it waited for), nothing written (no output, the case's folder
// unchanged), and no file opened outside the case's folder. The opens are
// observed with strace -f -y (every process, with the path each returned
// descriptor resolves to, so a symlink followed shows its target); a
// forbidden open is one that resolves into fixtures/hostile outside the
// case's folder (its _outside/ holds what the symlinks point at),
// /etc/passwd, or the folder / or /etc (a walk). Without strace the open
// check is skipped and says so.
func TestHostileFixtures(t *testing.T) {
	root, err := filepath.Abs(filepath.Join(repoDir(t), "fixtures", "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []hostileCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("cases.json lists %d cases; run fixtures/hostile/make_hostile.py and make_hostile.go", len(cases))
	}
	bin := onnxconvBin(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Log("strace not found: the opens of the hostile cases are not checked (apt-get install strace)")
		strace = ""
	}
	classes := map[string]int{}
	for _, c := range cases {
		classes[c.Class]++
		t.Run(c.Dir+"/"+c.Args[0], func(t *testing.T) {
			runHostile(t, bin, strace, root, c)
		})
	}
	// The readers' own sets (skops, legacy XGBoost binaries, TorchScript
	// archives): one folder of files per format, each file a case that
	// convert must refuse.
	for _, d := range []string{"skops", "xgboost-legacy", "torchscript"} {
		files, err := filepath.Glob(filepath.Join(root, d, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no hostile files in fixtures/hostile/%s (%v)", d, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".md") {
				continue
			}
			c := hostileCase{Dir: d, Model: filepath.Base(f), Class: "reader", Args: []string{"convert", "MODEL", "OUT"}}
			classes[c.Class]++
			t.Run(d+"/"+c.Model, func(t *testing.T) {
				runHostile(t, bin, strace, root, c)
			})
		}
	}
	for _, cl := range []string{"symlink read outside the folder", "read outside the folder", "exponential work", "huge memory",
		"panic", "silent acceptance", "unclear message"} {
		if classes[cl] == 0 {
			t.Errorf("no case of class %q", cl)
		}
	}
}

func runHostile(t *testing.T, bin, strace, root string, c hostileCase) {
	dir := filepath.Join(root, filepath.FromSlash(c.Dir))
	before := folderState(t, dir)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(out, "model.onnx")
	if c.Args[0] == "batch" {
		target = filepath.Join(out, "batch")
	}
	var args []string
	for _, a := range c.Args {
		switch a {
		case "MODEL":
			a = filepath.Join(dir, filepath.FromSlash(c.Model))
		case "OUT":
			a = target
		}
		args = append(args, a)
	}
	trace := filepath.Join(tmp, "trace")
	name := bin
	if strace != "" {
		name = strace
		args = append([]string{"-f", "-y", "-qq", "--seccomp-bpf", "-e", "trace=open,openat,openat2", "-o", trace, "--", bin}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = tmp
	// On timeout the whole process group dies: strace killed alone
	// would leave the CLI running, detached.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	plugTmp := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(plugTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "TMPDIR="+plugTmp)
	start := time.Now()
	outb, _ := cmd.CombinedOutput()
	wall := time.Since(start)
	code := cmd.ProcessState.ExitCode()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	msg := strings.TrimSpace(string(outb))
	t.Logf("%s (%s): exit %d in %v, peak RSS %d MiB: %.300s", c.Dir, c.Class, code, wall.Round(time.Millisecond), rss>>20, msg)
	if code != 1 && code != 2 && code != exitUnsupported {
		t.Errorf("exit code %d, want 1, 2 or 4 (refused): %s", code, msg)
	}
	if wall > hostileWall {
		t.Errorf("took %v, more than %v", wall, hostileWall)
	}
	if rss > hostileRSS {
		t.Errorf("peak RSS %d MiB, more than %d MiB", rss>>20, hostileRSS>>20)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("%s was written", target)
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("the output folder holds %d entries", len(ents))
	}
	if after := folderState(t, dir); after != before {
		t.Errorf("the case's folder changed:\nbefore %s\nafter  %s", before, after)
	}
	if strace == "" {
		return
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	opens := 0
	for sc.Scan() {
		m := openRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		opens++
		p := m[1]
		inCase := p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
		switch {
		case strings.HasPrefix(p, root+string(filepath.Separator)) && !inCase,
			p == "/etc/passwd", p == "/", p == "/etc":
			t.Errorf("opened %s, outside the case's folder: %s", p, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if opens == 0 {
		t.Errorf("strace saw no open at all: the trace is not being read")
	}
}

// folderState lists dir's entries (links not followed) with their sizes
// and modes.
func folderState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + info.Mode().String() + " " + info.ModTime().UTC().Format(time.RFC3339Nano))
		if info.Mode().IsRegular() {
			b.WriteString(" " + strconv.FormatInt(info.Size(), 10))
		}
		b.WriteString("; ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLongTMPDIR: with a TMPDIR of 150 characters the CLI still imports
// through its plugins (their socket paths stay under the platform's 108
// bytes), where it used to fail every non-ONNX import.
func TestLongTMPDIR(t *testing.T) {
	bin := onnxconvBin(t)
	base := t.TempDir()
	long := filepath.Join(base, strings.Repeat("t", 150-len(base)-1))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(long) != 150 {
		t.Fatalf("TMPDIR is %d characters, want 150", len(long))
	}
	out := filepath.Join(base, "m.onnx")
	cmd := exec.Command(bin, "convert", filepath.Join(repoDir(t), "fixtures", "sklearn", "normalizer_l1.p4.pkl"), out, "--no-verify")
	cmd.Env = append(os.Environ(), "TMPDIR="+long)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("convert with a 150-character TMPDIR: %v\n%s", err, b)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no output: %v\n%s", err, b)
	}
}
