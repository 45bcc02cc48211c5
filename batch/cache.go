package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/fsys"
)

// cacheKey is the SHA-256 of the model's bytes, the job's spec, the
// contents of its reference and inputs folders and the tool's version
// (for a bench job also the kind of machine: its measurements hold only
// there); modelHash that of the model alone.
func cacheKey(j *Job, tool Tool) (key, modelHash string, err error) {
	modelHash, err = fsys.SHA256File(j.File)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", j.File, err)
	}
	h := sha256.New()
	spec, err := json.Marshal(j.Spec)
	if err != nil {
		return "", "", err
	}
	fmt.Fprintf(h, "onnxconv batch cache 1\ntool %s %s\nmodel %s\nspec %s\n", tool.Version, tool.Revision, modelHash, spec)
	if j.Action == ActionBench {
		fmt.Fprintf(h, "machine %s\n", benchMachine())
	}
	for _, d := range []string{j.Reference, j.Inputs, j.Calibration} {
		if d == "" {
			continue
		}
		dh, err := treeHash(d)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", d, err)
		}
		fmt.Fprintf(h, "folder %s\n", dh)
	}
	return hex.EncodeToString(h.Sum(nil)), modelHash, nil
}

// benchMachine describes what a benchmark's figures depend on besides
// the model and the settings: the system, the architecture, the CPUs and
// the executor's SGEMM kernel.
func benchMachine() string {
	return fmt.Sprintf("%s/%s cpus %d sgemm %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), kernels.KernelName())
}

// treeHash hashes the names and contents of the files under dir (or the
// file dir).
func treeHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		fh, err := fsys.SHA256File(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s %s\n", filepath.ToSlash(rel), fh)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Cache layout: CACHE/KEY[:2]/KEY/record.json and the job's report files
// beside it. The record is written last, so an entry without it is
// ignored (and overwritten).
func (r *runner) cacheEntry(key string) string {
	return filepath.Join(r.opts.Cache, key[:2], key)
}

// cachedOutput is the kept model's name in a cache entry.
const cachedOutput = "model.onnx"

// fromCache copies a cached result into the output folder, with the kept
// model when the job keeps outputs (an entry without one is a miss).
func (r *runner) fromCache(j *Job, key, modelHash string) (*Record, bool) {
	if r.opts.Cache == "" {
		return nil, false
	}
	entry := r.cacheEntry(key)
	old, err := ReadRecord(filepath.Join(entry, "record.json"))
	if err != nil || old.CacheKey != key {
		return nil, false
	}
	// A conversion that passed keeps a model: an entry a run without
	// keep_outputs made has none to give.
	converts := j.Action != ActionPlan && j.Action != ActionCheck && j.Action != ActionBench
	if j.KeepOutputs && converts && old.Status == StatusPass && old.Output == "" {
		return nil, false
	}
	output := ""
	if j.KeepOutputs && old.Output != "" {
		dir := filepath.Join(r.opts.Out, outputsDir, j.Key())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, false
		}
		if err := copyFile(filepath.Join(entry, cachedOutput), filepath.Join(dir, cachedOutput)); err != nil {
			return nil, false
		}
		output = filepath.ToSlash(filepath.Join(outputsDir, j.Key(), cachedOutput))
	}
	rec := *old
	fresh := r.newRecord(j, key, modelHash)
	rec.ID, rec.Model, rec.Shard, rec.Run, rec.Started, rec.Cached = fresh.ID, fresh.Model, fresh.Shard, fresh.Run, fresh.Started, true
	rec.Output = output
	rec.Reports = nil
	dst := filepath.Join(r.opts.Out, reportsDir, j.Key())
	for _, rep := range old.Reports {
		name := filepath.Base(rep)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return nil, false
		}
		if err := copyFile(filepath.Join(entry, name), filepath.Join(dst, name)); err != nil {
			return nil, false
		}
		rec.Reports = append(rec.Reports, filepath.ToSlash(filepath.Join(reportsDir, j.Key(), name)))
	}
	return &rec, true
}

// toCache stores a fresh result. Results of jobs that could not run for a
// reason outside the model (usage, internal) are not cached.
func (r *runner) toCache(j *Job, rec *Record) error {
	if r.opts.Cache == "" || rec.CacheKey == "" || rec.Kind == "internal" || rec.Kind == "usage" {
		return nil
	}
	entry := r.cacheEntry(rec.CacheKey)
	if err := os.MkdirAll(entry, 0o755); err != nil {
		return &RunError{Op: "cache", Err: err}
	}
	for _, rep := range rec.Reports {
		src := filepath.Join(r.opts.Out, filepath.FromSlash(rep))
		if err := copyFile(src, filepath.Join(entry, filepath.Base(rep))); err != nil {
			return &RunError{Op: "cache", Err: err}
		}
	}
	if rec.Output != "" {
		if err := copyFile(filepath.Join(r.opts.Out, filepath.FromSlash(rec.Output)), filepath.Join(entry, cachedOutput)); err != nil {
			return &RunError{Op: "cache", Err: err}
		}
	}
	if err := writeRecord(filepath.Join(entry, "record.json"), rec); err != nil {
		return &RunError{Op: "cache", Err: err}
	}
	return nil
}

// copyFile puts a copy of src at dst atomically: a hard link when both
// are on one file system (reports are replaced by rename, never written
// in place, so the two names never see each other's changes), else a
// copy.
func copyFile(src, dst string) error {
	tmp := fmt.Sprintf("%s.link-%d", dst, os.Getpid())
	if err := os.Link(src, tmp); err == nil {
		if err := os.Rename(tmp, dst); err == nil {
			return nil
		}
		os.Remove(tmp)
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := canonical.WriteFileAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	}); err != nil {
		return errors.Join(fmt.Errorf("copying %s", src), err)
	}
	return nil
}
