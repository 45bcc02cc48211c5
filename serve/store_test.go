package serve

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/pgtest"
)

// TestStoresHandEachJobOnce: on the bbolt file and on a real PostgreSQL,
// 8 claimers taking 100 queued jobs at once get each exactly once; a
// canceled job is lost to its holder at the next renewal; on PostgreSQL a
// job whose lease ran out goes to another replica (attempt 2), and its
// first holder learns it lost it.
func TestStoresHandEachJobOnce(t *testing.T) {
	stores := map[string]func(t *testing.T) jobStore{
		"bbolt": func(t *testing.T) jobStore {
			s, err := openBolt(filepath.Join(t.TempDir(), "jobs.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"postgres": func(t *testing.T) jobStore {
			s, err := openPG(pgtest.Start(t))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			defer st.close()
			const n = 100
			t0 := time.Now().UTC()
			for i := range n {
				j := &Job{ID: fmt.Sprintf("job%03d", i), State: StateQueued, Created: t0.Add(time.Duration(i) * time.Millisecond), Token: "t", Stored: 10}
				if err := st.put(j); err != nil {
					t.Fatal(err)
				}
			}
			if q, a, b, err := st.usage("t"); err != nil || q != n || a != n || b != 10*n {
				t.Fatalf("usage = %d queued, %d active, %d bytes, %v; want %d, %d, %d", q, a, b, err, n, n, 10*n)
			}
			var mu sync.Mutex
			got := map[string][]string{}
			var wg sync.WaitGroup
			for c := range 8 {
				wg.Go(func() {
					replica := fmt.Sprintf("r%d", c)
					for {
						j, err := st.claim(replica, time.Minute)
						if errors.Is(err, errNoJob) {
							return
						}
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						got[j.ID] = append(got[j.ID], replica)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(got) != n {
				t.Errorf("%d jobs claimed, want %d", len(got), n)
			}
			for id, by := range got {
				if len(by) != 1 {
					t.Errorf("%s claimed %d times (%v)", id, len(by), by)
				}
				j, err := st.get(id)
				if err != nil || j.State != StateRunning || j.Attempts != 1 || j.Replica != by[0] {
					t.Errorf("%s after its claim: %+v %v", id, j, err)
				}
			}
			if q, a, _, _ := st.usage("t"); q != 0 || a != n {
				t.Errorf("after the claims: %d queued, %d active; want 0, %d", q, a, n)
			}
			// Canceled through the store (by any replica): its holder
			// loses it at the next renewal, and keeps the others.
			holder := got["job007"][0]
			var held []string
			for id, by := range got {
				if by[0] == holder {
					held = append(held, id)
				}
			}
			if _, err := st.update("job007", func(j *Job) error { j.State = StateCanceled; return nil }); err != nil {
				t.Fatal(err)
			}
			lost, err := st.renew(holder, held, time.Minute)
			if err != nil || !slices.Equal(lost, []string{"job007"}) {
				t.Errorf("renew after a cancel: lost %v, %v; want [job007]", lost, err)
			}
			if !st.shared() {
				return
			}
			// A lease that runs out: the job goes to the next claimer.
			j := &Job{ID: "late", State: StateQueued, Created: time.Now().UTC()}
			if err := st.put(j); err != nil {
				t.Fatal(err)
			}
			if j, err = st.claim("dead", 200*time.Millisecond); err != nil || j.ID != "late" {
				t.Fatalf("claim: %v %v", j, err)
			}
			if j, err := st.claim("alive", time.Minute); !errors.Is(err, errNoJob) {
				t.Fatalf("claim while the lease runs: %v %v, want none", j, err)
			}
			time.Sleep(300 * time.Millisecond)
			j, err = st.claim("alive", time.Minute)
			if err != nil || j.ID != "late" || j.Attempts != 2 || j.Replica != "alive" {
				t.Fatalf("claim after the lease: %+v %v, want late, attempt 2, alive", j, err)
			}
			if lost, err := st.renew("dead", []string{"late"}, time.Minute); err != nil || !slices.Equal(lost, []string{"late"}) {
				t.Errorf("the dead replica's renewal: lost %v, %v; want [late]", lost, err)
			}
		})
	}
}

// TestStoreRefusals: a --store that is not a postgres:// URL, a server
// that does not answer and a --lease too short to renew are errors that
// say what to give, not hangs; the password of a malformed URL is not
// repeated.
func TestStoreRefusals(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
		not  string
	}{
		{Config{Store: "mysql://db/jobs"}, "give a postgres:// URL", ""},
		{Config{Store: "postgres://u:s3cret@127.0.0.1:99999/x"}, "not a valid postgres:// URL", "s3cret"},
		{Config{Store: "postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=5"}, "PostgreSQL at 127.0.0.1", "s3cret"},
		{Config{Lease: 10 * time.Millisecond}, "--lease 10ms: give at least 1s", ""},
	} {
		c.cfg.Data = t.TempDir()
		s, err := New(c.cfg)
		if err == nil {
			_ = s.Shutdown(t.Context())
			t.Errorf("%+v: no error", c.cfg)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || (c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("store %q lease %v: %v; want %q", c.cfg.Store, c.cfg.Lease, err, c.want)
		}
	}
}
