package sklearn

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// maxNpyHeader bounds an .npy header (numpy refuses more than 10,000
// bytes by default).
const maxNpyHeader = 1 << 16

// readNpy decodes an .npy file (versions 1 to 3) into an Array: the
// numeric kinds, bool, and structured dtypes of those (a Tree's node
// records), little-endian, C or Fortran order. Object arrays cannot be in
// an .npy file read without pickle, and are refused.
func readNpy(b []byte) (*Array, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not an .npy array (bad magic)")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf(".npy header truncated")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf(".npy format version %d.%d not supported", b[6], b[7])
	}
	if hlen > maxNpyHeader || hlen > len(b)-start {
		return nil, fmt.Errorf(".npy header of %d bytes in a %d-byte member", hlen, len(b))
	}
	p := &pyLit{s: string(b[start : start+hlen])}
	v, err := p.value(0)
	if err != nil {
		return nil, fmt.Errorf(".npy header: %w", err)
	}
	if p.skipSpace(); p.i != len(p.s) {
		return nil, fmt.Errorf(".npy header: trailing text at offset %d", p.i)
	}
	h, ok := v.(pyDict)
	if !ok {
		return nil, fmt.Errorf(".npy header is not a dict")
	}
	descr, ok1 := h.get("descr")
	fo, ok2 := h.get("fortran_order")
	sh, ok3 := h.get("shape")
	if !ok1 || !ok2 || !ok3 || len(h.keys) != 3 {
		return nil, fmt.Errorf(".npy header needs exactly descr, fortran_order and shape")
	}
	fortran, ok := fo.(bool)
	if !ok {
		return nil, fmt.Errorf(".npy fortran_order is not a bool")
	}
	st, ok := sh.([]any)
	if !ok || len(st) > 32 {
		return nil, fmt.Errorf(".npy shape is not a tuple")
	}
	shape := make([]int, len(st))
	total := int64(1)
	for i, d := range st {
		n, ok := d.(int64)
		if !ok || n < 0 || n > 1<<40 {
			return nil, fmt.Errorf(".npy shape %v: bad dimension", st)
		}
		shape[i] = int(n)
		if n != 0 && total > (1<<50)/n {
			return nil, fmt.Errorf(".npy shape %v is too large", st)
		}
		total *= n
	}
	dt, err := npyDescr(descr)
	if err != nil {
		return nil, err
	}
	return decodeRaw(b[start+hlen:], dt, shape, fortran)
}

// npyDescr reads an .npy descr: a type string ('<f8') or a list of
// (name, type) fields, where an empty name is padding.
func npyDescr(v any) (dtype, error) {
	switch d := v.(type) {
	case string:
		return simpleDtype(d)
	case []any:
		if len(d) == 0 || len(d) > maxFields {
			return dtype{}, fmt.Errorf(".npy structured dtype with %d fields", len(d))
		}
		dt := dtype{kind: 'V', order: '|'}
		off := 0
		for _, f := range d {
			t, ok := f.([]any)
			if !ok || len(t) != 2 {
				return dtype{}, fmt.Errorf(".npy structured dtype: field %v not supported (sub-arrays are not)", f)
			}
			name, ok1 := t[0].(string)
			ts, ok2 := t[1].(string)
			if !ok1 || !ok2 {
				return dtype{}, fmt.Errorf(".npy structured dtype: field %v", f)
			}
			if name == "" { // padding: '|V<n>'
				if !strings.HasPrefix(ts, "|V") {
					return dtype{}, fmt.Errorf(".npy structured dtype: unnamed field of type %q", ts)
				}
				n, err := strconv.Atoi(ts[2:])
				if err != nil || n < 0 || n > 1<<10 {
					return dtype{}, fmt.Errorf(".npy structured dtype: padding %q", ts)
				}
				off += n
				continue
			}
			fd, err := simpleDtype(ts)
			if err != nil {
				return dtype{}, fmt.Errorf(".npy structured dtype: field %q: %w", name, err)
			}
			if fd.kind == 'O' {
				return dtype{}, fmt.Errorf(".npy structured dtype: object field %q", name)
			}
			dt.fields = append(dt.fields, dtypeField{name: name, dt: fd, off: off})
			off += fd.size
		}
		if off == 0 {
			return dtype{}, fmt.Errorf(".npy structured dtype of no bytes")
		}
		dt.size = off
		return dt, nil
	}
	return dtype{}, fmt.Errorf(".npy descr %v not supported", v)
}

// simpleDtype reads a numpy type string such as '<f8' or '|b1'.
func simpleDtype(s string) (dtype, error) {
	if len(s) < 3 {
		return dtype{}, fmt.Errorf("numpy dtype %q not supported", s)
	}
	order := s[0]
	if order != '<' && order != '>' && order != '|' && order != '=' {
		return dtype{}, fmt.Errorf("numpy dtype %q not supported", s)
	}
	n, err := strconv.Atoi(s[2:])
	if err != nil {
		return dtype{}, fmt.Errorf("numpy dtype %q not supported", s)
	}
	dt := dtype{kind: s[1], size: n, order: order}
	switch {
	case dt.kind == 'f' && (n == 4 || n == 8):
	case (dt.kind == 'i' || dt.kind == 'u') && (n == 1 || n == 2 || n == 4 || n == 8):
	case dt.kind == 'b' && n == 1:
	default:
		return dtype{}, fmt.Errorf("numpy dtype %q not supported (float, int, uint and bool are)", s)
	}
	if order == '>' && n > 1 {
		return dtype{}, fmt.Errorf("big-endian numpy arrays are not supported")
	}
	return dt, nil
}

// pyDict is an ordered Python dict literal with string keys.
type pyDict struct {
	keys []string
	vals []any
}

func (d pyDict) get(k string) (any, bool) {
	for i, key := range d.keys {
		if key == k {
			return d.vals[i], true
		}
	}
	return nil, false
}

// pyLit parses the Python literals of an .npy header: dicts with string
// keys, tuples and lists (both as []any), strings, ints, True, False and
// None.
type pyLit struct {
	s string
	i int
}

func (p *pyLit) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyLit) errf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyLit) value(depth int) (any, error) {
	if depth > 8 {
		return nil, p.errf("nested too deeply")
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		var d pyDict
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, p.errf("dict key is not a string")
			}
			for _, seen := range d.keys {
				if seen == ks {
					return nil, p.errf("duplicate key %q", ks)
				}
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errf("expected ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.keys, d.vals = append(d.keys, ks), append(d.vals, v)
			if err := p.sep('}'); err != nil {
				return nil, err
			}
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		var out []any
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				if out == nil {
					out = []any{}
				}
				return out, nil
			}
			if len(out) >= 1<<10 {
				return nil, p.errf("too many items")
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			if err := p.sep(end); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		j := strings.IndexByte(p.s[p.i+1:], c)
		if j < 0 {
			return nil, p.errf("unterminated string")
		}
		s := p.s[p.i+1 : p.i+1+j]
		if strings.IndexByte(s, '\\') >= 0 {
			return nil, p.errf("escapes in strings are not supported")
		}
		p.i += j + 2
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, p.errf("bad integer %q", p.s[p.i:j])
		}
		p.i = j
		return n, nil
	}
	for _, w := range []struct {
		s string
		v any
	}{{"True", true}, {"False", false}, {"None", nil}} {
		if strings.HasPrefix(p.s[p.i:], w.s) {
			p.i += len(w.s)
			return w.v, nil
		}
	}
	return nil, p.errf("unexpected %q", p.s[p.i])
}

// sep reads a ',' or the closing end (left for the caller to read).
func (p *pyLit) sep(end byte) error {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return nil
	}
	if p.i < len(p.s) && p.s[p.i] == end {
		return nil
	}
	return p.errf("expected ',' or %q", end)
}
