package canonical

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// benchBytes is the size of the benchmark model's tensor data
// (ONNXCONV_BENCH_BYTES, default 64 MB).
func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("ONNXCONV_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("ONNXCONV_BENCH_BYTES=%q is not a positive integer", s)
		}
		return n
	}
	return 64 << 20
}

// benchModel builds a model of a chain of Add nodes over 16 float
// initializers holding size bytes in all.
func benchModel(b *testing.B, size int64) *Model {
	b.Helper()
	const parts = 16
	m := &Model{IRVersion: 9, Graph: NewGraph("bench")}
	m.SetOpset("", 18)
	per := size / parts / 4
	x, err := m.Graph.AddInput("x", TensorType(Float, []int64{per}))
	if err != nil {
		b.Fatal(err)
	}
	cur := x
	for i := 0; i < parts; i++ {
		raw := make([]byte, per*4)
		for j := range raw {
			raw[j] = byte(i + j)
		}
		w, err := m.Graph.AddInitializer(NewTensor("w"+strconv.Itoa(i), Float, []int64{per}, raw))
		if err != nil {
			b.Fatal(err)
		}
		n, err := m.Graph.AddNode("add"+strconv.Itoa(i), "", "Add", []*Value{cur, w}, []string{"y" + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		cur = n.Outputs[0]
	}
	cur.Type = TensorType(Float, []int64{per})
	m.Graph.Outputs = append(m.Graph.Outputs, cur)
	return m
}

func BenchmarkLoadSave(b *testing.B) {
	size := benchBytes(b)
	dir := b.TempDir()
	m := benchModel(b, size)
	inline := filepath.Join(dir, "inline.onnx")
	if err := Save(inline, m, SaveOptions{}); err != nil {
		b.Fatal(err)
	}
	external := filepath.Join(dir, "external.onnx")
	if err := Save(external, m, SaveOptions{ExternalData: true}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, in string
		opts     SaveOptions
	}{
		{"inline", inline, SaveOptions{}},
		{"external", external, SaveOptions{ExternalData: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			out := filepath.Join(dir, "out-"+c.name+".onnx")
			b.SetBytes(size)
			cpu0 := cpuTime()
			for b.Loop() {
				m, err := Load(c.in, LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := Save(out, m, c.opts); err != nil {
					b.Fatal(err)
				}
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
			}
			// MB/s per CPU second: what the work costs, whatever the load
			// of the machine and the speed of the disk.
			if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu, "cpuMB/s")
			}
		})
	}
}

// cpuTime returns the user+system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
