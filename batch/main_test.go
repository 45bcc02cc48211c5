package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// The sharded test starts this test binary again as a shard: with
// childManifestEnv set, TestMain runs one shard (taken from the
// scheduler variables, as onnxconv batch does) and prints its Summary as
// JSON instead of running the tests. With childHangEnv=N the child stops
// (blocks forever) once N jobs have a record, so that the test can kill
// it mid-way.
const (
	childManifestEnv = "BATCH_TEST_CHILD_MANIFEST"
	childOutEnv      = "BATCH_TEST_CHILD_OUT"
	childJobsEnv     = "BATCH_TEST_CHILD_JOBS"
	childHangEnv     = "BATCH_TEST_CHILD_HANG_AFTER"
)

// TestMain runs a shard in a child process, or the tests; those that need
// headless Chromium are reported by testpaths.Main.
func TestMain(m *testing.M) {
	if os.Getenv(childManifestEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(testpaths.Main(m, "batch"))
}

func childMain() int {
	man, err := LoadManifest(os.Getenv(childManifestEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	man.AllowOutside = true // the collection's models are outside testdata
	shard, _, err := ShardFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	jobs, _ := strconv.Atoi(os.Getenv(childJobsEnv))
	hang, _ := strconv.Atoi(os.Getenv(childHangEnv))
	opts := Options{Out: os.Getenv(childOutEnv), Shard: shard, Jobs: jobs}
	if hang > 0 {
		fresh := 0
		opts.Progress = func(e Event) {
			if !e.Resumed {
				fresh++
			}
			if fresh >= hang {
				fmt.Fprintln(os.Stderr, "hanging")
				select {} // killed by the test
			}
		}
	}
	sum, err := Run(context.Background(), man, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(sum); err != nil {
		return 2
	}
	return 0
}
