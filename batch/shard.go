package batch

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Shard is one part of a run: Index of Count, counted from 0.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String is "I/N" as --shard takes it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardError is a shard that cannot be used: a bad --shard value or
// scheduler variables that do not fit together.
type ShardError struct {
	// Source is where the value came from ("--shard", "JOB_COMPLETION_INDEX").
	Source string
	Value  string
	Reason string
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("shard from %s=%q: %s", e.Source, e.Value, e.Reason)
}

// ParseShard reads "I/N" (0 <= I < N).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, &ShardError{Source: "--shard", Value: s, Reason: "want I/N, e.g. 0/4 (I counts from 0)"}
	}
	return shardOf("--shard", s, is, ns, 0)
}

func shardOf(source, value, is, ns string, base int) (Shard, error) {
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil {
		return Shard{}, &ShardError{Source: source, Value: value, Reason: "the index and count must be integers"}
	}
	i -= base
	if n < 1 || i < 0 || i >= n {
		return Shard{}, &ShardError{Source: source, Value: value, Reason: fmt.Sprintf("index %d is outside 0..%d (count %d)", i, n-1, n)}
	}
	return Shard{Index: i, Count: n}, nil
}

// Scheduler environment variables ShardFromEnv reads, in this order.
const (
	// EnvShard is onnxconv's own: "I/N".
	EnvShard = "ONNXCONV_SHARD"
	// Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX (0-based); the
	// count is not in the environment, so the Job passes it as
	// JOB_COMPLETIONS (the same number as spec.completions).
	EnvK8sIndex = "JOB_COMPLETION_INDEX"
	EnvK8sCount = "JOB_COMPLETIONS"
	// GitLab parallel jobs: CI_NODE_INDEX counts from 1.
	EnvGitLabIndex = "CI_NODE_INDEX"
	EnvGitLabTotal = "CI_NODE_TOTAL"
	// Slurm job arrays: the task ID counts from SLURM_ARRAY_TASK_MIN
	// (0 when unset, as with --array=0-3).
	EnvSlurmID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmMin   = "SLURM_ARRAY_TASK_MIN"
)

// ShardFromEnv picks the shard from the schedulers' variables:
// ONNXCONV_SHARD ("I/N"), JOB_COMPLETION_INDEX with JOB_COMPLETIONS,
// CI_NODE_INDEX/CI_NODE_TOTAL, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT.
// With none set it returns the whole run, 0/1. source names the variable used ("" for
// none). An index without its count is a *ShardError.
func ShardFromEnv(getenv func(string) string) (s Shard, source string, err error) {
	if v := getenv(EnvShard); v != "" {
		is, ns, ok := strings.Cut(v, "/")
		if !ok {
			return Shard{}, EnvShard, &ShardError{Source: EnvShard, Value: v, Reason: "want I/N"}
		}
		s, err := shardOf(EnvShard, v, is, ns, 0)
		return s, EnvShard, err
	}
	pairs := []struct{ index, count, why string }{
		{EnvK8sIndex, EnvK8sCount, "set " + EnvK8sCount + " in the Job's env to spec.completions"},
		{EnvGitLabIndex, EnvGitLabTotal, "GitLab sets both with 'parallel: N'"},
		{EnvSlurmID, EnvSlurmCount, "Slurm sets both for job arrays"},
	}
	for _, p := range pairs {
		iv := getenv(p.index)
		if iv == "" {
			continue
		}
		nv := getenv(p.count)
		if nv == "" {
			return Shard{}, p.index, &ShardError{Source: p.index, Value: iv, Reason: p.count + " is not set: " + p.why + ", or pass --shard I/N"}
		}
		base := 0
		switch p.index {
		case EnvGitLabIndex:
			base = 1
		case EnvSlurmID:
			if mv := getenv(EnvSlurmMin); mv != "" {
				if base, err = strconv.Atoi(mv); err != nil {
					return Shard{}, EnvSlurmMin, &ShardError{Source: EnvSlurmMin, Value: mv, Reason: "not an integer"}
				}
			}
		}
		s, err := shardOf(p.index, iv+"/"+nv, iv, nv, base)
		return s, p.index, err
	}
	return Shard{Index: 0, Count: 1}, "", nil
}

// ResolveShard is the shard of a run: flag ("I/N") when given, else
// ShardFromEnv. source says where it came from ("--shard", a variable,
// or "" for the whole run).
func ResolveShard(flag string, getenv func(string) string) (Shard, string, error) {
	if flag != "" {
		s, err := ParseShard(flag)
		return s, "--shard", err
	}
	return ShardFromEnv(getenv)
}

// Assign spreads jobs over n shards and returns each job's shard, by
// index into jobs. It depends only on the jobs' IDs and sizes, so every
// shard of a run computes the same assignment: the jobs, heaviest first
// (weight: model size plus a fixed per-job cost; ties in the order of a
// SHA-256 of the ID), each go to the shard with the least weight so far
// (ties to the lowest index). The heaviest shard thus exceeds the
// lightest by at most one job's weight.
func Assign(jobs []Job, n int) []int {
	out := make([]int, len(jobs))
	if n <= 1 {
		return out
	}
	order := make([]int, len(jobs))
	hashes := make([]uint64, len(jobs))
	for i := range jobs {
		order[i] = i
		h := sha256.Sum256([]byte(jobs[i].ID))
		hashes[i] = binary.BigEndian.Uint64(h[:8])
	}
	sort.Slice(order, func(a, b int) bool {
		wa, wb := Weight(jobs[order[a]]), Weight(jobs[order[b]])
		if wa != wb {
			return wa > wb
		}
		if hashes[order[a]] != hashes[order[b]] {
			return hashes[order[a]] < hashes[order[b]]
		}
		return jobs[order[a]].ID < jobs[order[b]].ID
	})
	load := make([]int64, n)
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		out[i] = best
		load[best] += Weight(jobs[i])
	}
	return out
}

// JobCost is the weight every job carries besides its model's size (the
// fixed cost of loading, running and reporting a small model).
const JobCost = 64 << 10

// Weight is a job's balance weight: its model's size plus JobCost.
func Weight(j Job) int64 { return j.Size + JobCost }

// Select returns the jobs of shard s (in the order of jobs).
func Select(jobs []Job, s Shard) []Job {
	a := Assign(jobs, s.Count)
	var out []Job
	for i, j := range jobs {
		if a[i] == s.Index {
			out = append(out, j)
		}
	}
	return out
}
