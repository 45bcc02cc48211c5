//go:build linux && !amd64

package proctrace

// canTraceFiles: system-call stops are not decoded on this architecture.
const canTraceFiles = false

func (f *fileTracer) syscallStop(int) {}
