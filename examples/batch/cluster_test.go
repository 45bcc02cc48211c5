package batch_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// cluster is a single-node Slurm cluster (munged, slurmctld, slurmd) run
// from a temporary folder with a generated slurm.conf.
type cluster struct {
	dir   string            // holds slurm.conf, state, spool, logs, the munge key
	progs map[string]string // program name → path
	env   []string          // the environment of client commands (SLURM_CONF)
}

// startCluster starts munged, slurmctld and slurmd in dir and waits for the
// node to be idle; the cluster is torn down when the test ends, also when
// it fails.
func startCluster(t *testing.T, progs map[string]string, dir string) *cluster {
	t.Helper()
	c := &cluster{dir: dir, progs: progs}
	for _, d := range []string{"state", "spool", "log", "munge"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// munge: a private key and socket; --force because the test may run
	// as root, as CI does.
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "munge", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.sock")
	t.Cleanup(c.stop)
	c.run(t, progs["munged"], "--force", "--socket="+sock, "--key-file="+keyFile,
		"--log-file="+filepath.Join(dir, "log", "munged.log"), "--pid-file="+filepath.Join(dir, "munged.pid"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"))

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".") // slurmd registers under the short name
	ports := freePorts(t, 2)
	// One node, this host. It declares 8 CPUs (config_overrides: slurmd
	// takes the configured count over the 2 cores the machine has) so
	// that the four array tasks of 2 CPUs each run at once and write the
	// shared results folder concurrently. cred_expire=5 lets a requeued
	// task start again after 5 s rather than the default 120 s.
	conf := fmt.Sprintf(`ClusterName=onnxconvtest
SlurmctldHost=%[1]s
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[2]s,cred_expire=5
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/log/slurmctld.log
SlurmdLogFile=%[5]s/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
JobRequeue=1
MpiDefault=none
SwitchType=switch/none
NodeName=%[1]s CPUs=8 RealMemory=16384 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, sock, ports[0], ports[1], dir)
	confFile := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env = append(cleanEnv(), "SLURM_CONF="+confFile)
	c.run(t, progs["slurmctld"], "-f", confFile)
	c.run(t, progs["slurmd"], "-f", confFile)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := c.client(progs["sinfo"], "-h", "-o", "%t").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Slurm node is not idle after 60 s (sinfo: %q)\n%s", out, c.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return c
}

// run starts a daemon (each forks into the background and writes its pid
// file) and fails the test when it does not start.
func (c *cluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = c.env
	if c.env == nil {
		cmd.Env = cleanEnv()
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s\n%s", filepath.Base(prog), strings.Join(args, " "), err, out, c.logs())
	}
}

// client returns a Slurm client command (sbatch, scontrol, squeue …) that
// talks to this cluster.
func (c *cluster) client(prog string, args ...string) *exec.Cmd {
	cmd := exec.Command(prog, args...)
	cmd.Env = c.env
	return cmd
}

// logs returns the tail of the daemons' logs, for failure messages.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log", "munged.log"} {
		data, _ := os.ReadFile(filepath.Join(c.dir, "log", f))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, strings.Join(lines, "\n"))
	}
	return b.String()
}

// stop cancels every job and stops the daemons: SIGTERM, then SIGKILL
// after 10 s.
func (c *cluster) stop() {
	if p := c.progs["scancel"]; p != "" && c.env != nil {
		_ = c.client(p, "--full", "--user=root").Run()
	}
	var pids []int
	for _, f := range []string{"slurmd.pid", "slurmctld.pid", "munged.pid"} {
		data, err := os.ReadFile(filepath.Join(c.dir, f))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
			pids = append(pids, pid)
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// squeueState returns the state of one array task ("RUNNING", "PENDING",
// …), or "" when Slurm no longer lists it.
func (c *cluster) squeueState(task string) string {
	out, _ := c.client(c.progs["squeue"], "-h", "-j", task, "-o", "%T").Output()
	return strings.TrimSpace(string(out))
}

// TestSlurmArray runs the documented Slurm example (examples/batch/
// slurm-array.sh, unchanged, over models.yaml) as a 4-task job array on a
// real single-node Slurm cluster, requeues one task mid-run, merges the
// shards and compares them job for job with a one-process run; a second
// submission takes every result from the shared cache.
func TestSlurmArray(t *testing.T) {
	progs := testpaths.Slurm(t)
	progs["scancel"] = filepath.Join(filepath.Dir(progs["scontrol"]), "scancel")
	if testing.Short() {
		t.Skip("starts a Slurm cluster; not in -short")
	}
	// Short paths: munge's socket path must fit in 108 bytes.
	tmp, err := os.MkdirTemp("", "ocslurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	bin := buildOnnxconv(t, tmp)
	work := collection(t, tmp, "slurm-array.sh")
	ref := oneProcess(t, bin, work)

	c := startCluster(t, progs, filepath.Join(tmp, "slurm"))
	c.env = append(c.env, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	// The example writes its logs to results/logs/, which sbatch does not
	// create (docs/batch.md says so).
	if err := os.MkdirAll(filepath.Join(work, "results", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}

	// 1. sbatch --array=0-3 --wait, one task requeued mid-run.
	sub := c.submit(t, work)
	victim, before := c.requeueMidRun(t, work, sub.job)
	if err := sub.wait(); err != nil {
		t.Fatalf("sbatch --wait: %v\n%s\n%s", err, sub.stderr.String(), c.logs())
	}
	shards := shardDirs(t, work)
	after := records(t, filepath.Join(work, "results", "shard-"+victim))
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("record %s of the requeued task %s was written again after the requeue", name, victim)
		}
	}
	// The example appends a requeued task's second run to its log
	// (--open-mode=append): two summaries, the second resuming what the
	// first recorded (at least the records seen at the requeue; a job in
	// flight may have finished as the task stopped) and running only the
	// rest.
	log := readFile(t, filepath.Join(work, "results", "logs", sub.job+"_"+victim+".log"))
	// (The stopped run may print its partial summary as it is
	// interrupted; the last one is the resumed run's.)
	sums := summaryRE.FindAllStringSubmatch(log, -1)
	if len(sums) == 0 {
		t.Errorf("the requeued task's log has no summary:\n%s", log)
	}
	if strings.Count(log, "(from SLURM_ARRAY_TASK_ID)") != 2 {
		t.Errorf("the requeued task's log does not show two runs:\n%s", log)
	}
	if len(sums) > 0 {
		m := sums[len(sums)-1]
		planned, _ := strconv.Atoi(m[1])
		ran, _ := strconv.Atoi(m[2])
		cached, _ := strconv.Atoi(m[3])
		resumed, _ := strconv.Atoi(m[4])
		if resumed < len(before) || resumed >= planned || ran+cached+resumed != planned {
			t.Errorf("requeued task: %d run, %d cached, %d done before of %d; want the %d+ recorded before the requeue resumed and only the rest run",
				ran, cached, resumed, planned, len(before))
		}
	}
	sharded := mergeDirs(t, bin, shards...)
	compareOutcomes(t, "Slurm array", ref, sharded)
	if sharded.Duplicates != 0 {
		t.Errorf("%d jobs have more than one record: a job ran to completion twice", sharded.Duplicates)
	}
	runs := map[string]bool{}
	for _, r := range sharded.Jobs {
		runs[r.Run] = true
	}
	// Four tasks plus the requeued task's second run wrote the records.
	if len(runs) != 5 {
		t.Errorf("records come from %d processes, want 5 (four tasks, one of them twice)", len(runs))
	}
	t.Logf("Slurm: %d jobs in 4 array tasks (task %s requeued after %d jobs), merged outcomes equal to one process",
		len(sharded.Jobs), victim, len(before))

	// 2. A second submission of the same script over new shard folders:
	// every result comes from the cache the first one filled.
	if err := os.Rename(filepath.Join(work, "results"), filepath.Join(work, "first")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"results/logs", "results"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(work, "first", "cache"), filepath.Join(work, "results", "cache")); err != nil {
		t.Fatal(err)
	}
	sub2 := c.submit(t, work)
	if err := sub2.wait(); err != nil {
		t.Fatalf("second sbatch --wait: %v\n%s\n%s", err, sub2.stderr.String(), c.logs())
	}
	again := mergeDirs(t, bin, shardDirs(t, work)...)
	compareOutcomes(t, "second Slurm array", ref, again)
	for _, r := range again.Jobs {
		if !r.Cached {
			t.Errorf("%s: not taken from the cache on the second submission", r.ID)
		}
	}
}

// summaryRE matches the summary line of `onnxconv batch`: planned, run,
// cached and resumed counts.
var summaryRE = regexp.MustCompile(`shard \d+/\d+: (\d+) of \d+ job\(s\): .*; (\d+) run, (\d+) cached, (\d+) done before`)

// submission is a running `sbatch --parsable --wait`.
type submission struct {
	job    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

func (s *submission) wait() error {
	select {
	case err := <-s.done:
		return err
	case <-time.After(10 * time.Minute):
		_ = s.cmd.Process.Kill()
		return errors.New("sbatch did not return within 10 minutes")
	}
}

// submit runs `sbatch --parsable --wait --array=0-3 slurm-array.sh` in
// work and returns once Slurm has given the job its ID.
func (c *cluster) submit(t *testing.T, work string) *submission {
	t.Helper()
	cmd := c.client(c.progs["sbatch"], "--parsable", "--wait", "--array=0-3", "slurm-array.sh")
	cmd.Dir = work
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &submission{cmd: cmd, stderr: new(bytes.Buffer), done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			id, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), ";")
			ids <- id
		}
		close(ids)
		for sc.Scan() {
		}
		s.done <- cmd.Wait()
	}()
	select {
	case id, ok := <-ids:
		if !ok || id == "" {
			t.Fatalf("sbatch printed no job ID: %s\n%s", s.stderr.String(), c.logs())
		}
		s.job = id
	case <-time.After(60 * time.Second):
		t.Fatalf("sbatch gave no job ID within 60 s\n%s", c.logs())
	}
	return s
}

// requeueMidRun waits for an array task that has recorded some but not all
// of its jobs, suspends it (so that what it wrote is stable), requeues it
// with `scontrol requeue` and releases it. It returns the task's index and
// its records at the requeue.
func (c *cluster) requeueMidRun(t *testing.T, work, job string) (string, map[string][]byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		for i := range 4 {
			idx := strconv.Itoa(i)
			task := job + "_" + idx
			dir := filepath.Join(work, "results", "shard-"+idx)
			planned := plannedJobs(dir)
			if planned == 0 || c.squeueState(task) != "RUNNING" {
				continue
			}
			if n := len(records(t, dir)); n == 0 || n >= planned {
				continue
			}
			if out, err := c.client(c.progs["scontrol"], "suspend", task).CombinedOutput(); err != nil {
				t.Fatalf("scontrol suspend %s: %v %s", task, err, out)
			}
			// slurmd answers the suspend at once and stops the task's
			// processes afterwards (SIGTSTP, then SIGSTOP): a requeue
			// sent before the SIGSTOP lands is answered by the
			// processes (they start their graceful exit on SIGTERM) and
			// then the late SIGSTOP freezes them for good, the requeued
			// task never starts again and `sbatch --wait` never returns.
			waitStopped(t, work, "results/shard-"+idx)
			before := records(t, dir)
			if len(before) >= planned {
				// It finished its last job as it was suspended: not
				// mid-run after all; let it go and pick again.
				_ = c.client(c.progs["scontrol"], "resume", task).Run()
				continue
			}
			if out, err := c.client(c.progs["scontrol"], "requeue", task).CombinedOutput(); err != nil {
				t.Fatalf("scontrol requeue %s: %v %s", task, err, out)
			}
			// A suspended task comes back held; release it.
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				out, _ := c.client(c.progs["squeue"], "-h", "-j", task, "-o", "%T %r").Output()
				if strings.HasPrefix(string(out), "PENDING") {
					if strings.Contains(string(out), "Held") {
						_ = c.client(c.progs["scontrol"], "release", task).Run()
					}
					break
				}
			}
			t.Logf("requeued task %s with %d of %d jobs recorded", task, len(before), planned)
			return idx, before
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no array task was seen mid-run within 5 minutes\n%s", c.logs())
	return "", nil
}

// waitStopped waits (up to 30 s) until every process running in work
// whose command line holds arg is stopped, then 2 s more: slurmd stops
// a task with SIGTSTP and sends SIGSTOP after it, so a stopped process
// may still get a stop signal (Linux /proc; the Slurm tests run on Linux
// only).
func waitStopped(t *testing.T, work, arg string) {
	t.Helper()
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	for deadline := time.Now().Add(30 * time.Second); !allStopped(work, arg); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Logf("the processes of %s did not all stop within 30 s", arg)
			return
		}
	}
	time.Sleep(2 * time.Second)
}

// allStopped reports whether every process in work whose command line
// holds arg is in state T (stopped).
func allStopped(work, arg string) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		pid := e.Name()
		if _, err := strconv.Atoi(pid); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(arg)) {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd")); err != nil || cwd != work {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
		if err != nil {
			continue // exited
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "State:"); ok && !strings.HasPrefix(strings.TrimSpace(v), "T") {
				return false
			}
		}
	}
	return true
}

// plannedJobs is how many jobs a shard's plan lists (0 before it starts).
func plannedJobs(dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "plans", "*.json"))
	if len(files) != 1 {
		return 0
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return 0
	}
	var p struct{ Jobs []string }
	if err := jsonUnmarshal(data, &p); err != nil {
		return 0
	}
	return len(p.Jobs)
}

// freePorts returns n TCP ports free on loopback now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

// cleanEnv is this process's environment without any scheduler variable
// that would pick a shard on its own.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "JOB_COMPLETION") || k == "JOB_COMPLETIONS" ||
			strings.HasPrefix(k, "CI_NODE_") || k == "ONNXCONV_SHARD" || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+os.Getenv("PATH"))
}

// buildOnnxconv builds the onnxconv command into dir/bin.
func buildOnnxconv(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin", "onnxconv")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/onnxconv")
	cmd.Dir = testpaths.RepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/onnxconv: %v\n%s", err, out)
	}
	return bin
}

// collection lays out a model collection for the example manifest in
// dir/work: models.yaml and the scheduler file, copied byte for byte from
// examples/batch; the fixture models under models/ (one also under
// models/experimental/, which the manifest excludes from one job); and
// eight heavier convolution models with distinct weights, so that each
// array task runs for a few seconds and can be caught mid-run.
func collection(t *testing.T, dir string, script ...string) string {
	t.Helper()
	root := testpaths.RepoRoot(t)
	work := filepath.Join(dir, "work")
	for _, f := range append([]string{"models.yaml"}, script...) {
		copyFile(t, filepath.Join(root, "examples", "batch", f), filepath.Join(work, f))
	}
	fixtures, err := filepath.Glob(filepath.Join(root, "fixtures", "models", "*", "model.onnx"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixture models: %v", err)
	}
	for _, f := range fixtures {
		name := filepath.Base(filepath.Dir(f))
		copyFile(t, f, filepath.Join(work, "models", name, "model.onnx"))
	}
	copyFile(t, fixtures[0], filepath.Join(work, "models", "experimental", "copy", "model.onnx"))
	for k := range 8 {
		writeConvModel(t, filepath.Join(work, "models", "conv", fmt.Sprintf("c%d", k), "model.onnx"), uint64(k+1))
	}
	return work
}

// writeConvModel writes a float32 model of two 3x3 convolutions (32
// channels, 96x96) with a ReLU between, weights drawn from seed.
func writeConvModel(t *testing.T, path string, seed uint64) {
	t.Helper()
	const ch, hw = 32, 96
	r := mrand.New(mrand.NewPCG(seed, 7))
	weight := func(name string) *onnxpb.TensorProto {
		n := ch * ch * 3 * 3
		raw := make([]byte, 4*n)
		scale := 1 / math.Sqrt(float64(ch*9))
		for i := range n {
			v := float32((r.Float64()*2 - 1) * scale)
			bits := math.Float32bits(v)
			raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
		return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
			Dims: []int64{ch, ch, 3, 3}, RawData: raw}
	}
	vi := func(name string) *onnxpb.ValueInfoProto {
		dims := []*onnxpb.TensorShapeProto_Dimension{}
		for _, d := range []int64{1, ch, hw, hw} {
			dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
				Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
	}
	pads := &onnxpb.AttributeProto{Name: proto.String("pads"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{1, 1, 1, 1}}
	m := &onnxpb.ModelProto{
		IrVersion:    proto.Int64(8),
		OpsetImport:  []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}},
		ProducerName: proto.String("examples/batch cluster_test"),
		Graph: &onnxpb.GraphProto{
			Name: proto.String("conv"),
			Node: []*onnxpb.NodeProto{
				{Name: proto.String("conv1"), OpType: proto.String("Conv"), Input: []string{"x", "w1"}, Output: []string{"h"}, Attribute: []*onnxpb.AttributeProto{pads}},
				{Name: proto.String("relu"), OpType: proto.String("Relu"), Input: []string{"h"}, Output: []string{"r"}},
				{Name: proto.String("conv2"), OpType: proto.String("Conv"), Input: []string{"r", "w2"}, Output: []string{"y"}, Attribute: []*onnxpb.AttributeProto{pads}},
			},
			Initializer: []*onnxpb.TensorProto{weight("w1"), weight("w2")},
			Input:       []*onnxpb.ValueInfoProto{vi("x")},
			Output:      []*onnxpb.ValueInfoProto{vi("y")},
		},
	}
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// oneProcess runs the manifest in one process (no shard) and returns its
// merged result, the reference the sharded runs are compared with.
func oneProcess(t *testing.T, bin, work string) *merged {
	t.Helper()
	out := filepath.Join(filepath.Dir(work), "one")
	cmd := exec.CommandContext(context.Background(), bin, "batch", "models.yaml", "--out", out, "--jobs", "2", "-q")
	cmd.Dir = work
	cmd.Env = cleanEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("one-process batch: %v\n%s", err, b)
	}
	return mergeDirs(t, bin, out)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
