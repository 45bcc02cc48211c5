package executor

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/onnxconv/onnxconv/canonical"
)

// varyInputs returns ins with every float32 input scaled and shifted by
// amounts that depend on run (run 0: ins unchanged).
func varyInputs(t *testing.T, ins []*canonical.Tensor, run int) []*canonical.Tensor {
	t.Helper()
	if run == 0 {
		return ins
	}
	out := make([]*canonical.Tensor, len(ins))
	for i, x := range ins {
		if x.DataType != canonical.Float {
			out[i] = x
			continue
		}
		v := floats(t, x)
		raw := make([]byte, 4*len(v))
		for j, f := range v {
			g := f*(1+0.25*float32(run)) + 0.01*float32((j*7+run)%13-6)
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(g))
		}
		out[i] = canonical.NewTensor(x.Name, x.DataType, x.Dims, raw)
	}
	return out
}

func outBytes(t *testing.T, outs []*canonical.Tensor) [][]byte {
	t.Helper()
	res := make([][]byte, len(outs))
	for i, o := range outs {
		b, err := o.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		res[i] = bytes.Clone(b)
	}
	return res
}

// TestReuseAcrossRuns: one executor runs each fixture's plan several
// times with different inputs (its host steps reuse the output buffers
// of earlier runs, reuse.go). Every run's outputs are bit-identical to
// those of a fresh executor's first run on the same inputs, the first
// run's match the framework's stored outputs, the outputs a run returned
// are not changed by later runs, and two runs of one executor at once
// give the same outputs too.
func TestReuseAcrossRuns(t *testing.T) {
	root := filepath.Join("..", "fixtures", "models")
	names := []string{"attention_causal", "detector_head", "lstm", "mlp_opset17", "mlp_opset9", "mobilenet_small", "mobilenet_v3_se", "regnet_small", "resnet_small", "shufflenet_small", "squeezenet", "transformer_block_opset21", "transformer_encoder", "unet"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			m, ins := loadModelDir(t, dir)
			want := floats(t, readTensorFile(t, filepath.Join(dir, "test_data_set_0", "output_0.pb")))
			const runs = 4
			vary := make([][]*canonical.Tensor, runs)
			for r := range runs {
				vary[r] = varyInputs(t, ins, r)
			}
			fresh := make([][][]byte, runs)
			for r := range runs {
				ex, err := New(m, Options{Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				outs, err := ex.Run(context.Background(), vary[r])
				if err != nil {
					t.Fatal(err)
				}
				fresh[r] = outBytes(t, outs)
				ex.Close()
			}
			ex, err := New(m, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			ex.poisonReuse = true
			var held [][]*canonical.Tensor // outputs as returned, run by run
			for pass := range 2 {          // the first pass builds the plan
				for r := range runs {
					outs, err := ex.Run(context.Background(), vary[r])
					if err != nil {
						t.Fatal(err)
					}
					if r == 0 {
						got := floats(t, outs[0])
						if len(got) != len(want) {
							t.Fatalf("%d outputs, want %d", len(got), len(want))
						}
						for i := range want {
							if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
								t.Fatalf("output[%d] = %g, the framework computed %g", i, got[i], want[i])
							}
						}
					}
					if pass == 1 {
						held = append(held, outs)
					}
					for i, b := range outBytes(t, outs) {
						if !bytes.Equal(b, fresh[r][i]) {
							t.Fatalf("pass %d, run %d: output %d differs from a fresh executor's", pass, r, i)
						}
					}
				}
			}
			for k, outs := range held {
				for i, b := range outBytes(t, outs) {
					if !bytes.Equal(b, fresh[k%runs][i]) {
						t.Fatalf("output %d returned by run %d changed in later runs", i, k)
					}
				}
			}
			var wg sync.WaitGroup
			errs := make([]string, runs)
			for r := range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 3 {
						outs, err := ex.Run(context.Background(), vary[r])
						if err != nil {
							errs[r] = err.Error()
							return
						}
						for i, o := range outs {
							b, err := o.Bytes()
							if err != nil || !bytes.Equal(b, fresh[r][i]) {
								errs[r] = "concurrent run: output " + strconv.Itoa(i) + " differs from a fresh executor's"
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			for _, e := range errs {
				if e != "" {
					t.Fatal(e)
				}
			}
		})
	}
}

// TestRecycleKeepsEscaped: recycle keeps out of the free list every
// buffer whose memory a tensor still in the env overlaps (the buffer
// itself, a view of part of it, a sequence element), and frees the rest.
func TestRecycleKeepsEscaped(t *testing.T) {
	rb := &runBufs{}
	a, b, c, d, e := rb.take(8), rb.take(8), rb.take(16), rb.take(4), rb.take(8)
	en := newEnv(nil)
	en.bufs = rb
	v := func(name string) *canonical.Value { return &canonical.Value{Name: name} }
	en.set(v("a"), &slot{h: &htensor{dt: canonical.Float, shape: []int{8}, data: a}})
	en.set(v("b"), &slot{h: &htensor{dt: canonical.Float, shape: []int{2}, data: b[5:7]}})
	en.set(v("d"), &slot{kind: kindSeq, seq: []*htensor{{dt: canonical.Float, shape: []int{1}, data: d[3:]}}})
	other := make([]float32, 3)
	en.set(v("o"), &slot{h: &htensor{dt: canonical.Float, shape: []int{3}, data: other}})
	rb.recycle(en)
	if len(rb.got) != 0 {
		t.Fatalf("%d buffers still marked as handed out", len(rb.got))
	}
	same := func(x, y []float32) bool { return unsafe.SliceData(x) == unsafe.SliceData(y) }
	if f := rb.free[8]; len(f) != 1 || !same(f[0], e) {
		t.Fatalf("free buffers of 8: %d, want only the one no tensor uses", len(f))
	}
	if f := rb.free[16]; len(f) != 1 || !same(f[0], c) {
		t.Fatalf("free buffers of 16: %d, want 1", len(f))
	}
	if f := rb.free[4]; len(f) != 0 {
		t.Fatal("a buffer a sequence element views was freed")
	}
	e[0] = 5
	if x := rb.take(8); !same(x, e) || x[0] != 0 {
		t.Fatalf("take(8) did not return the freed buffer, cleared")
	}
}

// TestReusePoolUsed: replaying resnet_small's plan takes its host steps'
// outputs from the previous run's buffers (so TestReuseAcrossRuns checks
// reuse, not fresh allocations).
func TestReusePoolUsed(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "models", "resnet_small")
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := readTensorFile(t, filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	ex, err := New(m, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for range 3 {
		if _, err := ex.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
			t.Fatal(err)
		}
	}
	freed := 0
	for _, p := range ex.plans {
		for _, rb := range p.bufs.sets {
			for _, l := range rb.free {
				freed += len(l)
			}
		}
	}
	if freed < 10 {
		t.Fatalf("%d buffers kept for reuse, want the plan's intermediate outputs", freed)
	}
}

// TestReleaseDeadKeepsLive: in the middle of a run, releaseDead frees the
// buffers no tensor of the env overlaps and keeps the others handed out
// (not forgotten, as recycle does at the end of the run): once their
// values are dropped too, they are freed.
func TestReleaseDeadKeepsLive(t *testing.T) {
	rb := &runBufs{}
	a, b, c := rb.take(8), rb.take(8), rb.take(16)
	en := newEnv(nil)
	en.bufs = rb
	va, vb := &canonical.Value{Name: "a"}, &canonical.Value{Name: "b"}
	en.set(va, &slot{h: &htensor{dt: canonical.Float, shape: []int{8}, data: a}})
	en.set(vb, &slot{h: &htensor{dt: canonical.Float, shape: []int{2}, data: b[3:5]}})
	rb.releaseDead(en)
	same := func(x, y []float32) bool { return unsafe.SliceData(x) == unsafe.SliceData(y) }
	if len(rb.got) != 2 || len(rb.free[8]) != 0 || len(rb.free[16]) != 1 || !same(rb.free[16][0], c) {
		t.Fatalf("after releaseDead: %d handed out, free %d of 8 and %d of 16; want a and b handed out, c free", len(rb.got), len(rb.free[8]), len(rb.free[16]))
	}
	en.del(vb)
	rb.releaseDead(en)
	if len(rb.got) != 1 || !same(rb.got[0], a) || len(rb.free[8]) != 1 || !same(rb.free[8][0], b) {
		t.Fatalf("after dropping b: %d handed out, %d free of 8", len(rb.got), len(rb.free[8]))
	}
	rb.recycle(en) // a escapes the run
	if len(rb.got) != 0 || len(rb.free[8]) != 1 {
		t.Fatalf("after recycle: %d handed out, %d free of 8", len(rb.got), len(rb.free[8]))
	}
}

// TestReuseInRun: replaying squeezenet's plan reuses the buffers of
// dropped values within the run (its early tensors are above
// releaseMinBytes), so it keeps fewer buffers than without (and the
// outputs are the same bits either way).
func TestReuseInRun(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "models", "squeezenet")
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := readTensorFile(t, filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	var kept [2]int
	var outs [2][][]byte
	for k, inRun := range []bool{false, true} {
		ex, err := New(m, Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		ex.reuseInRun = inRun
		ex.poisonReuse = true
		for range 3 {
			res, err := ex.Run(context.Background(), []*canonical.Tensor{in})
			if err != nil {
				t.Fatal(err)
			}
			outs[k] = outBytes(t, res)
		}
		for _, p := range ex.plans {
			for _, rb := range p.bufs.sets {
				for _, l := range rb.free {
					kept[k] += len(l)
				}
			}
		}
		ex.Close()
	}
	if kept[1] >= kept[0] || kept[1] == 0 {
		t.Errorf("buffers kept: %d reusing within runs, %d without; want fewer", kept[1], kept[0])
	}
	for i := range outs[0] {
		if !bytes.Equal(outs[0][i], outs[1][i]) {
			t.Fatalf("output %d differs with reuse within runs", i)
		}
	}
}
