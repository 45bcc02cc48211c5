// Package tensorio reads the tensor files that onnxconv verify accepts as
// inputs and as stored expected outputs: TensorProto .pb files, NumPy .npy
// arrays and .npz archives, and folders of them in the ONNX backend-test
// layout (input_N.pb, output_N.pb) or named after the graph values
// (NAME.pb, NAME.npy).
//
// Every size read from a file is checked before it is used: header
// lengths, shapes (element counts that overflow), data lengths against
// the shape, and the uncompressed size of .npz members.
package tensorio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/onnxconv/onnxconv/canonical"
)

// MaxHeaderLen bounds the length of an .npy header (numpy itself writes
// headers of a few hundred bytes; its reader refuses more than 10000 by
// default).
const MaxHeaderLen = 1 << 16

// MaxArrayBytes bounds the data of one array read from a file.
const MaxArrayBytes int64 = 8 << 30

var npyMagic = []byte("\x93NUMPY")

// ReadNpyFile reads a NumPy .npy file. The tensor is named after the file
// (without folder and extension).
func ReadNpyFile(path string) (*canonical.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("npy %s: %w", path, err)
	}
	name := strings.TrimSuffix(baseName(path), ".npy")
	t, err := ReadNpy(f, name, st.Size())
	if err != nil {
		return nil, fmt.Errorf("npy %s: %w", path, err)
	}
	return t, nil
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// npyHeader is the parsed header dictionary of an .npy array.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// ReadNpy reads one .npy array from r. size is the number of bytes r holds
// (the file size, or the uncompressed size of an .npz member); the data
// length must match the shape exactly.
func ReadNpy(r io.Reader, name string, size int64) (*canonical.Tensor, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, fmt.Errorf("reading magic: %w", err)
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return nil, fmt.Errorf("not an .npy file (bad magic %q)", pre[:6])
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	var prefix int64
	switch major {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("reading header length: %w", err)
		}
		hlen, prefix = int64(binary.LittleEndian.Uint16(b)), 10
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("reading header length: %w", err)
		}
		hlen, prefix = int64(binary.LittleEndian.Uint32(b)), 12
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d", major, minor)
	}
	if hlen > MaxHeaderLen {
		return nil, fmt.Errorf("header length %d exceeds %d", hlen, MaxHeaderLen)
	}
	if size >= 0 && prefix+hlen > size {
		return nil, fmt.Errorf("header length %d runs past the end of the %d-byte file", hlen, size)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	// Versions 1 and 2 are latin-1, version 3 UTF-8; a valid header is
	// plain ASCII either way, and the parser rejects anything else.
	htext := string(hb)
	h, err := parseNpyHeader(htext)
	if err != nil {
		return nil, fmt.Errorf("header %q: %w", strings.TrimSpace(htext), err)
	}
	if h.fortran {
		return nil, fmt.Errorf("fortran_order arrays are not supported (save with np.ascontiguousarray)")
	}
	dt, order, itemsize, kind, err := npyDType(h.descr)
	if err != nil {
		return nil, err
	}
	n, err := canonical.NumElements(h.shape)
	if err != nil {
		return nil, fmt.Errorf("shape %v: %w", h.shape, err)
	}
	hi, want := bits.Mul64(uint64(n), uint64(itemsize))
	if hi != 0 || want > uint64(MaxArrayBytes) {
		return nil, fmt.Errorf("shape %v of %s: data size exceeds %d bytes", h.shape, h.descr, MaxArrayBytes)
	}
	if size >= 0 {
		if have := size - prefix - hlen; have != int64(want) {
			return nil, fmt.Errorf("shape %v of %s needs %d data bytes, the file holds %d", h.shape, h.descr, want, have)
		}
	}
	data := make([]byte, want)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("reading %d data bytes for shape %v: %w", want, h.shape, err)
	}
	if size < 0 {
		// Unknown size: there must be nothing after the data.
		var one [1]byte
		if k, _ := r.Read(one[:]); k != 0 {
			return nil, fmt.Errorf("trailing bytes after the data of shape %v", h.shape)
		}
	}
	switch kind {
	case 'U':
		return unicodeTensor(name, h.shape, data, itemsize, order)
	case 'S':
		strs := make([][]byte, n)
		for i := range strs {
			s := data[int64(i)*int64(itemsize) : int64(i+1)*int64(itemsize)]
			strs[i] = bytes.TrimRight(s, "\x00")
		}
		return canonical.NewStringTensor(name, h.shape, strs), nil
	}
	if order == binary.BigEndian {
		swap(data, itemsize, kind)
	}
	if dt == canonical.Bool {
		for i, b := range data {
			if b > 1 {
				return nil, fmt.Errorf("bool element %d holds %d, not 0 or 1", i, b)
			}
		}
	}
	return canonical.NewTensor(name, dt, h.shape, data), nil
}

func swap(data []byte, itemsize int, kind byte) {
	w := itemsize
	if kind == 'c' {
		w = itemsize / 2 // complex: two floats, each swapped
	}
	if w <= 1 {
		return
	}
	for i := 0; i+w <= len(data); i += w {
		for a, b := i, i+w-1; a < b; a, b = a+1, b-1 {
			data[a], data[b] = data[b], data[a]
		}
	}
}

func unicodeTensor(name string, shape []int64, data []byte, itemsize int, order binary.ByteOrder) (*canonical.Tensor, error) {
	n := len(data) / itemsize
	strs := make([][]byte, n)
	for i := range strs {
		s := data[i*itemsize : (i+1)*itemsize]
		var sb []byte
		for j := 0; j+4 <= len(s); j += 4 {
			r := order.Uint32(s[j:])
			if r == 0 {
				break
			}
			if r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
				return nil, fmt.Errorf("string element %d holds invalid code point %#x", i, r)
			}
			sb = utf8.AppendRune(sb, rune(r))
		}
		strs[i] = sb
	}
	return canonical.NewStringTensor(name, shape, strs), nil
}

// npyDType maps a numpy dtype string to an ONNX element type.
func npyDType(descr string) (canonical.DataType, binary.ByteOrder, int, byte, error) {
	if len(descr) < 2 {
		return 0, nil, 0, 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	var order binary.ByteOrder = binary.LittleEndian
	s := descr
	switch s[0] {
	case '<', '|', '=':
		s = s[1:]
	case '>':
		order, s = binary.BigEndian, s[1:]
	}
	if s == "" {
		return 0, nil, 0, 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	kind := s[0]
	size, err := strconv.Atoi(s[1:])
	if err != nil || size <= 0 {
		return 0, nil, 0, 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	type key struct {
		k byte
		n int
	}
	m := map[key]canonical.DataType{
		{'f', 2}: canonical.Float16, {'f', 4}: canonical.Float, {'f', 8}: canonical.Double,
		{'i', 1}: canonical.Int8, {'i', 2}: canonical.Int16, {'i', 4}: canonical.Int32, {'i', 8}: canonical.Int64,
		{'u', 1}: canonical.Uint8, {'u', 2}: canonical.Uint16, {'u', 4}: canonical.Uint32, {'u', 8}: canonical.Uint64,
		{'b', 1}: canonical.Bool, {'c', 8}: canonical.Complex64, {'c', 16}: canonical.Complex128,
	}
	switch kind {
	case 'U':
		if size > 1<<20 {
			return 0, nil, 0, 0, fmt.Errorf("dtype %q: string width too large", descr)
		}
		return canonical.String, order, size * 4, 'U', nil
	case 'S':
		if size > 1<<22 {
			return 0, nil, 0, 0, fmt.Errorf("dtype %q: string width too large", descr)
		}
		return canonical.String, order, size, 'S', nil
	}
	dt, ok := m[key{kind, size}]
	if !ok {
		return 0, nil, 0, 0, fmt.Errorf("unsupported dtype %q (object, structured and datetime arrays cannot be read)", descr)
	}
	return dt, order, size, kind, nil
}

// parseNpyHeader parses the Python dict literal of an .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func parseNpyHeader(s string) (*npyHeader, error) {
	p := &pyParser{s: s}
	p.space()
	if !p.eat('{') {
		return nil, fmt.Errorf("expected '{'")
	}
	h := &npyHeader{}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("expected ':' after %q", key)
		}
		p.space()
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return nil, fmt.Errorf("descr: %w (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return nil, fmt.Errorf("fortran_order: %w", err)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return nil, fmt.Errorf("shape: %w", err)
			}
		default:
			return nil, fmt.Errorf("unexpected key %q", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return nil, fmt.Errorf("expected ',' or '}' at offset %d", p.i)
		}
		break
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("trailing text after the dictionary")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	return h, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("expected a string at offset %d", p.i)
	}
	q := p.s[p.i]
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", fmt.Errorf("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+j]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", fmt.Errorf("escapes in strings are not supported")
	}
	p.i += j + 2
	return v, nil
}

func (p *pyParser) boolean() (bool, error) {
	switch {
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return false, fmt.Errorf("expected True or False at offset %d", p.i)
}

// tuple parses (), (3,), (2, 3) into dims.
func (p *pyParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, fmt.Errorf("expected '(' at offset %d", p.i)
	}
	dims := []int64{}
	for {
		p.space()
		if p.eat(')') {
			return dims, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, fmt.Errorf("expected a dimension at offset %d", p.i)
		}
		// Python may print long ints with an L suffix (numpy < 1.x on Py2).
		v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil || v > math.MaxInt64/2 {
			return nil, fmt.Errorf("dimension %q out of range", p.s[p.i:j])
		}
		p.i = j
		p.eat('L')
		dims = append(dims, v)
		if len(dims) > 64 {
			return nil, fmt.Errorf("more than 64 dimensions")
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat(')') {
			return nil, fmt.Errorf("expected ',' or ')' at offset %d", p.i)
		}
		return dims, nil
	}
}
