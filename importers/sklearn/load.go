package sklearn

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"

	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/internal/suggest"
)

// MaxDecompressed bounds the pickle stream a compressed joblib file may
// expand to.
const MaxDecompressed = 1 << 30

// MaxRatio bounds how many times its compressed size a joblib stream
// may expand to (joblib's compressed models expand 2 to 20 times).
const MaxRatio = fsys.MaxRatio

// MaxDictionary bounds the dictionary an xz or lzma stream may ask the
// decompressor to allocate (Python's presets use at most 64 MiB).
const MaxDictionary = 64 << 20

// Container is how the pickle stream is stored in a file.
type Container string

// Containers Load tells apart by content.
const (
	Pickle    Container = "pickle"
	JoblibZ   Container = "joblib zlib"
	JoblibGz  Container = "joblib gzip"
	JoblibBz2 Container = "joblib bz2"
	JoblibXz  Container = "joblib xz"
	JoblibLZ  Container = "joblib lzma"
	JoblibLz4 Container = "joblib lz4"
	JoblibOld Container = "joblib < 0.10 (ZF)"
	Skops     Container = "skops zip"
)

// sniff tells the container from the first bytes of a file, or "".
func sniff(head []byte) Container {
	switch {
	case len(head) >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5:
		return Pickle
	case len(head) >= 2 && head[0] != 0x80 && pickle.Sniff(head) >= 0:
		// protocol 0 or 1: no PROTO opcode; the opcodes tell
		return Pickle
	case len(head) >= 2 && head[0] == 0x78 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0:
		return JoblibZ
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return JoblibGz
	case bytes.HasPrefix(head, []byte("BZh")):
		return JoblibBz2
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return JoblibXz
	case bytes.HasPrefix(head, []byte{0x5d, 0, 0}):
		return JoblibLZ
	case bytes.HasPrefix(head, []byte{0x04, 0x22, 0x4d, 0x18}):
		return JoblibLz4
	case bytes.HasPrefix(head, []byte("ZF0x")):
		return JoblibOld
	}
	return ""
}

// UnsupportedContainerError is a compression joblib writes that this
// build cannot read.
type UnsupportedContainerError struct {
	Container Container
}

func (e *UnsupportedContainerError) Error() string {
	return fmt.Sprintf("%s compression is not supported; re-save with joblib.dump(model, path, compress=('zlib', 3)) (or gzip, bz2, xz, lzma, lz4) or without compression", e.Container)
}

// decompress returns the pickle stream held by data.
func decompress(data []byte) ([]byte, Container, error) {
	c := sniff(data)
	switch c {
	case Pickle:
		return data, c, nil
	case "":
		if isZip(data) {
			return data, Skops, nil
		}
		return nil, c, &NotPickleError{}
	}
	r, err := openStream(data)
	if err != nil {
		return nil, c, fmt.Errorf("%s: %w", c, err)
	}
	// Streamed in steps: a bomb stops at MaxRatio times the file or
	// MaxDecompressed, whichever comes first, not after filling memory.
	out, err := fsys.Inflate(r, int64(len(data)), MaxRatio, MaxDecompressed, nil, string(c)+" stream")
	if err != nil {
		return nil, c, fmt.Errorf("%s: %w", c, err)
	}
	if sniff(out) != Pickle {
		return nil, c, fmt.Errorf("%s: the decompressed stream is not a pickle of protocol 0 to 5", c)
	}
	return out, c, nil
}

// openStream opens the decompressed stream of a compressed joblib file.
func openStream(data []byte) (io.Reader, error) {
	switch c := sniff(data); c {
	case JoblibZ:
		return zlib.NewReader(bytes.NewReader(data))
	case JoblibGz:
		return gzip.NewReader(bytes.NewReader(data))
	case JoblibBz2:
		return bzip2.NewReader(bytes.NewReader(data)), nil
	case JoblibXz:
		if err := checkXzDictionary(data); err != nil {
			return nil, err
		}
		return xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(data))
	case JoblibLZ:
		return lzma.ReaderConfig{DictCap: MaxDictionary}.NewReader(bytes.NewReader(data))
	case JoblibLz4:
		return lz4.NewReader(bytes.NewReader(data)), nil
	case "":
		return nil, &NotPickleError{}
	default:
		return nil, &UnsupportedContainerError{Container: c}
	}
}

// checkXzDictionary refuses an xz stream whose first block's LZMA2
// filter asks for a dictionary larger than MaxDictionary (the xz package
// would allocate it before reading any data). The headers are read as
// the xz format defines them: a 12-byte stream header, then the block
// header (size, flags, optional sizes, filter flags).
func checkXzDictionary(data []byte) error {
	const at = 12
	if len(data) < at+2 || data[at] == 0 {
		return nil // no block (or the index): the xz reader decides
	}
	hdr := data[at:min(len(data), at+(int(data[at])+1)*4)]
	flags := hdr[1]
	p := 2
	varint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9 && p < len(hdr); i++ {
			b := hdr[p]
			p++
			v |= uint64(b&0x7f) << (7 * i)
			if b&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	for _, bit := range []byte{0x40, 0x80} {
		if flags&bit != 0 {
			if _, ok := varint(); !ok {
				return errors.New("xz: malformed block header")
			}
		}
	}
	for f := 0; f <= int(flags&3); f++ {
		id, ok1 := varint()
		n, ok2 := varint()
		if !ok1 || !ok2 || n > uint64(len(hdr)-p) {
			return errors.New("xz: malformed block header")
		}
		if id == 0x21 && n == 1 {
			c := hdr[p] & 0x3f
			if c > 40 {
				return errors.New("xz: bad LZMA2 dictionary size")
			}
			size := int64(2|int64(c&1)) << (c/2 + 11)
			if size > MaxDictionary {
				return fmt.Errorf("xz: the stream asks for a %d-byte dictionary, more than the %d this reader allows", size, MaxDictionary)
			}
		}
		p += int(n)
	}
	return nil
}

// NotPickleError is a file that is no pickle, joblib or skops file.
type NotPickleError struct{}

func (e *NotPickleError) Error() string {
	return "not a pickle (protocol 0 to 5), joblib or skops file"
}

// UnsupportedClassError is a scikit-learn class this importer does not
// convert.
type UnsupportedClassError struct {
	Class   string
	Nearest string
}

func (e *UnsupportedClassError) Error() string {
	s := fmt.Sprintf("scikit-learn class %s is not supported", e.Class)
	if e.Nearest != "" {
		s += fmt.Sprintf(" (nearest supported: %s)", e.Nearest)
	}
	return s + "; see docs/sklearn.md for the supported estimators"
}

// Unwrap gives the class in the one unsupported-op shape (an estimator
// class is an operator of the model), for errors.As.
func (e *UnsupportedClassError) Unwrap() error {
	return &importers.UnsupportedOpsError{Format: Name, Ops: []importers.UnsupportedOp{{Op: e.Class, Reason: e.Error()}}}
}

// UnsupportedOptionError is a supported estimator fitted with an option
// this importer does not convert.
type UnsupportedOptionError struct {
	Path, Option, Why string
}

func (e *UnsupportedOptionError) Error() string {
	return fmt.Sprintf("%s: %s is not supported: %s", e.Path, e.Option, e.Why)
}

// Unwrap gives the option in the one unsupported-op shape (the estimator
// at Path is the node), for errors.As.
func (e *UnsupportedOptionError) Unwrap() error {
	return &importers.UnsupportedOpsError{Format: Name, Ops: []importers.UnsupportedOp{{Op: e.Option, Node: e.Path, Reason: e.Why}}}
}

// ForeignNameError is a name outside scikit-learn, numpy's array
// reconstruction and joblib's array wrapper.
type ForeignNameError struct{ Name string }

func (e *ForeignNameError) Error() string {
	return "not a scikit-learn class"
}

// helpers are non-estimator scikit-learn classes that supported
// estimators hold (inert: only their attributes are read, if at all).
var helpers = map[string]bool{
	"Tree": true, "LabelBinarizer": true, "AdamOptimizer": true, "SGDOptimizer": true,
	"Hinge": true, "Log": true, "SquaredLoss": true, "ModifiedHuber": true, "SquaredHinge": true,
	"EpsilonInsensitive": true, "SquaredEpsilonInsensitive": true, "Huber": true,
	// trees and ensembles
	"ExtraTreeClassifier": true, "ExtraTreeRegressor": true, "DummyClassifier": true, "DummyRegressor": true,
	"BinomialDeviance": true, "MultinomialDeviance": true, "LeastSquaresError": true, "LeastAbsoluteError": true,
	"HuberLossFunction": true, "QuantileLossFunction": true, "ExponentialLoss": true,
	// gradient boosting's init estimators and losses before 0.21/0.22
	"LogOddsEstimator": true, "ScaledLogOddsEstimator": true, "PriorProbabilityEstimator": true,
	"MeanEstimator": true, "QuantileEstimator": true, "ZeroEstimator": true,
	"LeastSquaresErrorLoss": true, "BinomialDevianceLoss": true,
	"TreePredictor": true, "_BinMapper": true,
	"HalfSquaredError": true, "AbsoluteError": true, "PinballLoss": true, "HalfPoissonLoss": true,
	"HalfGammaLoss": true, "HalfTweedieLoss": true, "HalfBinomialLoss": true, "HalfMultinomialLoss": true,
	"KDTree": true, "BallTree": true, "MissingIndicator": true,
	"IdentityLink": true, "LogLink": true, "LogitLink": true, "MultinomialLogit": true, "Interval": true,
}

// plainNames are the non-scikit-learn names a model pickle may hold.
var plainNames = map[string]bool{
	"numpy.core.multiarray._reconstruct":                      true,
	"numpy._core.multiarray._reconstruct":                     true,
	"numpy.core.multiarray.scalar":                            true,
	"numpy._core.multiarray.scalar":                           true,
	"numpy.core.numeric._frombuffer":                          true,
	"numpy._core.numeric._frombuffer":                         true,
	"numpy.ndarray":                                           true,
	"numpy.dtype":                                             true,
	"numpy.random._pickle.__randomstate_ctor":                 true,
	"numpy.random.__RandomState_ctor":                         true, // numpy < 1.17
	"numpy.random._pickle.__bit_generator_ctor":               true,
	"numpy.random._pickle.__generator_ctor":                   true,
	"joblib.numpy_pickle.NumpyArrayWrapper":                   true,
	"sklearn.externals.joblib.numpy_pickle.NumpyArrayWrapper": true,
	"copyreg._reconstructor":                                  true,
	"copy_reg._reconstructor":                                 true,
	"builtins.object":                                         true,
	"__builtin__.object":                                      true,
	// what Python 3 writes for builtins at protocols 0 to 2
	"__builtin__.set":         true,
	"__builtin__.frozenset":   true,
	"__builtin__.bytearray":   true,
	"__builtin__.slice":       true,
	"__builtin__.bytes":       true, // b'' is bytes() at protocols 0 to 2
	"builtins.bytes":          true,
	"builtins.set":            true,
	"builtins.frozenset":      true,
	"builtins.bytearray":      true,
	"_codecs.encode":          true,
	"collections.OrderedDict": true,
	"builtins.slice":          true,
	// numpy scalar types, as the dtype parameter of the encoders
	"numpy.float64": true, "numpy.float32": true, "numpy.float16": true,
	"numpy.int64": true, "numpy.int32": true, "numpy.int16": true, "numpy.int8": true,
	"numpy.uint64": true, "numpy.uint32": true, "numpy.uint16": true, "numpy.uint8": true,
	"numpy.bool_": true, "numpy.bool": true, "numpy.object_": true, // numpy 2 names bool_ "bool"
}

// allow is the allow-list given to the pickle reader.
func allow(module, name string) error {
	if plainNames[module+"."+name] {
		return nil
	}
	if module == "sklearn" || strings.HasPrefix(module, "sklearn.") {
		if _, ok := supported[name]; ok || helpers[name] {
			return nil
		}
		// The neighbours' search trees rebuild through newObj (read,
		// never run; the predictor uses the training points).
		if (module == "sklearn.neighbors._kd_tree" || module == "sklearn.neighbors._ball_tree" || module == "sklearn.metrics._dist_metrics") &&
			(name == "newObj" || name == "KDTree" || name == "BallTree" || strings.HasSuffix(name, "Distance") || strings.HasSuffix(name, "Distance64")) {
			return nil
		}
		// The Cython loss objects of sklearn._loss rebuild from their
		// state (read, never run).
		if module == "sklearn._loss._loss" && (strings.HasPrefix(name, "__pyx_unpickle_Cy") || strings.HasPrefix(name, "Cy")) {
			return nil
		}
		return &UnsupportedClassError{Class: name, Nearest: nearest(name)}
	}
	if (name == "NDArrayWrapper" || name == "ZNDArrayWrapper") && strings.HasSuffix(module, "joblib.numpy_pickle") {
		return &OldJoblibArrayError{Name: module + "." + name}
	}
	return &ForeignNameError{Name: module + "." + name}
}

// OldJoblibArrayError is an array that joblib before 0.10 stored in a
// file of its own beside the pickle (NDArrayWrapper, ZNDArrayWrapper).
type OldJoblibArrayError struct{ Name string }

func (e *OldJoblibArrayError) Error() string {
	return "an array that joblib < 0.10 wrote to a separate file next to the pickle (" + e.Name + "); load the model with joblib and dump it again with joblib >= 0.10 (one file)"
}

func nearest(name string) string {
	names := make([]string, 0, len(supported))
	for n := range supported {
		names = append(names, n)
	}
	// Prefer a supported class sharing the name's family suffix.
	for _, suf := range []string{"Classifier", "Regressor", "Scaler", "NB", "SVC", "SVR"} {
		if strings.HasSuffix(name, suf) {
			var fam []string
			for _, n := range names {
				if strings.HasSuffix(n, suf) {
					fam = append(fam, n)
				}
			}
			if len(fam) > 0 {
				if c := suggest.Closest(name, fam); c != "" {
					return c
				}
				slices.Sort(fam)
				return fam[0]
			}
		}
	}
	return suggest.Closest(name, names)
}

// loadPickle reads the pickle stream (joblib arrays included) into values.
func loadPickle(stream []byte) (pickle.Value, error) {
	v, n, err := pickle.Load(stream, pickle.Options{Allow: allow, AfterBuild: joblibArray})
	if err != nil {
		return nil, err
	}
	if n != len(stream) && strings.Trim(string(stream[n:]), "\x00") != "" {
		// pickle.load ignores trailing bytes too; note nothing.
		_ = n
	}
	return v, nil
}

// Array is a numpy array read from a pickle: its shape, its dtype kind
// ('f', 'i', 'u', 'b', 'O') and its values in C order, as float64 (for
// numeric kinds) and, for object arrays, as pickle values.
type Array struct {
	Shape   []int
	Kind    byte
	F       []float64
	Objects []pickle.Value
	// Fields holds a structured array's ('V') columns by field name, each
	// with one value per element, as float64.
	Fields map[string][]float64
	// dt is the element type it was decoded from.
	dt dtype
}

// Size is the number of elements.
func (a *Array) Size() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// dtype is a numpy dtype read from its pickle form.
type dtype struct {
	kind  byte // f i u b O, V (structured)
	size  int
	order byte // '<', '>', '|'
	// fields of a structured dtype (kind 'V').
	fields []dtypeField
}

// dtypeField is one field of a structured dtype.
type dtypeField struct {
	name string
	dt   dtype
	off  int
}

// maxFields bounds the fields of a structured dtype.
const maxFields = 64

func parseDtype(v pickle.Value) (dtype, error) {
	o, ok := v.(*pickle.Object)
	if !ok || o.Class() == nil || o.Class().Name != "dtype" || len(o.Args) < 1 {
		return dtype{}, fmt.Errorf("expected a numpy dtype, found %s", pickle.Describe(v))
	}
	s, ok := o.Args[0].(string)
	if !ok || len(s) < 2 {
		return dtype{}, fmt.Errorf("numpy dtype %s not supported", pickle.Describe(o.Args[0]))
	}
	dt := dtype{kind: s[0], order: '<'}
	if st, ok := o.State.(*pickle.Tuple); ok && len(st.Items) > 1 {
		if b, ok := st.Items[1].(string); ok && len(b) == 1 {
			dt.order = b[0]
		}
		if len(st.Items) > 3 && st.Items[3] != nil {
			if dt.kind != 'V' {
				return dtype{}, fmt.Errorf("numpy dtype %q with fields is not supported", s)
			}
			fields, err := parseFields(st)
			if err != nil {
				return dtype{}, err
			}
			dt.fields = fields
		}
	}
	n := 0
	for _, c := range s[1:] {
		if c < '0' || c > '9' || n > 1<<10 {
			return dtype{}, fmt.Errorf("numpy dtype %q not supported", s)
		}
		n = n*10 + int(c-'0')
	}
	dt.size = n
	switch {
	case dt.kind == 'f' && (n == 4 || n == 8):
	case (dt.kind == 'i' || dt.kind == 'u') && (n == 1 || n == 2 || n == 4 || n == 8):
	case dt.kind == 'b' && n == 1:
	case dt.kind == 'O' && n == 8:
	case dt.kind == 'V' && dt.fields != nil && n > 0:
		for _, f := range dt.fields {
			if f.off+f.dt.size > n {
				return dtype{}, fmt.Errorf("structured numpy dtype %q: field %q beyond the item", s, f.name)
			}
		}
	default:
		return dtype{}, fmt.Errorf("numpy dtype %q not supported (float, int, uint, bool and object are)", s)
	}
	if dt.order == '>' && dt.size > 1 {
		return dtype{}, fmt.Errorf("big-endian numpy arrays are not supported")
	}
	return dt, nil
}

// parseFields reads the fields of a structured dtype from its state
// (version, byte order, subarray, names, fields, itemsize, alignment,
// flags).
func parseFields(st *pickle.Tuple) ([]dtypeField, error) {
	if len(st.Items) < 6 {
		return nil, fmt.Errorf("structured numpy dtype without its fields")
	}
	names, ok := st.Items[3].(*pickle.Tuple)
	fd, ok2 := st.Items[4].(*pickle.Dict)
	if !ok || !ok2 || len(names.Items) == 0 || len(names.Items) > maxFields {
		return nil, fmt.Errorf("structured numpy dtype: bad field list")
	}
	var out []dtypeField
	for _, nv := range names.Items {
		name, ok := nv.(string)
		if !ok {
			return nil, fmt.Errorf("structured numpy dtype: field name %s", pickle.Describe(nv))
		}
		v, ok := fd.Get(name)
		t, ok2 := v.(*pickle.Tuple)
		if !ok || !ok2 || len(t.Items) < 2 {
			return nil, fmt.Errorf("structured numpy dtype: field %q without its type", name)
		}
		fdt, err := parseDtype(t.Items[0])
		if err != nil {
			return nil, fmt.Errorf("structured numpy dtype: field %q: %w", name, err)
		}
		off, ok := t.Items[1].(int64)
		if fdt.kind == 'O' || fdt.kind == 'V' || !ok || off < 0 || off > 1<<20 {
			return nil, fmt.Errorf("structured numpy dtype: field %q not supported", name)
		}
		out = append(out, dtypeField{name: name, dt: fdt, off: int(off)})
	}
	return out, nil
}

func parseShape(v pickle.Value) ([]int, error) {
	t, ok := v.(*pickle.Tuple)
	if !ok {
		if i, ok := v.(int64); ok { // a 1-D shape written as an int
			t = &pickle.Tuple{Items: []pickle.Value{i}}
		} else {
			return nil, fmt.Errorf("array shape %s is not a tuple", pickle.Describe(v))
		}
	}
	if len(t.Items) > 32 {
		return nil, fmt.Errorf("array of %d dimensions", len(t.Items))
	}
	shape := make([]int, len(t.Items))
	total := int64(1)
	for i, x := range t.Items {
		d, ok := x.(int64)
		if !ok || d < 0 || d > 1<<40 {
			return nil, fmt.Errorf("bad array dimension %s", pickle.Describe(x))
		}
		shape[i] = int(d)
		if d != 0 && total > math.MaxInt64/d/16 {
			return nil, fmt.Errorf("array shape %v is too large", shape)
		}
		total *= d
	}
	return shape, nil
}

func count(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

// decodeRaw turns raw little-endian bytes into an Array.
func decodeRaw(raw []byte, dt dtype, shape []int, fortran bool) (*Array, error) {
	n := count(shape)
	if dt.kind == 'O' {
		return nil, fmt.Errorf("object array given as raw bytes")
	}
	if int64(len(raw)) != n*int64(dt.size) {
		return nil, fmt.Errorf("array of shape %v and %d-byte items holds %d bytes, want %d", shape, dt.size, len(raw), n*int64(dt.size))
	}
	if dt.kind == 'V' {
		if len(shape) > 1 {
			return nil, fmt.Errorf("structured array of %d dimensions", len(shape))
		}
		a := &Array{Shape: shape, Kind: 'V', Fields: map[string][]float64{}, dt: dt}
		for _, f := range dt.fields {
			col := make([]float64, n)
			for i := range col {
				col[i] = decodeOne(raw[int64(i)*int64(dt.size)+int64(f.off):], f.dt)
			}
			a.Fields[f.name] = col
		}
		return a, nil
	}
	a := &Array{Shape: shape, Kind: dt.kind, F: make([]float64, n), dt: dt}
	for i := range a.F {
		a.F[i] = decodeOne(raw[i*dt.size:], dt)
	}
	if fortran && len(shape) > 1 {
		a.F = fortranToC(a.F, shape)
	}
	return a, nil
}

// decodeOne reads one little-endian number of type dt from e.
func decodeOne(e []byte, dt dtype) float64 {
	{
		var f float64
		switch {
		case dt.kind == 'f' && dt.size == 4:
			f = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case dt.kind == 'f':
			f = math.Float64frombits(binary.LittleEndian.Uint64(e))
		case dt.kind == 'u' || dt.kind == 'b':
			var u uint64
			for j := dt.size - 1; j >= 0; j-- {
				u = u<<8 | uint64(e[j])
			}
			f = float64(u)
		default:
			var u uint64
			for j := dt.size - 1; j >= 0; j-- {
				u = u<<8 | uint64(e[j])
			}
			sh := uint(64 - 8*dt.size)
			f = float64(int64(u<<sh) >> sh)
		}
		return f
	}
}

// fortranToC reorders column-major values to row-major.
func fortranToC[T any](src []T, shape []int) []T {
	dst := make([]T, len(src))
	nd := len(shape)
	idx := make([]int, nd)
	for i := range src {
		// i is the C-order index; compute its Fortran-order offset.
		off, stride := 0, 1
		for k := 0; k < nd; k++ {
			off += idx[k] * stride
			stride *= shape[k]
		}
		dst[i] = src[off]
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return dst
}

// joblibArray replaces a built NumpyArrayWrapper by the array whose bytes
// follow it in the stream, as joblib's NumpyUnpickler does.
func joblibArray(d *pickle.Decoder, o *pickle.Object) (pickle.Value, error) {
	g := o.Class()
	if g == nil || g.Name != "NumpyArrayWrapper" {
		return o, nil
	}
	attrs := o.Attrs()
	if attrs == nil {
		return nil, errors.New("joblib NumpyArrayWrapper without attributes")
	}
	get := func(k string) (pickle.Value, error) {
		v, ok := attrs.Get(k)
		if !ok {
			return nil, fmt.Errorf("joblib NumpyArrayWrapper without %q", k)
		}
		return v, nil
	}
	dv, err := get("dtype")
	if err != nil {
		return nil, err
	}
	dt, err := parseDtype(dv)
	if err != nil {
		return nil, err
	}
	sv, err := get("shape")
	if err != nil {
		return nil, err
	}
	shape, err := parseShape(sv)
	if err != nil {
		return nil, err
	}
	order, _ := attrs.Get("order")
	if dt.kind == 'O' {
		v, err := d.LoadNested()
		if err != nil {
			return nil, fmt.Errorf("joblib object array: %w", err)
		}
		a, err := toArray(v)
		if err != nil {
			return nil, fmt.Errorf("joblib object array: %w", err)
		}
		return a, nil
	}
	if al, ok := attrs.Get("numpy_array_alignment_bytes"); ok && al != nil {
		pad, err := d.Read(1)
		if err != nil {
			return nil, err
		}
		if _, err := d.Read(int64(pad[0])); err != nil {
			return nil, err
		}
	}
	n := count(shape) * int64(dt.size)
	raw, err := d.Read(n)
	if err != nil {
		return nil, fmt.Errorf("joblib array of shape %v: %w", shape, err)
	}
	return decodeRaw(raw, dt, shape, order == "F")
}

// toArray reads a numpy array (or scalar, as a 0-d array) in any of the
// pickled forms: joblib's (already an *Array), protocol 5's _frombuffer,
// and _reconstruct with BUILD state.
func toArray(v pickle.Value) (*Array, error) {
	switch v := v.(type) {
	case *Array:
		return v, nil
	case *pickle.Object:
		g := v.Class()
		if g == nil {
			break
		}
		switch g.Name {
		case "_frombuffer":
			if len(v.Args) != 4 {
				break
			}
			buf, ok := v.Args[0].(pickle.Bytes)
			if !ok {
				return nil, fmt.Errorf("numpy _frombuffer of %s", pickle.Describe(v.Args[0]))
			}
			dt, err := parseDtype(v.Args[1])
			if err != nil {
				return nil, err
			}
			shape, err := parseShape(v.Args[2])
			if err != nil {
				return nil, err
			}
			return decodeRaw(buf, dt, shape, v.Args[3] == "F")
		case "_reconstruct":
			st, ok := v.State.(*pickle.Tuple)
			if !ok || len(st.Items) != 5 {
				return nil, fmt.Errorf("numpy array without its state")
			}
			shape, err := parseShape(st.Items[1])
			if err != nil {
				return nil, err
			}
			dt, err := parseDtype(st.Items[2])
			if err != nil {
				return nil, err
			}
			fortran, _ := st.Items[3].(bool)
			if b, ok := rawBytes(st.Items[4]); ok {
				return decodeRaw(b, dt, shape, fortran)
			}
			switch data := st.Items[4].(type) {
			case *pickle.List:
				if dt.kind != 'O' || int64(len(data.Items)) != count(shape) {
					return nil, fmt.Errorf("numpy object array of shape %v with %d items", shape, len(data.Items))
				}
				objs := data.Items
				if fortran && len(shape) > 1 {
					objs = fortranToC(objs, shape)
				}
				return &Array{Shape: shape, Kind: 'O', Objects: objs}, nil
			}
			return nil, fmt.Errorf("numpy array data %s not supported", pickle.Describe(st.Items[4]))
		case "scalar":
			if len(v.Args) != 2 {
				break
			}
			dt, err := parseDtype(v.Args[0])
			if err != nil {
				return nil, err
			}
			if b, ok := rawBytes(v.Args[1]); ok {
				return decodeRaw(b, dt, nil, false)
			}
		}
	}
	return nil, fmt.Errorf("expected a numpy array, found %s", pickle.Describe(v))
}

// rawBytes reads the bytes of a numpy array's or scalar's data in the
// forms pickles hold them: bytes (protocol 3 on), a latin-1 str (Python
// 2's str, protocols 0 to 2) and _codecs.encode(text, 'latin1') (Python
// 3's bytes at protocols 0 to 2).
func rawBytes(v pickle.Value) ([]byte, bool) {
	switch data := v.(type) {
	case pickle.Bytes:
		return data, true
	case string:
		return latin1(data), true
	case *pickle.Object:
		c := data.Class()
		if c != nil && c.Name == "encode" && len(data.Args) == 2 {
			if s, ok := data.Args[0].(string); ok {
				return latin1(s), true
			}
		}
		if c != nil && c.Name == "bytes" && len(data.Args) == 0 {
			return []byte{}, true
		}
	}
	return nil, false
}

func latin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		out = append(out, byte(r))
	}
	return out
}

// isZip is a zip archive's local file header magic (skops files are zips).
func isZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04"))
}
