package serve_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/pgtest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/serve"
)

// startReplica runs `onnxconv serve` on the PostgreSQL store at url and
// the shared data folder data, with a 2 s lease so that a dead replica's
// job is taken again within seconds.
func startReplica(t testing.TB, data, url string, args ...string) *server {
	t.Helper()
	return startServer(t, data, append([]string{"--store", url, "--lease", "2s", "--queue", "1000"}, args...)...)
}

func fixtureModel(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures/models", name, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// submitRoundRobin posts n jobs, the i-th to replica i mod len(reps), 8
// at a time, and returns their IDs.
func submitRoundRobin(t testing.TB, reps []*server, n int, model []byte, spec string) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				id, code, msg := reps[i%len(reps)].submit(t, "model.onnx", model, spec)
				if code != http.StatusAccepted {
					t.Errorf("job %d to replica %d: %d %s", i, i%len(reps), code, msg)
				}
				ids[i] = id
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return ids
}

// listAll is GET /v1/jobs, every page.
func (s *server) listAll(t testing.TB) []*serve.Job {
	t.Helper()
	var all []*serve.Job
	after := ""
	for {
		resp, err := s.request("GET", "/v1/jobs?limit=500&after="+after, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Jobs []*serve.Job
			Next string
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /v1/jobs: %d %v", resp.StatusCode, err)
		}
		all = append(all, page.Jobs...)
		if page.Next == "" {
			return all
		}
		after = page.Next
	}
}

// waitAllFinal polls s's job list until every job is in an end state.
func waitAllFinal(t testing.TB, s *server, n int, limit time.Duration) []*serve.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		all := s.listAll(t)
		final := 0
		for _, j := range all {
			if j.State.Final() {
				final++
			}
		}
		if len(all) == n && final == n {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs listed, %d final after %v", len(all), n, final, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// metric sums the values of s's /metrics lines of name whose labels
// contain every one of labels.
func (s *server) metric(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	resp, err := s.request("GET", "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, " ")
		if !ok || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(series, l)
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && match {
			sum += v
		}
	}
	return sum
}

// TestReplicasRunEachJobOnce: two `onnxconv serve` processes on one
// PostgreSQL and one data folder; 200 jobs submitted round-robin are each
// run exactly once (one attempt each, and the runs the two replicas
// count in their metrics add up to 200, each replica's to the jobs that
// name it), both replicas take a share, and either one lists all 200.
func TestReplicasRunEachJobOnce(t *testing.T) {
	url := pgtest.Start(t)
	data := filepath.Join(t.TempDir(), "data")
	reps := []*server{startReplica(t, data, url), startReplica(t, data, url)}
	const n = 200
	ids := submitRoundRobin(t, reps, n, fixtureModel(t, "mlp_opset17"), `{"check": true}`)
	jobs := waitAllFinal(t, reps[1], n, 50*time.Second)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	byReplica := map[string]int{}
	for _, j := range jobs {
		if !want[j.ID] {
			t.Errorf("job %s was not submitted", j.ID)
		}
		if j.State != serve.StateDone || j.Verdict != "pass" || j.Attempts != 1 || j.Done != 1 || j.Total != 1 {
			t.Errorf("job %s: %s %s, attempts %d, %d/%d records; want done pass, 1 attempt, 1/1", j.ID, j.State, j.Verdict, j.Attempts, j.Done, j.Total)
		}
		byReplica[j.Replica]++
	}
	if len(byReplica) != 2 {
		t.Errorf("jobs by replica: %v, want both replicas", byReplica)
	}
	ran := 0.0
	counts := []float64{}
	for _, r := range reps {
		c := r.metric(t, "onnxconv_jobs_ended_total", `state="done"`)
		counts = append(counts, c)
		ran += c
	}
	if ran != n {
		t.Errorf("runs ended by the replicas: %v, %v in all; want %d", counts, ran, n)
	}
	got := []int{}
	for _, c := range byReplica {
		got = append(got, c)
	}
	sort.Ints(got)
	sort.Float64s(counts)
	if len(got) == 2 && (float64(got[0]) != counts[0] || float64(got[1]) != counts[1]) {
		t.Errorf("jobs naming each replica %v, runs each counted %v: they differ", got, counts)
	}
	t.Logf("200 jobs: %v by replica", byReplica)
}

// slowSpec is a job of several seconds: resnet_small to ten opsets.
const slowSpec = `{"opset": [8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}`

// waitRunning polls job id on s until it runs with at least done
// actions recorded.
func waitRunning(t testing.TB, s *server, id string, done int) *serve.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := s.job(t, id)
		if j.State == serve.StateRunning && j.Done >= done {
			return j
		}
		if j.State.Final() || time.Now().After(deadline) {
			t.Fatalf("job %s is %s with %d/%d, never seen running with %d done", id, j.State, j.Done, j.Total, done)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicaKilledMidJob: replica A runs a ten-action job; A is killed
// (SIGKILL) once the job has a record; replica B takes the job once A's
// lease runs out and finishes it (attempt 2, all ten records, pass).
func TestReplicaKilledMidJob(t *testing.T) {
	url := pgtest.Start(t)
	data := filepath.Join(t.TempDir(), "data")
	a := startReplica(t, data, url, "--workers", "1")
	id, code, msg := a.submit(t, "model.onnx", fixtureModel(t, "resnet_small"), slowSpec)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	running := waitRunning(t, a, id, 1)
	b := startReplica(t, data, url, "--workers", "1")
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killedAt := time.Now()
	j := b.wait(t, id, 2*time.Minute)
	t.Logf("killed with %d/%d done; B finished it %.1f s later", running.Done, running.Total, time.Since(killedAt).Seconds())
	if j.State != serve.StateDone || j.Verdict != "pass" || j.Attempts != 2 || len(j.Records) != 10 {
		t.Errorf("job after the kill: %s %s, attempts %d, %d records; want done pass, 2 attempts, 10 records", j.State, j.Verdict, j.Attempts, len(j.Records))
	}
	if j.Replica == running.Replica || j.Replica == "" {
		t.Errorf("finished by replica %q, the killed one was %q", j.Replica, running.Replica)
	}
	if got := b.metric(t, "onnxconv_jobs_ended_total", `state="done"`); got != 1 {
		t.Errorf("B ended %v jobs, want 1", got)
	}
}

// TestReplicasShareQuotasOwnershipCancelAndSweep: with tokens, on two
// replicas: alice's job quota counts her jobs on both; bob gets 404 for
// her job from either; a cancel posted to B stops her job running on A
// (A's running gauge drops to 0 within seconds, not when the ten actions
// end); B's retention sweep deletes the job A ran, record and folder.
func TestReplicasShareQuotasOwnershipCancelAndSweep(t *testing.T) {
	url := pgtest.Start(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	var lines []string
	tokens := map[string]string{}
	for _, who := range []string{"alice", "bob"} {
		tok, line, err := serve.NewToken(who)
		if err != nil {
			t.Fatal(err)
		}
		tokens[who] = tok
		lines = append(lines, line)
	}
	tf := filepath.Join(tmp, "tokens")
	if err := os.WriteFile(tf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--workers", "1", "--tokens", tf, "--quota-jobs", "2"}
	a := startReplica(t, data, url, args...)
	a.token = tokens["alice"]
	slow := fixtureModel(t, "resnet_small")
	first, code, msg := a.submit(t, "model.onnx", slow, slowSpec)
	if code != http.StatusAccepted {
		t.Fatalf("alice's first job: %d %s", code, msg)
	}
	onA := waitRunning(t, a, first, 0)
	b := startReplica(t, data, url, append(args, "--keep", "3s")...)
	b.token = tokens["alice"]
	if _, code, msg := b.submit(t, "model.onnx", slow, slowSpec); code != http.StatusAccepted {
		t.Fatalf("alice's second job, to B: %d %s", code, msg)
	}
	if _, code, msg := b.submit(t, "model.onnx", slow, slowSpec); code != http.StatusTooManyRequests {
		t.Errorf("alice's third job, to B, past --quota-jobs 2 with one on A: %d %s, want 429", code, msg)
	}
	bob := *b
	bob.token = tokens["bob"]
	if resp, err := bob.request("GET", "/v1/jobs/"+first, nil, ""); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob reads alice's job on B: %v %v, want 404", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	if j := b.job(t, first); j.Replica != onA.Replica || j.State != serve.StateRunning {
		t.Fatalf("alice's first job seen from B: %s on %q, want running on A (%q)", j.State, j.Replica, onA.Replica)
	}
	resp, err := b.request("POST", "/v1/jobs/"+first+"/cancel", nil, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel on B: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	canceledAt := time.Now()
	for a.metric(t, "onnxconv_jobs_running") != 0 {
		if time.Since(canceledAt) > 5*time.Second {
			t.Fatalf("A still runs the job canceled on B 5 s later")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("A stopped the job canceled on B after %.2f s", time.Since(canceledAt).Seconds())
	if j := a.job(t, first); j.State != serve.StateCanceled || j.Done == 10 {
		t.Errorf("the canceled job: %s with %d/10 done, want canceled before its end", j.State, j.Done)
	}
	// B's sweep (--keep 3s) deletes it from the store and the shared folder.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := a.request("GET", "/v1/jobs/"+first, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, serr := os.Stat(filepath.Join(data, "jobs", first))
		if resp.StatusCode == http.StatusNotFound && os.IsNotExist(serr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the canceled job still there 20 s later (GET on A %d, folder: %v)", resp.StatusCode, serr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkReplicas: the same 200 jobs (mlp_opset17 to opset 13,
// verified, each with a seed of its own so that none is answered from the
// cache) through one replica and through two on one PostgreSQL and data
// folder, 2 workers each: jobs/s from the first submission to the last
// end, and p50/p99 of a job's time from submission to end (the server's
// own timestamps).
//
//	go test ./serve -run '^$' -bench BenchmarkReplicas -benchtime 1x
func BenchmarkReplicas(b *testing.B) {
	model := fixtureModel(b, "mlp_opset17")
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			for i := range b.N {
				url := pgtest.Start(b)
				data := filepath.Join(b.TempDir(), "data")
				var reps []*server
				for range n {
					reps = append(reps, startReplica(b, data, url, "--workers", "2"))
				}
				const jobs = 200
				var wg sync.WaitGroup
				for k := range jobs {
					wg.Go(func() {
						spec := fmt.Sprintf(`{"opset": [13], "seed": %d}`, i*jobs+k+1)
						if _, code, msg := reps[k%n].submit(b, "model.onnx", model, spec); code != http.StatusAccepted {
							b.Errorf("job %d: %d %s", k, code, msg)
						}
					})
				}
				wg.Wait()
				all := waitAllFinal(b, reps[0], jobs, 30*time.Minute)
				var first, last time.Time
				var lat []float64
				for _, j := range all {
					if j.State != serve.StateDone {
						b.Errorf("job %s: %s %s", j.ID, j.State, j.Error)
					}
					if first.IsZero() || j.Created.Before(first) {
						first = j.Created
					}
					if j.Finished.After(last) {
						last = j.Finished
					}
					lat = append(lat, j.Finished.Sub(j.Created).Seconds())
				}
				sort.Float64s(lat)
				b.ReportMetric(float64(len(lat))/last.Sub(first).Seconds(), "jobs/s")
				b.ReportMetric(lat[len(lat)/2], "p50-s")
				b.ReportMetric(lat[len(lat)*99/100], "p99-s")
				for _, r := range reps {
					r.kill()
				}
			}
		})
	}
}

// TestReplicaSIGTERMHandsJobsOver: replica A, stopped by SIGTERM (a
// rolling update) mid-job, exits 0 and queues the job again, so that
// replica B takes it at once — well within the 60 s lease it would wait
// out after a crash — and finishes it.
func TestReplicaSIGTERMHandsJobsOver(t *testing.T) {
	url := pgtest.Start(t)
	data := filepath.Join(t.TempDir(), "data")
	a := startReplica(t, data, url, "--workers", "1", "--lease", "60s")
	id, code, msg := a.submit(t, "model.onnx", fixtureModel(t, "resnet_small"), slowSpec)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	onA := waitRunning(t, a, id, 1)
	b := startReplica(t, data, url, "--workers", "1", "--lease", "60s")
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("A after SIGTERM: %v\n%s", err, a.log)
	}
	exited := time.Now()
	for {
		j := b.job(t, id)
		if j.Replica != onA.Replica && (j.State == serve.StateRunning || j.State.Final()) {
			t.Logf("B took the job %.1f s after A exited", time.Since(exited).Seconds())
			break
		}
		if time.Since(exited) > 20*time.Second {
			t.Fatalf("20 s after A exited the job is %s on %q (A was %q): not handed over", j.State, j.Replica, onA.Replica)
		}
		time.Sleep(100 * time.Millisecond)
	}
	j := b.wait(t, id, 2*time.Minute)
	if j.State != serve.StateDone || j.Verdict != "pass" || j.Attempts != 2 || len(j.Records) != 10 {
		t.Errorf("job after the handover: %s %s, attempts %d, %d records; want done pass, 2 attempts, 10 records", j.State, j.Verdict, j.Attempts, len(j.Records))
	}
}

// TestReplicasCountUploadsInProgress: two in-process replicas on one
// PostgreSQL and one data folder. An upload held in its unpacking on A
// holds its place in the queue and its token's job quota in the store:
// B refuses alice's second job (429, --quota-jobs 1) and, with the queue
// full of one queued and one received job, ops's (429); a held upload
// that fails (400) frees its place, and B then takes alice's job.
func TestReplicasCountUploadsInProgress(t *testing.T) {
	url := pgtest.Start(t)
	held := make(chan struct{}, 4)
	release := make(chan struct{}, 4)
	cfg := serve.Config{Store: url, QueueSize: 2, QuotaJobs: 1, Workers: 1}
	cfgA := cfg
	cfgA.UnpackHook = func(st serve.UnpackState) {
		if st.Holding {
			held <- struct{}{}
			<-release
		}
	}
	a := newTeam(t, cfgA)
	t.Cleanup(func() { close(release) }) // runs before the servers stop
	tokens, err := serve.LoadTokens(filepath.Join(filepath.Dir(a.data), "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	cfgB := cfg
	cfgB.Data, cfgB.Tokens = a.data, tokens
	srvB, err := serve.New(cfgB)
	if err != nil {
		t.Fatal(err)
	}
	b := &team{srv: srvB, http: httptest.NewServer(srvB.Handler()), tokens: a.tokens, data: a.data}
	t.Cleanup(func() {
		b.http.Close()
		_ = srvB.Shutdown(context.Background())
	})
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.json"), xgbModel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	good := zipFolder(t, dir)
	var bad bytes.Buffer
	zw := zip.NewWriter(&bad)
	if w, err := zw.Create("../evil.json"); err == nil {
		_, _ = w.Write([]byte("{}"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	onA := func(who string, archive []byte) chan int {
		done := make(chan int, 1)
		go func() {
			_, code, _ := a.submit(t, who, "m.zip", archive, "")
			done <- code
		}()
		select {
		case <-held:
		case <-time.After(time.Minute):
			t.Fatal("A's upload never reached its unpacking")
		}
		return done
	}
	model := xgbModel(t)
	// Alice's upload in progress on A counts against her quota on B.
	done := onA("alice", bad.Bytes())
	if _, code, msg := b.submit(t, "alice", "m.json", model, ""); code != http.StatusTooManyRequests || !strings.Contains(msg, "quota") {
		t.Errorf("alice on B while her upload is received on A: %d %s, want 429 (quota)", code, msg)
	}
	release <- struct{}{}
	if code := <-done; code != http.StatusBadRequest {
		t.Errorf("A's bad archive: %d, want 400", code)
	}
	// Its place is free again.
	if _, code, msg := b.submit(t, "alice", "m.json", model, ""); code != http.StatusAccepted {
		t.Fatalf("alice on B once her upload on A failed: %d %s", code, msg)
	}
	// Bob's upload in progress on A fills the queue with alice's.
	done = onA("bob", good)
	if _, code, msg := b.submit(t, "ops", "m.json", model, ""); code != http.StatusTooManyRequests || !strings.Contains(msg, "queue is full") {
		t.Errorf("ops on B with one job queued and one received on A: %d %s, want 429 (queue full)", code, msg)
	}
	release <- struct{}{}
	if code := <-done; code != http.StatusAccepted {
		t.Errorf("bob's upload on A: %d, want 202", code)
	}
}
