package proctrace

import (
	"path/filepath"
	"sort"
)

// fileTracer counts the opens and reads of watched files per process, from
// the system-call stops of the traced tasks (syscallStop, per arch).
type fileTracer struct {
	names map[string]bool
	// fds are the open descriptors of watched files, per process.
	fds  map[int]map[uint64]bool
	use  map[int]*FileUse
	tgid map[int]int // per task
}

func newFileTracer(files []string) *fileTracer {
	f := &fileTracer{names: map[string]bool{}, fds: map[int]map[uint64]bool{}, use: map[int]*FileUse{}, tgid: map[int]int{}}
	for _, n := range files {
		f.names[filepath.Base(n)] = true
	}
	return f
}

// process returns the process of task tid (cached).
func (f *fileTracer) process(tid int) int {
	p, ok := f.tgid[tid]
	if !ok {
		p = tgid(tid)
		f.tgid[tid] = p
	}
	return p
}

func (f *fileTracer) entry(pid int) *FileUse {
	u := f.use[pid]
	if u == nil {
		u = &FileUse{PID: pid}
		f.use[pid] = u
	}
	return u
}

// opened records a successful open of path as fd by task tid.
func (f *fileTracer) opened(tid int, path string, fd uint64) {
	if !f.names[filepath.Base(path)] {
		return
	}
	p := f.process(tid)
	if f.fds[p] == nil {
		f.fds[p] = map[uint64]bool{}
	}
	f.fds[p][fd] = true
	f.entry(p).Opens++
}

// read records n bytes read from fd by task tid.
func (f *fileTracer) read(tid int, fd uint64, n int64) {
	p := f.process(tid)
	if f.fds[p][fd] && n > 0 {
		f.entry(p).Read += n
	}
}

func (f *fileTracer) mapped(tid int, fd uint64) {
	p := f.process(tid)
	if f.fds[p][fd] {
		f.entry(p).Mapped = true
	}
}

func (f *fileTracer) closed(tid int, fd uint64) {
	delete(f.fds[f.process(tid)], fd)
}

// exec forgets what process pid had open (descriptors of watched files are
// close-on-exec in Go programs) and its tasks' process ids.
func (f *fileTracer) exec(pid int) {
	delete(f.fds, pid)
	for t, p := range f.tgid {
		if p == pid || t == pid {
			delete(f.tgid, t)
		}
	}
}

// result lists the processes that opened a watched file, root first.
func (f *fileTracer) result(root int) []FileUse {
	var out []FileUse
	for _, u := range f.use {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].PID == root) != (out[j].PID == root) {
			return out[i].PID == root
		}
		return out[i].PID < out[j].PID
	})
	return out
}
