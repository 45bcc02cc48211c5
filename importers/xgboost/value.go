package xgboost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits applied while decoding untrusted input.
const (
	maxDepth = 64 // nesting of arrays and objects; xgboost models use fewer than 10
)

type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
	kNumArray // an array whose elements are all numbers or booleans
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kNumber:
		return "number"
	case kString:
		return "string"
	case kArray, kNumArray:
		return "array"
	case kObject:
		return "object"
	}
	return "unknown"
}

// value is the decoded document, shared by the JSON and UBJSON readers.
// Numbers keep both their float64 value and their float32 value read
// directly from the source (so that float32 thresholds are exact).
type value struct {
	kind  kind
	num   float64
	f32   float32
	str   string
	elems []value  // array elements or object values
	keys  []string // object keys
	nums  []float64
	nums2 []float32
}

func (v *value) get(key string) *value {
	if v == nil || v.kind != kObject {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return &v.elems[i]
		}
	}
	return nil
}

// finishArray turns an array of numbers (or booleans) into a kNumArray.
func finishArray(elems []value) value {
	if len(elems) == 0 {
		return value{kind: kArray}
	}
	for i := range elems {
		if elems[i].kind != kNumber && elems[i].kind != kBool {
			return value{kind: kArray, elems: elems}
		}
	}
	v := value{kind: kNumArray, nums: make([]float64, len(elems)), nums2: make([]float32, len(elems))}
	for i := range elems {
		v.nums[i] = elems[i].num
		v.nums2[i] = elems[i].f32
	}
	return v
}

// ---------------------------------------------------------------- JSON

type jsonParser struct {
	b   []byte
	pos int
}

func parseJSON(b []byte) (value, error) {
	p := &jsonParser{b: b}
	v, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	p.ws()
	if p.pos != len(p.b) {
		return value{}, fmt.Errorf("json: unexpected data after the top-level value at offset %d", p.pos)
	}
	return v, nil
}

func (p *jsonParser) ws() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) errf(format string, args ...any) error {
	return fmt.Errorf("json: offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) lit(s string) bool {
	if len(p.b)-p.pos >= len(s) && string(p.b[p.pos:p.pos+len(s)]) == s {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, p.errf("nesting deeper than %d", maxDepth)
	}
	p.ws()
	if p.pos >= len(p.b) {
		return value{}, p.errf("unexpected end of input")
	}
	switch c := p.b[p.pos]; {
	case c == '{':
		p.pos++
		var v value
		v.kind = kObject
		p.ws()
		if p.pos < len(p.b) && p.b[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		for {
			p.ws()
			if p.pos >= len(p.b) || p.b[p.pos] != '"' {
				return value{}, p.errf("expected an object key")
			}
			k, err := p.str()
			if err != nil {
				return value{}, err
			}
			p.ws()
			if p.pos >= len(p.b) || p.b[p.pos] != ':' {
				return value{}, p.errf("expected ':' after object key %q", k)
			}
			p.pos++
			e, err := p.value(depth + 1)
			if err != nil {
				return value{}, err
			}
			v.keys = append(v.keys, k)
			v.elems = append(v.elems, e)
			p.ws()
			if p.pos >= len(p.b) {
				return value{}, p.errf("unexpected end of input in object")
			}
			if p.b[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.b[p.pos] == '}' {
				p.pos++
				return v, nil
			}
			return value{}, p.errf("expected ',' or '}' in object")
		}
	case c == '[':
		p.pos++
		var elems []value
		p.ws()
		if p.pos < len(p.b) && p.b[p.pos] == ']' {
			p.pos++
			return finishArray(nil), nil
		}
		// Fast path for arrays of numbers (nearly all of a model).
		var nums []float64
		var nums2 []float32
		for p.pos < len(p.b) && (p.b[p.pos] == '-' || (p.b[p.pos] >= '0' && p.b[p.pos] <= '9')) {
			e, err := p.number()
			if err != nil {
				return value{}, err
			}
			nums, nums2 = append(nums, e.num), append(nums2, e.f32)
			p.ws()
			if p.pos < len(p.b) && p.b[p.pos] == ']' {
				p.pos++
				return value{kind: kNumArray, nums: nums, nums2: nums2}, nil
			}
			if p.pos >= len(p.b) || p.b[p.pos] != ',' {
				return value{}, p.errf("expected ',' or ']' in array")
			}
			p.pos++
			p.ws()
		}
		for i := range nums {
			elems = append(elems, numValue(nums[i], nums2[i]))
		}
		for {
			e, err := p.value(depth + 1)
			if err != nil {
				return value{}, err
			}
			elems = append(elems, e)
			p.ws()
			if p.pos >= len(p.b) {
				return value{}, p.errf("unexpected end of input in array")
			}
			if p.b[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.b[p.pos] == ']' {
				p.pos++
				return finishArray(elems), nil
			}
			return value{}, p.errf("expected ',' or ']' in array")
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return value{}, err
		}
		return value{kind: kString, str: s}, nil
	case c == 't':
		if p.lit("true") {
			return value{kind: kBool, num: 1, f32: 1}, nil
		}
	case c == 'f':
		if p.lit("false") {
			return value{kind: kBool}, nil
		}
	case c == 'n':
		if p.lit("null") {
			return value{kind: kNull}, nil
		}
	case c == 'N':
		if p.lit("NaN") {
			return numValue(math.NaN(), float32(math.NaN())), nil
		}
	case c == 'I':
		if p.lit("Infinity") {
			return numValue(math.Inf(1), float32(math.Inf(1))), nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return value{}, p.errf("unexpected character %q", p.b[p.pos])
}

func numValue(f float64, f32 float32) value { return value{kind: kNumber, num: f, f32: f32} }

func (p *jsonParser) number() (value, error) {
	start := p.pos
	if p.b[p.pos] == '-' {
		p.pos++
		if p.lit("Infinity") {
			return numValue(math.Inf(-1), float32(math.Inf(-1))), nil
		}
	}
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			p.pos++
			continue
		}
		break
	}
	s := string(p.b[start:p.pos])
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return value{}, fmt.Errorf("json: offset %d: bad number %q", start, string(p.b[start:p.pos]))
	}
	f32, err := strconv.ParseFloat(s, 32)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return value{}, fmt.Errorf("json: offset %d: bad number %q", start, string(p.b[start:p.pos]))
	}
	return numValue(f, float32(f32)), nil
}

func (p *jsonParser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		if c == '"' {
			s := p.b[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return "", fmt.Errorf("json: offset %d: string is not valid UTF-8", start)
			}
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errf("control character in string")
		}
		p.pos++
	}
	buf := append([]byte(nil), p.b[start:p.pos]...)
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(buf) {
				return "", fmt.Errorf("json: offset %d: string is not valid UTF-8", start)
			}
			return string(buf), nil
		case c < 0x20:
			return "", p.errf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.b) {
			break
		}
		e := p.b[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if p.lit("\\u") {
					r2, ok := p.hex4()
					if !ok {
						return "", p.errf("bad \\u escape")
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errf("bad escape \\%c", e)
		}
	}
	return "", fmt.Errorf("json: offset %d: unterminated string", start-1)
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.b)-p.pos < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}

// ---------------------------------------------------------------- UBJSON

// ubjParser decodes UBJSON (draft 12) as written by xgboost: big-endian
// numbers, strings with a length prefix, and optimised containers
// ('$' element type, '#' count) for typed arrays.
type ubjParser struct {
	b   []byte
	pos int
	// free is how many more elements typed containers of no-payload types
	// (Z, T, F) may claim in all: they cost no input bytes, so without a
	// shared budget a few bytes could ask for unbounded memory.
	free int
	// values counts the elements of untyped containers (see
	// ubjValueBudget).
	values int
}

func parseUBJSON(b []byte) (value, error) {
	p := &ubjParser{b: b, free: len(b)}
	v, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	for p.pos < len(p.b) && p.b[p.pos] == 'N' { // trailing no-ops
		p.pos++
	}
	if p.pos != len(p.b) {
		return value{}, fmt.Errorf("ubjson: unexpected data after the top-level value at offset %d", p.pos)
	}
	return v, nil
}

func (p *ubjParser) errf(format string, args ...any) error {
	return fmt.Errorf("ubjson: offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *ubjParser) need(n int) error {
	if n < 0 || len(p.b)-p.pos < n {
		return p.errf("truncated input: need %d more bytes, have %d", n, len(p.b)-p.pos)
	}
	return nil
}

func (p *ubjParser) marker() (byte, error) {
	for {
		if err := p.need(1); err != nil {
			return 0, err
		}
		c := p.b[p.pos]
		p.pos++
		if c != 'N' {
			return c, nil
		}
	}
}

// payloadSize is the fixed payload size of a scalar type, or -1.
func payloadSize(t byte) int {
	switch t {
	case 'Z', 'T', 'F':
		return 0
	case 'i', 'U', 'C':
		return 1
	case 'I':
		return 2
	case 'l', 'd':
		return 4
	case 'L', 'D':
		return 8
	}
	return -1
}

// integer reads an integer of type t.
func (p *ubjParser) integer(t byte) (int64, error) {
	n := payloadSize(t)
	if n <= 0 || t == 'd' || t == 'D' || t == 'C' {
		return 0, p.errf("expected an integer type, got %q", t)
	}
	if err := p.need(n); err != nil {
		return 0, err
	}
	b := p.b[p.pos : p.pos+n]
	p.pos += n
	switch t {
	case 'i':
		return int64(int8(b[0])), nil
	case 'U':
		return int64(b[0]), nil
	case 'I':
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case 'l':
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	default:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
}

// length reads a length (an integer with its own marker) and checks it
// against the bytes left when each element needs at least minSize bytes.
func (p *ubjParser) length(minSize int) (int, error) {
	t, err := p.marker()
	if err != nil {
		return 0, err
	}
	n, err := p.integer(t)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, p.errf("negative length %d", n)
	}
	if minSize < 1 {
		minSize = 1 // even zero-size elements are bounded by the input size
	}
	if n > int64(len(p.b)-p.pos)/int64(minSize) {
		return 0, p.errf("length %d exceeds the %d bytes left", n, len(p.b)-p.pos)
	}
	return int(n), nil
}

func (p *ubjParser) rawString() (string, error) {
	n, err := p.length(1)
	if err != nil {
		return "", err
	}
	s := p.b[p.pos : p.pos+n]
	p.pos += n
	if !utf8.Valid(s) {
		return "", p.errf("string is not valid UTF-8")
	}
	return string(s), nil
}

func (p *ubjParser) value(depth int) (value, error) {
	t, err := p.marker()
	if err != nil {
		return value{}, err
	}
	return p.typed(t, depth)
}

// typed reads a value whose type marker t has already been read.
func (p *ubjParser) typed(t byte, depth int) (value, error) {
	switch t {
	case 'Z':
		return value{kind: kNull}, nil
	case 'T':
		return value{kind: kBool, num: 1, f32: 1}, nil
	case 'F':
		return value{kind: kBool}, nil
	case 'i', 'U', 'I', 'l', 'L':
		n, err := p.integer(t)
		if err != nil {
			return value{}, err
		}
		return numValue(float64(n), float32(n)), nil
	case 'd':
		if err := p.need(4); err != nil {
			return value{}, err
		}
		f := math.Float32frombits(binary.BigEndian.Uint32(p.b[p.pos:]))
		p.pos += 4
		return numValue(float64(f), f), nil
	case 'D':
		if err := p.need(8); err != nil {
			return value{}, err
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(p.b[p.pos:]))
		p.pos += 8
		return numValue(f, float32(f)), nil
	case 'C':
		if err := p.need(1); err != nil {
			return value{}, err
		}
		c := p.b[p.pos]
		p.pos++
		return value{kind: kString, str: string(rune(c))}, nil
	case 'S':
		s, err := p.rawString()
		if err != nil {
			return value{}, err
		}
		return value{kind: kString, str: s}, nil
	case 'H':
		s, err := p.rawString()
		if err != nil {
			return value{}, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return value{}, p.errf("bad high-precision number %q", s)
		}
		f32, _ := strconv.ParseFloat(s, 32)
		return numValue(f, float32(f32)), nil
	case '[', '{':
		if depth >= maxDepth {
			return value{}, p.errf("nesting deeper than %d", maxDepth)
		}
		return p.container(t == '{', depth+1)
	}
	return value{}, p.errf("unknown type marker %q", t)
}

func (p *ubjParser) container(isObj bool, depth int) (value, error) {
	elemType := byte(0)
	count := -1
	if p.pos < len(p.b) && p.b[p.pos] == '$' {
		p.pos++
		if err := p.need(1); err != nil {
			return value{}, err
		}
		elemType = p.b[p.pos]
		p.pos++
		if elemType == 'N' || (payloadSize(elemType) < 0 && elemType != 'S' && elemType != 'H' && elemType != '[' && elemType != '{') {
			return value{}, p.errf("bad container element type %q", elemType)
		}
		if p.pos >= len(p.b) || p.b[p.pos] != '#' {
			return value{}, p.errf("container type '$' without count '#'")
		}
	}
	if p.pos < len(p.b) && p.b[p.pos] == '#' {
		p.pos++
		minSize := 1
		if elemType != 0 {
			minSize = payloadSize(elemType)
		}
		if isObj {
			minSize++ // every key needs at least a length byte
		}
		n, err := p.length(minSize)
		if err != nil {
			return value{}, err
		}
		if elemType != 0 && payloadSize(elemType) == 0 {
			if n > p.free {
				return value{}, p.errf("typed container of %d %q elements exceeds the budget of %d", n, elemType, p.free)
			}
			p.free -= n
		}
		count = n
	}
	if !isObj && count >= 0 && elemType != 0 && payloadSize(elemType) > 0 && elemType != 'C' {
		return p.typedNumbers(elemType, count)
	}

	var keys []string
	var elems []value
	for i := 0; count < 0 || i < count; i++ {
		if count < 0 {
			// Unsized container: look for the end marker (skipping no-ops).
			for p.pos < len(p.b) && p.b[p.pos] == 'N' {
				p.pos++
			}
			if err := p.need(1); err != nil {
				return value{}, err
			}
			if (isObj && p.b[p.pos] == '}') || (!isObj && p.b[p.pos] == ']') {
				p.pos++
				break
			}
		}
		if isObj {
			k, err := p.rawString()
			if err != nil {
				return value{}, fmt.Errorf("object key: %w", err)
			}
			keys = append(keys, k)
		}
		var e value
		var err error
		if elemType != 0 {
			e, err = p.typed(elemType, depth)
		} else {
			e, err = p.value(depth)
		}
		if err != nil {
			return value{}, err
		}
		if err := p.countValue(); err != nil {
			return value{}, err
		}
		elems = append(elems, e)
	}
	if isObj {
		return value{kind: kObject, keys: keys, elems: elems}, nil
	}
	return finishArray(elems), nil
}

// typedNumbers reads count fixed-size numbers of type t (bounds already checked).
func (p *ubjParser) typedNumbers(t byte, count int) (value, error) {
	size := payloadSize(t)
	if err := p.need(count * size); err != nil {
		return value{}, err
	}
	if count == 0 {
		return value{kind: kArray}, nil
	}
	v := value{kind: kNumArray, nums: make([]float64, count), nums2: make([]float32, count)}
	b := p.b[p.pos : p.pos+count*size]
	p.pos += count * size
	for i := 0; i < count; i++ {
		e := b[i*size : (i+1)*size]
		var f float64
		var f32 float32
		switch t {
		case 'd':
			f32 = math.Float32frombits(binary.BigEndian.Uint32(e))
			f = float64(f32)
		case 'D':
			f = math.Float64frombits(binary.BigEndian.Uint64(e))
			f32 = float32(f)
		default:
			var n int64
			switch t {
			case 'i':
				n = int64(int8(e[0]))
			case 'U':
				n = int64(e[0])
			case 'I':
				n = int64(int16(binary.BigEndian.Uint16(e)))
			case 'l':
				n = int64(int32(binary.BigEndian.Uint32(e)))
			case 'L':
				n = int64(binary.BigEndian.Uint64(e))
			}
			f, f32 = float64(n), float32(n)
		}
		v.nums[i] = f
		v.nums2[i] = f32
	}
	return v, nil
}
