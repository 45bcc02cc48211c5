// Package kernels holds the executor's hot numeric kernels: a packed,
// cache-blocked SGEMM with SIMD micro-kernels, convolution through it
// (im2col, or the input itself for 1×1 convolutions), a direct
// depthwise convolution, MaxPool, Relu and a bias-style Add. All work on
// float32 slices in NCHW / row-major layout but two: PointwiseNHWC and
// DepthwiseNHWC (pointwise.go, dwnhwc.go) take NHWC activations, for the
// layout in which a thread keeps its pixels through a mobile net's block
// (docs/threads.md, "What is left"; executor/nhwc.go).
// Benchmarks report GFLOP/s.
//
// The SGEMM micro-kernels are Go assembly generated with avo
// (asmgen/, a module of its own; `go generate ./executor/kernels`):
// AVX-512 (12×32 tiles, and 12×16 for a last panel of at most 16
// columns) and AVX2+FMA (6×16 tiles), each also reading B's rows through
// a table of offsets (a convolution's implicit im2col rows, in place),
// with a pure-Go kernel (4×16) for other CPUs and architectures. The kernel is chosen once, in
// init, from the CPU's features (golang.org/x/sys/cpu) and never changes
// afterwards; ONNXCONV_SGEMM_KERNEL=generic|avx2|avx512 (read in init too)
// forces a slower one, for tests and measurements (the integer GEMM of
// igemm.go too: AVX-512BW 12×32, AVX2 6×16, Go 6×16 tiles).
//
// Results do not depend on the number of threads: every element of C is
// one chain of fused multiply-adds in k order within a k-block, the
// k-blocks are added in order, and threads only split rows or columns.
package kernels

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// microKernel computes an mr×nr tile of C from packed panels: kc steps of
// mr values of A and nr values of B. add != 0 adds the product to C.
type microKernel struct {
	name   string
	mr, nr int
	fn     tileFunc
	// edge[r] (0 < r < mr) computes the first r rows of fn's tile, each
	// element exactly as fn does (nil: fn computes whole tiles only).
	edge []tileFunc
	// offs (nil: none) computes fn's tile reading B's row p at
	// b + offs[p] instead of ldb apart, each element exactly as fn does
	// on a panel packed from those rows; offsEdge[r] is edge[r]'s. The
	// convolutions read their implicit im2col rows in place with it.
	offs     offsFunc
	offsEdge []offsFunc
	// half (nil: none) holds the same kernels for the first nr/2
	// columns of a tile (B's panels still nr wide): a last panel of at
	// most nr/2 columns computes half the multiply-adds.
	half *halfKernels
	// col (nil: none; mr 12 only) computes single columns of B against
	// 1, 2 or 4 packed A panels, each element exactly as fn does before
	// its store (raw sums): the last columns of a panel just wider than
	// nr/2 (a 7×7 output's 49 = 32 + 16 + 1) run as a half tile and
	// columns instead of a whole tile.
	col *colKernels
}

// colKernels compute one column of B (kc values ldb apart) times 1, 2 or
// 4 packed A panels of 12 rows, storing the raw sums at out[p·12+i].
type colKernels struct {
	x1, x2, x4 colFunc
}

// colFunc is one of colKernels' functions.
type colFunc func(kc int, a, b *float32, ldb int, out *float32)

// maxColTail is the most columns past a half tile that serial runs as
// column kernels (more: a whole tile).
const maxColTail = 3

// halfKernels are a microKernel's kernels computing the first nr/2
// columns of its tiles, each element exactly as the full tile's.
type halfKernels struct {
	fn       tileFunc
	edge     []tileFunc
	offs     offsFunc
	offsEdge []offsFunc
}

// offsFunc is a tileFunc reading row p of B (nr values) at b + offs[p]
// (offsets in elements) for p < kc.
type offsFunc func(kc int, a *float32, offs *int, b *float32, c *float32, ldc int, add int, bias *float32, relu int)

// tileFunc computes an mr×nr tile of C at c (row stride ldc) from the
// packed A panel a (kc steps of mr values) and kc rows of nr values of B
// at b, ldb apart (nr for a packed panel): each element is the chain of
// FMAs acc, then acc + C when add != 0, else acc + bias[i] for row i when
// bias is not nil, then max(·, 0) when relu != 0 (NaN and −0 kept, as
// relu), stored into C.
type tileFunc func(kc int, a, b *float32, ldb int, c *float32, ldc int, add int, bias *float32, relu int)

var genericKernel = microKernel{name: "generic", mr: 4, nr: 16, fn: kernelGeneric}

// available lists the kernels this CPU can run, slowest first; filled in
// init (the amd64 file appends the SIMD ones) and read-only afterwards.
var available = []microKernel{genericKernel}

// best is the kernel Sgemm uses; chosen in init and read-only afterwards.
var best microKernel

// axpy sets y[i] += a·x[i] (len(y) == len(x)); the SIMD version is set
// during package initialization when the CPU has AVX2 and FMA, and never
// changes afterwards.
var axpy = axpyGeneric

// packRows16 and packRows32 (nil: Go's copy) copy kc rows of 16 or 32
// floats, ldb floats apart from src, one after the other to dst: packB's
// full panels for the AVX2 and AVX-512 kernels.
var packRows16, packRows32 func(kc int, src *float32, ldb int, dst *float32)

// copyStridedAsm (nil: Go's copy per row) sets dst[r·dp+j] = src[r·sp+j]
// for r < h, j < w (w ≥ 1): copyStrided's rows in one call.
var copyStridedAsm func(h, w int, src *float32, sp int, dst *float32, dp int)

// copyStrided copies h rows of w floats, sp floats apart in src, to rows
// dp floats apart in dst (a convolution's grid rows into its output
// planes): one SIMD call when there is one, else one copy per row.
func copyStrided(h, w int, src []float32, sp int, dst []float32, dp int) {
	if h <= 0 || w <= 0 {
		return
	}
	_ = src[(h-1)*sp+w-1]
	_ = dst[(h-1)*dp+w-1]
	if copyStridedAsm != nil && sp >= 0 && dp >= 0 {
		copyStridedAsm(h, w, &src[0], sp, &dst[0], dp)
		return
	}
	for r := 0; r < h; r++ {
		copy(dst[r*dp:r*dp+w], src[r*sp:r*sp+w])
	}
}

// CopyRows copies h rows of w floats, sp floats apart in src, to rows dp
// floats apart in dst (some channels of each pixel of an NHWC tensor):
// one SIMD call where there is one.
func CopyRows(h, w int, src []float32, sp int, dst []float32, dp int) error {
	if h < 0 || w < 0 || sp < w || dp < w {
		return shapeErr("copy rows: %d rows of %d floats, %d and %d apart", h, w, sp, dp)
	}
	if h > 0 && w > 0 && (len(src) < (h-1)*sp+w || len(dst) < (h-1)*dp+w) {
		return shapeErr("copy rows: %d and %d floats for %d rows of %d floats, %d and %d apart", len(src), len(dst), h, w, sp, dp)
	}
	copyStrided(h, w, src, sp, dst, dp)
	return nil
}

func axpyGeneric(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// KernelEnv names the environment variable that forces a micro-kernel.
const KernelEnv = "ONNXCONV_SGEMM_KERNEL"

func init() {
	best = available[len(available)-1]
	bestI = availableI[len(availableI)-1]
	if want := os.Getenv(KernelEnv); want != "" {
		for _, k := range available {
			if k.name == want {
				best = k
			}
		}
		for _, k := range availableI {
			if k.name == want {
				bestI = k
			}
		}
		if want == "generic" {
			axpy = axpyGeneric
			vmax = maxGeneric
			relu = reluGeneric
			expSub = expSubGeneric
			gelu = geluGeneric
			hardSwish = hardSwishGeneric
			sigmoidVec32 = sigmoidExpGeneric
			siluVec = siluExpGeneric
			clipVec = clipGeneric
			packRows16, packRows32 = nil, nil
			addVecMatBlocks = addVecMatNone
			copyStridedAsm = nil
			max3Asm, dup2Asm = nil, nil
			lerpRowsAsm, lerp2xAsm = nil, nil
			// The depthwise kernels of both layouts in Go (no fused
			// multiply-adds), so that NCHW and NHWC keep the same bits
			// (TestDepthwiseNHWCBitsOfNCHW).
			dwNHWCAsm, dwRows, dwPix8 = nil, dwRowsGo, nil
			gapSum8 = nil
			transpose8x8 = nil
			mulRowsAsm, addRowsAsm = nil, nil
			gapNHWCAsm = [4]func(pix int, x *float32, ldx int, s *float64){}
		}
	}
}

// KernelName names the SGEMM micro-kernel in use ("avx512", "avx2" or
// "generic").
func KernelName() string { return best.name }

// Context carries the thread count and reusable scratch memory of the
// kernels. It is safe for concurrent use; the zero value and nil run on
// one thread.
type Context struct {
	threads  int
	pool     sync.Pool
	teamOnce sync.Once
	team     *team
	prof     *ParallelProfile // nil: not profiled (SetProfile)
	calls    atomic.Uint64    // parallel calls handed to the helpers
	// layouts caches the depthwise kernels' index tables (dwLayout)
	// by geometry, at most maxDwLayouts of them (nLayouts).
	layouts  sync.Map
	nLayouts atomic.Int64
}

// NewContext returns a Context running kernels on up to threads
// goroutines (threads < 1: runtime.NumCPU()): the caller's and
// threads−1 persistent helpers (workers.go), started on first use and
// stopped by Close or when the Context becomes unreachable.
func NewContext(threads int) *Context {
	if threads < 1 {
		threads = runtime.NumCPU()
	}
	return &Context{threads: threads}
}

// Threads is the number of goroutines a kernel call may use.
func (x *Context) Threads() int {
	if x == nil || x.threads < 1 {
		return 1
	}
	return x.threads
}

// scratch is per-goroutine packing memory.
type scratch struct {
	a, b, tile []float32
	biasTile   []float32 // a whole tile's bias for a tile of fewer rows
	cols       []float32
	// shared: an operand packed once for all chunks of a parallel SGEMM.
	shared []float32
	kpart  []float32 // gemmSplitK's sums of the second half of k
	phase  []float32 // phase planes of convFlat
	rowOff []int     // B row starts of convFlat
	pix    []int     // convFlatT's rows as grid columns
	rows   *rowsConv // convRows' geometry (its lists reused)
	// rowsOff: convRows' B row offsets, made for rowsOffKey (when
	// rowsOffSet).
	rowsOff    []int
	rowsOffKey rowOffKey
	rowsOffSet bool
	taps       []int     // DepthwiseNHWC's tap table, ConvNHWC's k table
	slab       []float32 // ConvNHWC's padded input rows
	sums       []float64 // GlobalAveragePoolNHWC's sums of pixel chunks
	scaled     []float32 // PointwiseNHWCScaled's scaled rows
}

func (x *Context) get() *scratch {
	if x != nil {
		if s, ok := x.pool.Get().(*scratch); ok {
			return s
		}
	}
	return &scratch{}
}

func (x *Context) put(s *scratch) {
	if x != nil {
		x.pool.Put(s)
	}
}

// fill sets every element of s to v, by doubling copies (the runtime's
// vectorized memmove) rather than one store at a time.
func fill(s []float32, v float32) {
	if len(s) == 0 {
		return
	}
	if math.Float32bits(v) == 0 { // +0 only: −0 is written as itself
		clear(s)
		return
	}
	s[0] = v
	for n := 1; n < len(s); n *= 2 {
		copy(s[n:], s[:n])
	}
}

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// kernelGeneric is the pure-Go micro-kernel (4×16).
func kernelGeneric(kc int, a, b *float32, ldb int, c *float32, ldc int, add int, bias *float32, relu int) {
	const mr, nr = 4, 16
	pa := unsafe.Slice(a, kc*mr)
	pb := unsafe.Slice(b, max(kc-1, 0)*ldb+nr)
	var acc [mr][nr]float32
	for p := 0; p < kc; p++ {
		bp := (*[nr]float32)(pb[p*ldb : p*ldb+nr])
		ap := (*[mr]float32)(pa[p*mr : p*mr+mr])
		for i := 0; i < mr; i++ {
			ai := ap[i]
			r := &acc[i]
			for j := 0; j < nr; j++ {
				r[j] += ai * bp[j]
			}
		}
	}
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	var bs []float32
	if bias != nil {
		bs = unsafe.Slice(bias, mr)
	}
	for i := 0; i < mr; i++ {
		row := cs[i*ldc : i*ldc+nr]
		r := &acc[i]
		switch {
		case add != 0:
			for j := range r {
				r[j] += row[j]
			}
		case bs != nil:
			for j := range r {
				r[j] += bs[i]
			}
		}
		actGeneric(r[:], relu)
		copy(row, r[:])
	}
}

// actGeneric applies a micro-kernel's relu argument to s in place: 0
// nothing, 1 ReLU, 2 ReLU6 (Clip(0, 6)), with the kernels' NaN and −0
// handling (reluGeneric, clipGeneric).
func actGeneric(s []float32, relu int) {
	switch relu {
	case 1:
		reluGeneric(s, s)
	case 2:
		clipGeneric(s, s, 0, 6)
	}
}

// ShapeError reports arguments that do not fit together.
type ShapeError struct{ Msg string }

func (e *ShapeError) Error() string { return "kernels: " + e.Msg }

func shapeErr(format string, args ...any) error {
	return &ShapeError{Msg: fmt.Sprintf(format, args...)}
}

// elemWork is the work estimate (see minWork) of one element of a
// memory-bound elementwise kernel.
const elemWork = 32

// Range runs f over [0, n) — n rows of unit elements each — split into
// contiguous ranges run on the Context's threads when there are enough
// elements to be worth it (see chunks), else as f(0, n) on the caller.
// For kernels whose rows are independent: the results do not depend on
// the split.
func (x *Context) Range(n, unit int, f func(lo, hi int)) {
	x.rangeWork(n, unit*elemWork, f)
}

// rangeWork is Range for rows of the given work estimate each.
func (x *Context) rangeWork(n, work int, f func(lo, hi int)) {
	c, _ := x.chunksMin(n*work, n, minRangeWork)
	if c <= 1 {
		f(0, n)
		return
	}
	parts := split(n, c, 1)
	x.parallel(len(parts)-1, func(i int) { f(parts[i], parts[i+1]) })
}
