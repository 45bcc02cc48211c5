package executor

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/onnxconv/onnxconv/canonical"
)

// htensor is a host tensor. data holds a typed Go slice chosen by
// storageOf(dt): the low-precision float types (float16, bfloat16, the
// float8 and float4 types) are held as float32 values exactly representable
// in dt; int4/int2 as int8 and uint4/uint2 as uint8, one element each.
type htensor struct {
	dt    canonical.DataType
	shape []int
	data  any
	// released: a data-less (nil) stand-in for a float32 initializer that
	// only the kernels read, packed (Executor.packOnly); every other use
	// converts it first (Executor.restoreInitializer).
	released bool
	// borrowed: data is the caller's memory (a float32 run input, see
	// borrowCanonical): read, never written.
	borrowed bool
	// nhwc: a float32 tensor of logical shape [N, C, H, W] whose data is
	// stored channels last (N, H, W, C): the output of a Conv, a Slice or
	// a channel shuffle the plan keeps in NHWC (nhwc.go). Only those
	// steps' NHWC kernels read such data as it is; lctx.H and every
	// other way out of a step convert it to NCHW first.
	nhwc bool
	// ld: an NHWC tensor that is a window of a wider one's channels (a
	// Slice's view, sliceNHWC): pixel p's channels start at data[p·ld]
	// (0: dense, ld = C). Only the Slice's one reader, a 1×1 Conv or a
	// channel shuffle, reads it as it is (markSliceViews); every other
	// way converts it (denseNHWC).
	ld int
}

// storage kinds
type skind int

const (
	kInvalid skind = iota
	kF32
	kF64
	kI8
	kI16
	kI32
	kI64
	kU8
	kU16
	kU32
	kU64
	kBool
	kString
	kC64
	kC128
)

func storageOf(dt canonical.DataType) skind {
	switch dt {
	case canonical.Float, canonical.Float16, canonical.BFloat16, canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ,
		canonical.Float8E5M2, canonical.Float8E5M2FNUZ, canonical.Float8E8M0, canonical.Float4E2M1:
		return kF32
	case canonical.Double:
		return kF64
	case canonical.Int8, canonical.Int4, canonical.Int2:
		return kI8
	case canonical.Int16:
		return kI16
	case canonical.Int32:
		return kI32
	case canonical.Int64:
		return kI64
	case canonical.Uint8, canonical.Uint4, canonical.Uint2:
		return kU8
	case canonical.Uint16:
		return kU16
	case canonical.Uint32:
		return kU32
	case canonical.Uint64:
		return kU64
	case canonical.Bool:
		return kBool
	case canonical.String:
		return kString
	case canonical.Complex64:
		return kC64
	case canonical.Complex128:
		return kC128
	}
	return kInvalid
}

// gomlxDType is the GoMLX dtype a value of dt is computed in.
func gomlxDType(dt canonical.DataType) (dtypes.DType, bool) {
	switch storageOf(dt) {
	case kF32:
		return dtypes.Float32, true
	case kF64:
		return dtypes.Float64, true
	case kI8:
		return dtypes.Int8, true
	case kI16:
		return dtypes.Int16, true
	case kI32:
		return dtypes.Int32, true
	case kI64:
		return dtypes.Int64, true
	case kU8:
		return dtypes.Uint8, true
	case kU16:
		return dtypes.Uint16, true
	case kU32:
		return dtypes.Uint32, true
	case kU64:
		return dtypes.Uint64, true
	case kBool:
		return dtypes.Bool, true
	}
	return dtypes.InvalidDType, false
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func (h *htensor) size() int { return numel(h.shape) }

func newH(dt canonical.DataType, shape []int) *htensor {
	n := numel(shape)
	h := &htensor{dt: dt, shape: append([]int{}, shape...)}
	switch storageOf(dt) {
	case kF32:
		h.data = make([]float32, n)
	case kF64:
		h.data = make([]float64, n)
	case kI8:
		h.data = make([]int8, n)
	case kI16:
		h.data = make([]int16, n)
	case kI32:
		h.data = make([]int32, n)
	case kI64:
		h.data = make([]int64, n)
	case kU8:
		h.data = make([]uint8, n)
	case kU16:
		h.data = make([]uint16, n)
	case kU32:
		h.data = make([]uint32, n)
	case kU64:
		h.data = make([]uint64, n)
	case kBool:
		h.data = make([]bool, n)
	case kString:
		h.data = make([]string, n)
	case kC64:
		h.data = make([]complex64, n)
	case kC128:
		h.data = make([]complex128, n)
	}
	return h
}

// sliceBytes views a typed numeric slice as bytes (little-endian host).
func sliceBytes(data any) []byte {
	switch s := data.(type) {
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	case []float64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	case []int8:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
	case []int16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*2)
	case []int32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	case []int64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	case []uint8:
		return s
	case []uint16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*2)
	case []uint32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	case []uint64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	case []bool:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
	case []complex64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	case []complex128:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*16)
	}
	return nil
}

func dimsToInt(dims []int64) ([]int, error) {
	out := make([]int, len(dims))
	for i, d := range dims {
		if d < 0 || d > math.MaxInt32*8 {
			return nil, fmt.Errorf("dim %d out of range: %d", i, d)
		}
		out[i] = int(d)
	}
	return out, nil
}

func intsToDims(s []int) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = int64(d)
	}
	return out
}

// fromCanonical converts a canonical tensor into a host tensor.
func fromCanonical(t *canonical.Tensor) (*htensor, error) {
	shape, err := dimsToInt(t.Dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if _, err := canonical.NumElements(t.Dims); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if storageOf(t.DataType) == kInvalid {
		return nil, fmt.Errorf("tensor %q: unsupported data type %v", t.Name, t.DataType)
	}
	h := newH(t.DataType, shape)
	n := h.size()
	if t.DataType == canonical.String {
		ss, err := t.Strings()
		if err != nil {
			return nil, err
		}
		out := h.data.([]string)
		for i := range out {
			out[i] = string(ss[i])
		}
		return h, nil
	}
	raw, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	switch t.DataType {
	case canonical.Float16:
		out := h.data.([]float32)
		for i := 0; i < n; i++ {
			out[i] = canonical.Float16ToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case canonical.BFloat16:
		out := h.data.([]float32)
		for i := 0; i < n; i++ {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ, canonical.Float8E8M0:
		out := h.data.([]float32)
		tab := f8Table(t.DataType)
		for i := 0; i < n; i++ {
			out[i] = tab[raw[i]]
		}
	case canonical.Float4E2M1:
		out := h.data.([]float32)
		for i := 0; i < n; i++ {
			out[i] = f4Decode((raw[i/2] >> (4 * uint(i%2))) & 0xF)
		}
	case canonical.Int4, canonical.Uint4:
		for i := 0; i < n; i++ {
			v := (raw[i/2] >> (4 * uint(i%2))) & 0xF
			if t.DataType == canonical.Int4 {
				h.data.([]int8)[i] = int8(v<<4) >> 4
			} else {
				h.data.([]uint8)[i] = v
			}
		}
	case canonical.Int2, canonical.Uint2:
		for i := 0; i < n; i++ {
			v := (raw[i/4] >> (2 * uint(i%4))) & 0x3
			if t.DataType == canonical.Int2 {
				h.data.([]int8)[i] = int8(v<<6) >> 6
			} else {
				h.data.([]uint8)[i] = v
			}
		}
	default:
		copy(sliceBytes(h.data), raw)
	}
	return h, nil
}

// borrowCanonical is fromCanonical for a run input: a float32 tensor
// whose bytes are 4-byte aligned is read in place (borrowed) instead of
// copied into a new, zeroed buffer — on a mobile net that copy was 4 %
// of a run, and serial. The executor never writes a borrowed tensor: the
// kernels write new tensors, in place only over a fused chain's own
// intermediate (lctx.outLike refuses a borrowed one), the run's reused
// buffers are only those it handed out (reuse.go), and outputs are
// copied out (toCanonical).
func borrowCanonical(t *canonical.Tensor) (*htensor, error) {
	if t.DataType != canonical.Float {
		return fromCanonical(t)
	}
	shape, err := dimsToInt(t.Dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	n, err := canonical.NumElements(t.Dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	raw, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	if n == 0 || int64(len(raw)) != 4*n || uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%4 != 0 {
		return fromCanonical(t)
	}
	return &htensor{dt: canonical.Float, shape: shape, data: unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(raw))), n), borrowed: true}, nil
}

// releasedOf is the data-less stand-in of the float32 tensor t
// (htensor.released).
func releasedOf(t *canonical.Tensor) (*htensor, error) {
	shape, err := dimsToInt(t.Dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if _, err := canonical.NumElements(t.Dims); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if t.DataType != canonical.Float {
		return nil, fmt.Errorf("tensor %q: %v is not float32", t.Name, t.DataType)
	}
	return &htensor{dt: t.DataType, shape: shape, released: true}, nil
}

// viewF32 returns the float32 tensor t as a host tensor over t's own
// bytes when they are aligned for float32 on a little-endian host (the
// model's memory-mapped bytes: read only, never to be written or kept),
// else as a converted copy.
func viewF32(t *canonical.Tensor) (*htensor, error) {
	if h, ok := inPlaceF32(t); ok {
		return h, nil
	}
	return fromCanonical(t)
}

// inPlaceF32 returns the float32 tensor t as a host tensor over t's own
// bytes (the mapped model file, no copy), when they can be read in place.
func inPlaceF32(t *canonical.Tensor) (*htensor, bool) {
	if t.DataType != canonical.Float || !littleEndian() {
		return nil, false
	}
	shape, err := dimsToInt(t.Dims)
	if err != nil {
		return nil, false
	}
	raw, err := t.Bytes()
	n := numel(shape)
	if err != nil || n == 0 || len(raw) != 4*n || uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%4 != 0 {
		return nil, false
	}
	return &htensor{dt: t.DataType, shape: shape, data: unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(raw))), n)}, true
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// toCanonical converts h into a canonical tensor named name.
func (h *htensor) toCanonical(name string) (*canonical.Tensor, error) {
	dims := intsToDims(h.shape)
	n := h.size()
	switch h.dt {
	case canonical.String:
		ss := h.data.([]string)
		b := make([][]byte, len(ss))
		for i, s := range ss {
			b[i] = []byte(s)
		}
		return canonical.NewStringTensor(name, dims, b), nil
	case canonical.Float16:
		out := make([]byte, 2*n)
		for i, v := range h.data.([]float32) {
			binary.LittleEndian.PutUint16(out[2*i:], canonical.Float32ToFloat16(v))
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	case canonical.BFloat16:
		out := make([]byte, 2*n)
		for i, v := range h.data.([]float32) {
			binary.LittleEndian.PutUint16(out[2*i:], canonical.Float32ToBFloat16(v))
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ, canonical.Float8E8M0:
		out := make([]byte, n)
		for i, v := range h.data.([]float32) {
			if h.dt == canonical.Float8E8M0 {
				out[i] = e8m0Encode(float64(v), true, "nearest")
			} else {
				out[i] = f8Encode(h.dt, v, false)
			}
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	case canonical.Float4E2M1:
		out := make([]byte, (n+1)/2)
		for i, v := range h.data.([]float32) {
			out[i/2] |= f4Encode(v, true) << (4 * uint(i%2))
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	case canonical.Int4, canonical.Uint4:
		out := make([]byte, (n+1)/2)
		for i := 0; i < n; i++ {
			var v byte
			if h.dt == canonical.Int4 {
				v = byte(h.data.([]int8)[i]) & 0xF
			} else {
				v = h.data.([]uint8)[i] & 0xF
			}
			out[i/2] |= v << (4 * uint(i%2))
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	case canonical.Int2, canonical.Uint2:
		out := make([]byte, (n+3)/4)
		for i := 0; i < n; i++ {
			var v byte
			if h.dt == canonical.Int2 {
				v = byte(h.data.([]int8)[i]) & 0x3
			} else {
				v = h.data.([]uint8)[i] & 0x3
			}
			out[i/4] |= v << (2 * uint(i%4))
		}
		return canonical.NewTensor(name, h.dt, dims, out), nil
	}
	b := sliceBytes(h.data)
	return canonical.NewTensor(name, h.dt, dims, append([]byte{}, b...)), nil
}

// roundTo rounds float32 storage to the precision of dt in place.
func (h *htensor) roundToType() {
	s, ok := h.data.([]float32)
	if !ok {
		return
	}
	switch h.dt {
	case canonical.Float16:
		for i, v := range s {
			s[i] = canonical.Float16ToFloat32(canonical.Float32ToFloat16(v))
		}
	case canonical.BFloat16:
		for i, v := range s {
			s[i] = math.Float32frombits(uint32(canonical.Float32ToBFloat16(v)) << 16)
		}
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ, canonical.Float8E8M0:
		tab := f8Table(h.dt)
		for i, v := range s {
			if h.dt == canonical.Float8E8M0 {
				s[i] = tab[e8m0Encode(float64(v), true, "nearest")]
			} else {
				s[i] = tab[f8Encode(h.dt, v, true)]
			}
		}
	case canonical.Float4E2M1:
		for i, v := range s {
			s[i] = f4Decode(f4Encode(v, true))
		}
	}
}

// toGomlx converts h into a GoMLX tensor of its compute dtype.
func (h *htensor) toGomlx() (*tensors.Tensor, error) {
	gdt, ok := gomlxDType(h.dt)
	if !ok {
		return nil, fmt.Errorf("data type %v cannot be computed with GoMLX", h.dt)
	}
	t := tensors.FromShape(shapes.Make(gdt, h.shape...))
	src := sliceBytes(h.data)
	if len(src) == 0 {
		return t, nil
	}
	if err := t.MutableBytes(func(data []byte) { copy(data, src) }); err != nil {
		return nil, fmt.Errorf("copying to GoMLX tensor: %w", err)
	}
	return t, nil
}

// fromGomlx copies a GoMLX tensor into a host tensor of logical type dt.
func fromGomlx(t *tensors.Tensor, dt canonical.DataType) (*htensor, error) {
	h := newH(dt, t.Shape().Dimensions)
	if gdt, _ := gomlxDType(dt); gdt != t.Shape().DType {
		return nil, fmt.Errorf("GoMLX result has dtype %s, expected %s for %v", t.Shape().DType, gdt, dt)
	}
	dst := sliceBytes(h.data)
	if len(dst) == 0 {
		return h, nil
	}
	if err := t.ConstBytes(func(data []byte) { copy(dst, data) }); err != nil {
		return nil, fmt.Errorf("reading GoMLX tensor: %w", err)
	}
	h.roundToType()
	return h, nil
}

// f64 returns the elements as float64.
func (h *htensor) f64() []float64 {
	out := make([]float64, h.size())
	switch s := h.data.(type) {
	case []float32:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []float64:
		copy(out, s)
	case []int8:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []int16:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []int32:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []int64:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []uint8:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []uint16:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []uint32:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []uint64:
		for i, v := range s {
			out[i] = float64(v)
		}
	case []bool:
		for i, v := range s {
			if v {
				out[i] = 1
			}
		}
	}
	return out
}

// i64 returns the elements as int64 (floats truncated).
func (h *htensor) i64() []int64 {
	out := make([]int64, h.size())
	switch s := h.data.(type) {
	case []int64:
		copy(out, s)
	case []int32:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []int8:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []int16:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []uint8:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []uint16:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []uint32:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []uint64:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []bool:
		for i, v := range s {
			if v {
				out[i] = 1
			}
		}
	default:
		for i, v := range h.f64() {
			out[i] = int64(v)
		}
	}
	return out
}

// fromF64 builds a tensor of dt from float64 values (converted as a cast
// would: integers truncate toward zero).
func fromF64(dt canonical.DataType, shape []int, v []float64) *htensor {
	h := newH(dt, shape)
	switch s := h.data.(type) {
	case []float32:
		for i, x := range v {
			s[i] = float32(x)
		}
		h.roundToType()
	case []float64:
		copy(s, v)
	case []int8:
		for i, x := range v {
			s[i] = int8(int64(x))
		}
	case []int16:
		for i, x := range v {
			s[i] = int16(int64(x))
		}
	case []int32:
		for i, x := range v {
			s[i] = int32(int64(x))
		}
	case []int64:
		for i, x := range v {
			s[i] = int64(x)
		}
	case []uint8:
		for i, x := range v {
			s[i] = uint8(int64(x))
		}
	case []uint16:
		for i, x := range v {
			s[i] = uint16(int64(x))
		}
	case []uint32:
		for i, x := range v {
			s[i] = uint32(int64(x))
		}
	case []uint64:
		for i, x := range v {
			if x >= 9.223372036854775807e18 {
				s[i] = uint64(x)
			} else {
				s[i] = uint64(int64(x))
			}
		}
	case []bool:
		for i, x := range v {
			s[i] = x != 0
		}
	}
	return h
}

// fromI64 builds a tensor of dt from int64 values.
func fromI64(dt canonical.DataType, shape []int, v []int64) *htensor {
	h := newH(dt, shape)
	switch s := h.data.(type) {
	case []int64:
		copy(s, v)
	case []int32:
		for i, x := range v {
			s[i] = int32(x)
		}
	case []int8:
		for i, x := range v {
			s[i] = int8(x)
		}
	case []int16:
		for i, x := range v {
			s[i] = int16(x)
		}
	case []uint8:
		for i, x := range v {
			s[i] = uint8(x)
		}
	case []uint16:
		for i, x := range v {
			s[i] = uint16(x)
		}
	case []uint32:
		for i, x := range v {
			s[i] = uint32(x)
		}
	case []uint64:
		for i, x := range v {
			s[i] = uint64(x)
		}
	case []bool:
		for i, x := range v {
			s[i] = x != 0
		}
	default:
		f := make([]float64, len(v))
		for i, x := range v {
			f[i] = float64(x)
		}
		return fromF64(dt, shape, f)
	}
	return h
}

func scalarI64(v int64) *htensor { return fromI64(canonical.Int64, nil, []int64{v}) }

func isFloatType(dt canonical.DataType) bool {
	k := storageOf(dt)
	return k == kF32 || k == kF64
}

func isIntType(dt canonical.DataType) bool {
	switch storageOf(dt) {
	case kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64:
		return true
	}
	return false
}

// equalH reports whether two host tensors hold the same type, shape and
// elements (NaN equal to NaN).
func equalH(a, b *htensor) bool {
	if a.dt != b.dt || len(a.shape) != len(b.shape) {
		return false
	}
	for i := range a.shape {
		if a.shape[i] != b.shape[i] {
			return false
		}
	}
	if s, ok := a.data.([]string); ok {
		t := b.data.([]string)
		for i := range s {
			if s[i] != t[i] {
				return false
			}
		}
		return true
	}
	x, y := sliceBytes(a.data), sliceBytes(b.data)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}
