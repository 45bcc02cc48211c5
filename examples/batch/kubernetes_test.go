package batch_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// k8sJob is the part of a Kubernetes Job the example sets and this test
// runs.
type k8sJob struct {
	Spec struct {
		Completions int `yaml:"completions"`
		Template    struct {
			Spec struct {
				Containers []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestKubernetesIndexedJob runs the documented Kubernetes Indexed Job
// (examples/batch/kubernetes-indexed-job.yaml) as Kubernetes would, since
// no Kubernetes runs here: each pod's command from the YAML, unchanged but
// for the volume mount paths, with the environment Kubernetes sets
// (JOB_COMPLETION_INDEX) and the YAML's own env; one pod is killed
// mid-run and retried with the same index (backoffLimitPerIndex); then the
// merge Job's command runs, and the result is compared job for job with a
// one-process run; a second run takes every result from the cache.
func TestKubernetesIndexedJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example collection; not in -short")
	}
	tmp, err := os.MkdirTemp("", "ock8s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	bin := buildOnnxconv(t, tmp)
	data := collection(t, tmp) // the /data volume: models.yaml and models/
	results := filepath.Join(tmp, "results")
	ref := oneProcess(t, bin, data)

	docs := yamlDocs(t, filepath.Join(testpaths.RepoRoot(t), "examples", "batch", "kubernetes-indexed-job.yaml"))
	if len(docs) != 2 {
		t.Fatalf("the example has %d Jobs, want the shard Job and the merge Job", len(docs))
	}
	shardJob, mergeJob := docs[0], docs[1]
	mounts := map[string]string{"data": data, "results": results}
	pod := func(job k8sJob, index int) *exec.Cmd {
		c := job.Spec.Template.Spec.Containers[0]
		args := c.Args[0]
		for _, m := range c.VolumeMounts {
			args = strings.ReplaceAll(args, m.MountPath, mounts[m.Name])
		}
		cmd := exec.Command(c.Command[0], append(c.Command[1:], args)...)
		cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		for _, e := range c.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		if index >= 0 {
			cmd.Env = append(cmd.Env, "JOB_COMPLETION_INDEX="+strconv.Itoa(index))
		}
		cmd.Dir = tmp
		// A pod is a process group: killing it kills all it started.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	n := shardJob.Spec.Completions
	if n < 2 {
		t.Fatalf("the example's Job has %d completions", n)
	}
	runPods := func(killOne bool) (victim int, before map[string][]byte) {
		victim = -1
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		for i := range n {
			cmds[i], outs[i] = pod(shardJob, i), new(bytes.Buffer)
			cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		if killOne {
			victim, before = killMidRun(t, cmds, results)
			// The pod is retried with the same index; it resumes.
			retry := pod(shardJob, victim)
			if out, err := retry.CombinedOutput(); err != nil {
				t.Fatalf("retried pod %d: %v\n%s", victim, err, out)
			} else if m := summaryRE.FindStringSubmatch(string(out)); m == nil {
				t.Errorf("retried pod %d printed no summary:\n%s", victim, out)
			} else if resumed, _ := strconv.Atoi(m[4]); resumed < len(before) {
				t.Errorf("retried pod %d resumed %d jobs, %d were recorded before it was killed:\n%s", victim, resumed, len(before), out)
			}
		}
		for i, c := range cmds {
			if i == victim {
				continue
			}
			if err := c.Wait(); err != nil {
				t.Fatalf("pod %d: %v\n%s", i, err, outs[i])
			}
		}
		return victim, before
	}
	victim, before := runPods(true)
	after := records(t, filepath.Join(results, fmt.Sprintf("shard-%d", victim)))
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("record %s of the killed pod was written again by its retry", name)
		}
	}
	// The merge Job's command, as the YAML gives it.
	if out, err := pod(mergeJob, -1).CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 { // 1: a job failed, as in the one-process run
			t.Fatalf("merge Job: %v\n%s", err, out)
		}
	}
	for _, f := range []string{"report.html", "junit.xml", "report.json"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Errorf("the merge Job wrote no %s: %v", f, err)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(results, "shard-*"))
	if len(dirs) != n {
		t.Fatalf("%d shard folders, want %d", len(dirs), n)
	}
	sharded := mergeDirs(t, bin, dirs...)
	compareOutcomes(t, "Indexed Job", ref, sharded)
	if sharded.Duplicates != 0 {
		t.Errorf("%d jobs have more than one record", sharded.Duplicates)
	}
	t.Logf("Kubernetes: %d jobs in %d pods (pod %d killed after %d jobs and retried), merged outcomes equal to one process",
		len(sharded.Jobs), n, victim, len(before))

	// A second run of the Job over fresh shard folders, same cache.
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	runPods(false)
	again := mergeDirs(t, bin, dirs...)
	compareOutcomes(t, "second Indexed Job", ref, again)
	for _, r := range again.Jobs {
		if !r.Cached {
			t.Errorf("%s: not taken from the cache on the second run", r.ID)
		}
	}
}

// killMidRun waits for a pod whose shard has recorded some but not all of
// its jobs, stops it (SIGSTOP, so that its records are stable), then kills
// it; it returns the pod's index and its records at that moment.
func killMidRun(t *testing.T, cmds []*exec.Cmd, results string) (int, map[string][]byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		for i, c := range cmds {
			dir := filepath.Join(results, fmt.Sprintf("shard-%d", i))
			planned := plannedJobs(dir)
			if planned == 0 {
				continue
			}
			if n := len(records(t, dir)); n == 0 || n >= planned {
				continue
			}
			pg := -c.Process.Pid // the pod's process group
			if err := syscall.Kill(pg, syscall.SIGSTOP); err != nil {
				continue
			}
			before := records(t, dir)
			if len(before) >= planned {
				_ = syscall.Kill(pg, syscall.SIGCONT)
				continue
			}
			_ = syscall.Kill(pg, syscall.SIGKILL)
			_ = c.Wait()
			return i, before
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no pod was seen mid-run within 5 minutes")
	return 0, nil
}

// yamlDocs decodes every document of a multi-document YAML file.
func yamlDocs(t *testing.T, path string) []k8sJob {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var docs []k8sJob
	for {
		var j k8sJob
		if err := dec.Decode(&j); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, j)
	}
	return docs
}
