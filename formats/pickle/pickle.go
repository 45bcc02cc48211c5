// Package pickle reads Python pickles (protocols 0 to 5) as data, without
// executing anything they contain.
//
// Load interprets the pickle opcodes and builds an inert tree of Values.
// A module-level name (GLOBAL, STACK_GLOBAL, INST, OBJ) is resolved only
// when the caller's Options.Allow accepts it, and then only to a *Global,
// which is a name; REDUCE, NEWOBJ, NEWOBJ_EX and BUILD call nothing, they
// record an *Object. Persistent ids (PERSID, BINPERSID) are refused unless
// the caller's Options.PersistentLoad turns them into values; the
// extension registry and out-of-band buffers are refused.
//
// Protocols 0 and 1 (no PROTO opcode) use the text opcodes too: STRING
// (a quoted Python 2 str) and UNICODE (raw-unicode-escape) as well as
// INT, LONG, FLOAT, GET, PUT, GLOBAL, INST and OBJ. Python 2 strs
// (STRING, BINSTRING, SHORT_BINSTRING) decode as latin-1, as numpy asks
// of Python 3's unpickler for them (encoding="latin1"): each byte one
// rune, so no byte is lost.
//
// Hostile input is an error, never a panic, a hang or a huge allocation:
// nesting depth, memo size and the marks are bounded, every declared
// length is checked against the bytes that remain before anything is
// allocated, and the total allocation is bounded by a multiple of the
// input size. Bytes values alias the input.
package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Defaults of Options.
const (
	DefaultMaxDepth = 1000
	DefaultMaxMemo  = 1 << 22
)

// Options configure Load.
type Options struct {
	// Allow decides whether the name module.name may be loaded: nil
	// accepts it; an error refuses it (Load returns a *RefusedError
	// wrapping it). A nil Allow refuses every name.
	Allow func(module, name string) error
	// AfterBuild, if set, is called after every BUILD whose target is an
	// *Object; it may read raw bytes that follow in the stream (joblib
	// writes numpy array data there) and return the value that replaces
	// the object on the stack, or obj itself.
	AfterBuild func(d *Decoder, obj *Object) (Value, error)
	// MaxDepth bounds the nesting of containers and marks
	// (DefaultMaxDepth if 0).
	MaxDepth int
	// MaxMemo bounds the memo entries (DefaultMaxMemo if 0).
	MaxMemo int
	// MaxAlloc bounds the bytes the values may take, estimated (default:
	// 64 times the input size plus 1 MiB).
	MaxAlloc int64
	// PersistentLoad, if set, turns the persistent id of a PERSID (a
	// string) or BINPERSID (any value) into the value that replaces it,
	// as pickle's Unpickler.persistent_load does; it must call nothing
	// the file names. Nil refuses persistent ids.
	PersistentLoad func(pid Value) (Value, error)
}

// RefusedError is a name the allow-list refused (or an opcode refused as
// unsafe, with Module empty).
type RefusedError struct {
	Module, Name string
	Offset       int
	Err          error
}

func (e *RefusedError) Error() string {
	if e.Module == "" {
		return fmt.Sprintf("refusing %s at byte %d: %v", e.Name, e.Offset, e.Err)
	}
	return fmt.Sprintf("refusing to load %s.%s: %v", e.Module, e.Name, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// FormatError is a malformed or truncated pickle.
type FormatError struct {
	Offset int
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("malformed pickle at byte %d: %s", e.Offset, e.Msg)
}

// LimitError is a pickle that exceeds a limit (depth, memo, allocation).
type LimitError struct {
	Offset int
	What   string
	Limit  int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("pickle exceeds the limit on %s (%d) at byte %d", e.What, e.Limit, e.Offset)
}

// Load reads one pickle from the start of data (up to its STOP opcode)
// and returns its value and the number of bytes read.
func Load(data []byte, opts Options) (Value, int, error) {
	d := newDecoder(data, opts)
	v, err := d.run()
	return v, d.pos, err
}

// Decoder is the state of Load, given to Options.AfterBuild to read what
// follows a BUILD in the stream.
type Decoder struct {
	data  []byte
	pos   int
	opts  Options
	stack []Value
	marks []int
	memo  map[int]Value
	alloc int64
	limit int64
	depth int // nesting of nested Load calls
}

func newDecoder(data []byte, opts Options) *Decoder {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxMemo <= 0 {
		opts.MaxMemo = DefaultMaxMemo
	}
	limit := opts.MaxAlloc
	if limit <= 0 {
		limit = 64*int64(len(data)) + 1<<20
	}
	return &Decoder{data: data, opts: opts, memo: map[int]Value{}, limit: limit}
}

// Pos is the offset of the next byte to read.
func (d *Decoder) Pos() int { return d.pos }

// Remaining is the number of bytes left.
func (d *Decoder) Remaining() int { return len(d.data) - d.pos }

// Read returns the next n bytes (aliasing the input), or a *FormatError
// when fewer remain.
func (d *Decoder) Read(n int64) ([]byte, error) {
	if n < 0 || n > int64(len(d.data)-d.pos) {
		return nil, d.errf("need %d bytes, %d remain (truncated?)", n, len(d.data)-d.pos)
	}
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// LoadNested reads a whole pickle that starts at the current offset (its
// own PROTO to STOP, as joblib writes object arrays), with the same
// options and allocation budget.
func (d *Decoder) LoadNested() (Value, error) {
	if d.depth >= 4 {
		return nil, &LimitError{Offset: d.pos, What: "nested pickles", Limit: 4}
	}
	n := &Decoder{data: d.data, pos: d.pos, opts: d.opts, memo: map[int]Value{}, alloc: d.alloc, limit: d.limit, depth: d.depth + 1}
	v, err := n.run()
	d.pos, d.alloc = n.pos, n.alloc
	return v, err
}

func (d *Decoder) errf(format string, args ...any) error {
	return &FormatError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

// charge accounts n bytes of allocation against the budget.
func (d *Decoder) charge(n int64) error {
	d.alloc += n
	if d.alloc > d.limit {
		return &LimitError{Offset: d.pos, What: "allocation in bytes", Limit: d.limit}
	}
	return nil
}

func (d *Decoder) push(v Value) error {
	if len(d.stack) >= 1<<24 {
		return &LimitError{Offset: d.pos, What: "stack size", Limit: 1 << 24}
	}
	if err := d.charge(16); err != nil {
		return err
	}
	d.stack = append(d.stack, v)
	return nil
}

func (d *Decoder) pop() (Value, error) {
	base := 0
	if len(d.marks) > 0 {
		base = d.marks[len(d.marks)-1]
	}
	if len(d.stack) <= base {
		return nil, d.errf("stack underflow")
	}
	v := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return v, nil
}

func (d *Decoder) top() (Value, error) {
	base := 0
	if len(d.marks) > 0 {
		base = d.marks[len(d.marks)-1]
	}
	if len(d.stack) <= base {
		return nil, d.errf("stack underflow")
	}
	return d.stack[len(d.stack)-1], nil
}

// popMark pops the items above the last mark and the mark.
func (d *Decoder) popMark() ([]Value, error) {
	if len(d.marks) == 0 {
		return nil, d.errf("no mark on the stack")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := make([]Value, len(d.stack)-m)
	copy(items, d.stack[m:])
	d.stack = d.stack[:m]
	return items, nil
}

// depthOf is the nesting depth recorded for a container, 0 for a scalar.
func depthOf(v Value) int {
	switch v := v.(type) {
	case *Tuple:
		return v.depth
	case *List:
		return v.depth
	case *Dict:
		return v.depth
	case *Set:
		return v.depth
	case *Object:
		return v.depth
	}
	return 0
}

// nest raises *dp to hold children vs, checking the depth limit.
func (d *Decoder) nest(dp *int, vs ...Value) error {
	for _, v := range vs {
		if c := depthOf(v) + 1; c > *dp {
			*dp = c
		}
	}
	if *dp > d.opts.MaxDepth {
		return &LimitError{Offset: d.pos, What: "nesting depth", Limit: int64(d.opts.MaxDepth)}
	}
	return nil
}

func (d *Decoder) byte1() (byte, error) {
	b, err := d.Read(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *Decoder) uint(n int) (uint64, error) {
	b, err := d.Read(int64(n))
	if err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

// line reads up to and excluding the next '\n' (text opcodes), at most
// 4096 bytes.
func (d *Decoder) line() (string, error) { return d.lineN(4096) }

// textLine reads the line of a STRING or UNICODE opcode, which may be as
// long as the input (protocol 0 writes array data that way).
func (d *Decoder) textLine() (string, error) { return d.lineN(len(d.data)) }

// lineN reads up to and excluding the next '\n', at most max bytes.
func (d *Decoder) lineN(max int) (string, error) {
	end := len(d.data)
	if end-d.pos > max {
		end = d.pos + max
	}
	for i := d.pos; i < end; i++ {
		if d.data[i] == '\n' {
			s := string(d.data[d.pos:i])
			d.pos = i + 1
			return s, nil
		}
	}
	return "", d.errf("unterminated text line")
}

// sized reads a length of width bytes, then that many bytes.
func (d *Decoder) sized(width int) ([]byte, error) {
	n, err := d.uint(width)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.data)-d.pos) {
		return nil, d.errf("a length field claims %d bytes, %d remain", n, len(d.data)-d.pos)
	}
	return d.Read(int64(n))
}

func (d *Decoder) str(b []byte) (string, error) {
	if err := d.charge(int64(len(b))); err != nil {
		return "", err
	}
	return string(b), nil
}

func (d *Decoder) global(module, name string, at int) (Value, error) {
	if module == "" || name == "" || len(module) > 256 || len(name) > 256 {
		return nil, &FormatError{Offset: at, Msg: "bad global name"}
	}
	if d.opts.Allow == nil {
		return nil, &RefusedError{Module: module, Name: name, Offset: at, Err: errors.New("no names are allowed")}
	}
	if err := d.opts.Allow(module, name); err != nil {
		return nil, &RefusedError{Module: module, Name: name, Offset: at, Err: err}
	}
	return &Global{Module: module, Name: name}, nil
}

func (d *Decoder) newObject(op string, callable Value, args []Value) (*Object, error) {
	if _, ok := callable.(*Global); !ok {
		return nil, d.errf("%s of %s, which is not a name the allow-list accepted", op, Describe(callable))
	}
	o := &Object{Op: op, Callable: callable, Args: args}
	if err := d.charge(96 + 16*int64(len(args))); err != nil {
		return nil, err
	}
	if err := d.nest(&o.depth, args...); err != nil {
		return nil, err
	}
	return o, nil
}

func (d *Decoder) tuple(items []Value) (Value, error) {
	t := &Tuple{Items: items}
	if err := d.charge(48 + 16*int64(len(items))); err != nil {
		return nil, err
	}
	if err := d.nest(&t.depth, items...); err != nil {
		return nil, err
	}
	return t, nil
}

func (d *Decoder) setItems(target Value, items []Value) error {
	if len(items)%2 != 0 {
		return d.errf("SETITEMS with an odd number of items")
	}
	if err := d.charge(32 * int64(len(items))); err != nil {
		return err
	}
	switch t := target.(type) {
	case *Dict:
		for i := 0; i < len(items); i += 2 {
			if !hashable(items[i]) {
				return d.errf("dict key %s is not hashable", Describe(items[i]))
			}
			t.Items = append(t.Items, DictItem{Key: items[i], Value: items[i+1]})
		}
		return d.nest(&t.depth, items...)
	case *Object:
		for i := 0; i < len(items); i += 2 {
			t.DictItems = append(t.DictItems, DictItem{Key: items[i], Value: items[i+1]})
		}
		return d.nest(&t.depth, items...)
	}
	return d.errf("SETITEM on %T", target)
}

func hashable(v Value) bool {
	switch v.(type) {
	case *List, *Dict, *Set:
		return false
	}
	return true
}

func (d *Decoder) appendItems(target Value, items []Value) error {
	if err := d.charge(16 * int64(len(items))); err != nil {
		return err
	}
	switch t := target.(type) {
	case *List:
		t.Items = append(t.Items, items...)
		return d.nest(&t.depth, items...)
	case *Object:
		t.ListItems = append(t.ListItems, items...)
		return d.nest(&t.depth, items...)
	}
	return d.errf("APPEND on %T", target)
}

// run interprets opcodes until STOP.
func (d *Decoder) run() (Value, error) {
	start := d.pos
	if len(d.data)-d.pos < 2 {
		return nil, d.errf("not a pickle (too short)")
	}
	for {
		at := d.pos
		op, err := d.byte1()
		if err != nil {
			return nil, d.errf("truncated: the pickle ends without STOP")
		}
		switch op {
		case 0x80: // PROTO
			v, err := d.byte1()
			if err != nil {
				return nil, err
			}
			if v > 5 {
				return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("pickle protocol %d not supported (0 to 5 are)", v)}
			}
			if at != start {
				return nil, &FormatError{Offset: at, Msg: "PROTO after the start"}
			}
		case 0x95: // FRAME: the frame length is only a hint for buffering
			n, err := d.uint(8)
			if err != nil {
				return nil, err
			}
			if n > uint64(len(d.data)-d.pos) {
				return nil, d.errf("a frame claims %d bytes, %d remain", n, len(d.data)-d.pos)
			}
		case '.': // STOP
			v, err := d.pop()
			if err != nil {
				return nil, err
			}
			if len(d.marks) != 0 || len(d.stack) != 0 {
				return nil, &FormatError{Offset: at, Msg: "STOP with items left on the stack"}
			}
			return v, nil
		case '(': // MARK
			if len(d.marks) >= d.opts.MaxDepth {
				return nil, &LimitError{Offset: at, What: "nesting depth (marks)", Limit: int64(d.opts.MaxDepth)}
			}
			d.marks = append(d.marks, len(d.stack))
		case '0': // POP
			if len(d.marks) > 0 && d.marks[len(d.marks)-1] == len(d.stack) {
				d.marks = d.marks[:len(d.marks)-1]
			} else if _, err := d.pop(); err != nil {
				return nil, err
			}
		case '1': // POP_MARK
			if _, err := d.popMark(); err != nil {
				return nil, err
			}
		case '2': // DUP
			v, err := d.top()
			if err != nil {
				return nil, err
			}
			err = d.push(v)
			if err != nil {
				return nil, err
			}
		case 'N':
			err = d.push(nil)
		case 0x88:
			err = d.push(true)
		case 0x89:
			err = d.push(false)
		case 'K': // BININT1
			var v uint64
			if v, err = d.uint(1); err == nil {
				err = d.push(int64(v))
			}
		case 'M': // BININT2
			var v uint64
			if v, err = d.uint(2); err == nil {
				err = d.push(int64(v))
			}
		case 'J': // BININT
			var v uint64
			if v, err = d.uint(4); err == nil {
				err = d.push(int64(int32(uint32(v))))
			}
		case 0x8a, 0x8b: // LONG1, LONG4
			err = d.opLong1(op, at)
		case 'I', 'L': // INT, LONG (text)
			var s string
			if s, err = d.line(); err == nil {
				err = d.textInt(s)
			}
		case 'F': // FLOAT (text)
			err = d.opFloat(op, at)
		case 'G': // BINFLOAT, big-endian
			var b []byte
			if b, err = d.Read(8); err == nil {
				err = d.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
			}
		case 'X', 0x8c, 0x8d: // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
			width := map[byte]int{'X': 4, 0x8c: 1, 0x8d: 8}[op]
			var b []byte
			if b, err = d.sized(width); err == nil {
				var s string
				if s, err = d.str(b); err == nil {
					err = d.push(s)
				}
			}
		case 'B', 'C', 0x8e, 0x96: // BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
			width := map[byte]int{'B': 4, 'C': 1, 0x8e: 8, 0x96: 8}[op]
			var b []byte
			if b, err = d.sized(width); err == nil {
				err = d.push(Bytes(b))
			}
		case 'T', 'U': // BINSTRING, SHORT_BINSTRING (Python 2 str): latin-1
			err = d.opBinstring(op, at)
		case 'S': // STRING: a quoted Python 2 str (repr), latin-1
			err = d.opString(op, at)
		case 'V': // UNICODE: raw-unicode-escape text
			err = d.opUnicode(op, at)
		case 0x98: // READONLY_BUFFER: no-op for an in-band buffer
			_, err = d.top()
		case 0x97: // NEXT_BUFFER
			return nil, &RefusedError{Name: "NEXT_BUFFER", Offset: at, Err: errors.New("out-of-band buffers are not part of the file")}
		case 'P', 'Q': // PERSID, BINPERSID
			err = d.opPersid(op, at)
		case 0x82, 0x83, 0x84: // EXT1, EXT2, EXT4
			return nil, &RefusedError{Name: "an extension code", Offset: at, Err: errors.New("the copyreg extension registry is not read")}
		case ')':
			var v Value
			if v, err = d.tuple(nil); err == nil {
				err = d.push(v)
			}
		case 0x85, 0x86, 0x87: // TUPLE1..3
			err = d.opTuple1(op, at)
		case 't': // TUPLE
			var items []Value
			if items, err = d.popMark(); err == nil {
				var v Value
				if v, err = d.tuple(items); err == nil {
					err = d.push(v)
				}
			}
		case ']':
			if err = d.charge(48); err == nil {
				err = d.push(&List{})
			}
		case 'l': // LIST
			var items []Value
			if items, err = d.popMark(); err == nil {
				l := &List{}
				if err = d.appendItems(l, items); err == nil {
					err = d.push(l)
				}
			}
		case '}':
			if err = d.charge(48); err == nil {
				err = d.push(&Dict{})
			}
		case 'd': // DICT
			var items []Value
			if items, err = d.popMark(); err == nil {
				m := &Dict{}
				if err = d.setItems(m, items); err == nil {
					err = d.push(m)
				}
			}
		case 0x8f: // EMPTY_SET
			if err = d.charge(48); err == nil {
				err = d.push(&Set{})
			}
		case 0x91: // FROZENSET
			var items []Value
			if items, err = d.popMark(); err == nil {
				s := &Set{Frozen: true}
				err = d.addItems(s, items)
				if err == nil {
					err = d.push(s)
				}
			}
		case 0x90: // ADDITEMS
			err = d.opAdditems(op, at)
		case 'a': // APPEND
			var v, t Value
			if v, err = d.pop(); err == nil {
				if t, err = d.top(); err == nil {
					err = d.appendItems(t, []Value{v})
				}
			}
		case 'e': // APPENDS
			var items []Value
			if items, err = d.popMark(); err == nil {
				var t Value
				if t, err = d.top(); err == nil {
					err = d.appendItems(t, items)
				}
			}
		case 's': // SETITEM
			var k, v, t Value
			if v, err = d.pop(); err == nil {
				if k, err = d.pop(); err == nil {
					if t, err = d.top(); err == nil {
						err = d.setItems(t, []Value{k, v})
					}
				}
			}
		case 'u': // SETITEMS
			var items []Value
			if items, err = d.popMark(); err == nil {
				var t Value
				if t, err = d.top(); err == nil {
					err = d.setItems(t, items)
				}
			}
		case 'p': // PUT (text index)
			var s string
			if s, err = d.line(); err == nil {
				n, perr := strconv.Atoi(s)
				if perr != nil || n < 0 {
					return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("bad PUT index %q", s)}
				}
				err = d.put(n)
			}
		case 'q', 'r': // BINPUT, LONG_BINPUT
			err = d.opBinput(op, at)
		case 0x94: // MEMOIZE
			err = d.put(len(d.memo))
		case 'g': // GET (text index)
			var s string
			if s, err = d.line(); err == nil {
				n, perr := strconv.Atoi(s)
				if perr != nil {
					return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("bad GET index %q", s)}
				}
				err = d.get(n)
			}
		case 'h', 'j': // BINGET, LONG_BINGET
			err = d.opBinget(op, at)
		case 'c': // GLOBAL
			err = d.opGlobal(op, at)
		case 0x93: // STACK_GLOBAL
			err = d.opStackGlobal(op, at)
		case 'i': // INST module\nname\n, arguments above the mark
			err = d.opInst(op, at)
		case 'o': // OBJ: class and arguments above the mark
			err = d.opObj(op, at)
		case 'R', 0x81: // REDUCE, NEWOBJ
			err = d.opReduce(op, at)
		case 0x92: // NEWOBJ_EX
			err = d.opNewobjEx(op, at)
		case 'b': // BUILD
			err = d.opBuild(op, at)
		default:
			return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("unknown or unsupported opcode 0x%02x", op)}
		}
		if err != nil {
			return nil, err
		}
	}
}

// opLong1 runs LONG1, LONG4 (0x8a, 0x8b).
func (d *Decoder) opLong1(op byte, at int) error {
	var err error
	var b []byte
	if op == 0x8a {
		b, err = d.sized(1)
	} else {
		b, err = d.sized(4)
	}
	if err == nil {
		var v Value
		if v, err = d.long(b); err == nil {
			err = d.push(v)
		}
	}
	return err
}

// opFloat runs FLOAT (text) ('F').
func (d *Decoder) opFloat(op byte, at int) error {
	var err error
	var s string
	if s, err = d.line(); err == nil {
		var f float64
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			err = d.errf("bad FLOAT %q", s)
		} else {
			err = d.push(f)
		}
	}
	return err
}

// opBinstring runs BINSTRING, SHORT_BINSTRING (Python 2 str): latin-1 ('T',
// 'U').
func (d *Decoder) opBinstring(op byte, at int) error {
	var err error
	width := 4
	if op == 'U' {
		width = 1
	}
	var b []byte
	if b, err = d.sized(width); err == nil {
		var s string
		if s, err = d.latin1(b); err == nil {
			err = d.push(s)
		}
	}
	return err
}

// opString runs STRING: a quoted Python 2 str (repr), latin-1 ('S').
func (d *Decoder) opString(op byte, at int) error {
	var err error
	var s string
	if s, err = d.textLine(); err == nil {
		var b []byte
		if b, err = unquote(s); err != nil {
			return &FormatError{Offset: at, Msg: fmt.Sprintf("bad STRING %.40q: %v", s, err)}
		}
		if s, err = d.latin1(b); err == nil {
			err = d.push(s)
		}
	}
	return err
}

// opUnicode runs UNICODE: raw-unicode-escape text ('V').
func (d *Decoder) opUnicode(op byte, at int) error {
	var err error
	var s string
	if s, err = d.textLine(); err == nil {
		var u string
		if u, err = rawUnicodeEscape(s); err != nil {
			return &FormatError{Offset: at, Msg: fmt.Sprintf("bad UNICODE %.40q: %v", s, err)}
		}
		if err = d.charge(int64(len(u))); err == nil {
			err = d.push(u)
		}
	}
	return err
}

// opPersid runs PERSID, BINPERSID ('P', 'Q').
func (d *Decoder) opPersid(op byte, at int) error {
	var err error
	if d.opts.PersistentLoad == nil {
		return &RefusedError{Name: "a persistent id", Offset: at, Err: errors.New("persistent ids need the writer's own loader")}
	}
	var pid Value
	if op == 'P' {
		var s string
		if s, err = d.line(); err == nil {
			pid, err = d.latin1([]byte(s))
		}
	} else {
		pid, err = d.pop()
	}
	if err == nil {
		var v Value
		if v, err = d.opts.PersistentLoad(pid); err != nil {
			return &RefusedError{Name: "persistent id " + Describe(pid), Offset: at, Err: err}
		}
		err = d.push(v)
	}
	return err
}

// opTuple1 runs TUPLE1..3 (0x85, 0x86, 0x87).
func (d *Decoder) opTuple1(op byte, at int) error {
	var err error
	n := int(op - 0x84)
	items := make([]Value, n)
	for i := n - 1; i >= 0 && err == nil; i-- {
		items[i], err = d.pop()
	}
	if err == nil {
		var v Value
		if v, err = d.tuple(items); err == nil {
			err = d.push(v)
		}
	}
	return err
}

// opAdditems runs ADDITEMS (0x90).
func (d *Decoder) opAdditems(op byte, at int) error {
	var err error
	var items []Value
	if items, err = d.popMark(); err == nil {
		var t Value
		if t, err = d.top(); err == nil {
			s, ok := t.(*Set)
			if !ok {
				return &FormatError{Offset: at, Msg: fmt.Sprintf("ADDITEMS on %T", t)}
			}
			err = d.addItems(s, items)
		}
	}
	return err
}

// memoIndex reads the memo index of a BINPUT/BINGET (one byte, when short)
// or of their LONG_ forms (four bytes).
func (d *Decoder) memoIndex(short bool) (int, error) {
	size := 4
	if short {
		size = 1
	}
	n, err := d.uint(size)
	return int(n), err
}

// opBinput runs BINPUT, LONG_BINPUT ('q', 'r').
func (d *Decoder) opBinput(op byte, at int) error {
	n, err := d.memoIndex(op == 'q')
	if err != nil {
		return err
	}
	return d.put(n)
}

// opBinget runs BINGET, LONG_BINGET ('h', 'j').
func (d *Decoder) opBinget(op byte, at int) error {
	n, err := d.memoIndex(op == 'h')
	if err != nil {
		return err
	}
	return d.get(n)
}

// opGlobal runs GLOBAL ('c').
func (d *Decoder) opGlobal(op byte, at int) error {
	g, err := d.lineGlobal(at)
	if err == nil {
		err = d.push(g)
	}
	return err
}

// lineGlobal reads "module\nname\n" and resolves the global they name
// (GLOBAL, INST).
func (d *Decoder) lineGlobal(at int) (Value, error) {
	mod, err := d.line()
	if err != nil {
		return nil, err
	}
	name, err := d.line()
	if err != nil {
		return nil, err
	}
	return d.global(mod, name, at)
}

// opStackGlobal runs STACK_GLOBAL (0x93).
func (d *Decoder) opStackGlobal(op byte, at int) error {
	var err error
	var mv, nv Value
	if nv, err = d.pop(); err == nil {
		if mv, err = d.pop(); err == nil {
			mod, ok1 := mv.(string)
			name, ok2 := nv.(string)
			if !ok1 || !ok2 {
				return &FormatError{Offset: at, Msg: "STACK_GLOBAL of non-strings"}
			}
			var g Value
			if g, err = d.global(mod, name, at); err == nil {
				err = d.push(g)
			}
		}
	}
	return err
}

// opInst runs INST module\nname\n, arguments above the mark ('i').
func (d *Decoder) opInst(op byte, at int) error {
	g, err := d.lineGlobal(at)
	if err != nil {
		return err
	}
	args, err := d.popMark()
	if err != nil {
		return err
	}
	o, err := d.newObject("INST", g, args)
	if err != nil {
		return err
	}
	return d.push(o)
}

// opObj runs OBJ: class and arguments above the mark ('o').
func (d *Decoder) opObj(op byte, at int) error {
	var err error
	var items []Value
	if items, err = d.popMark(); err == nil {
		if len(items) == 0 {
			return &FormatError{Offset: at, Msg: "OBJ without a class"}
		}
		var o *Object
		if o, err = d.newObject("OBJ", items[0], items[1:]); err == nil {
			err = d.push(o)
		}
	}
	return err
}

// opReduce runs REDUCE, NEWOBJ ('R', 0x81).
func (d *Decoder) opReduce(op byte, at int) error {
	var err error
	var args, fn Value
	if args, err = d.pop(); err == nil {
		if fn, err = d.pop(); err == nil {
			t, ok := args.(*Tuple)
			if !ok {
				return &FormatError{Offset: at, Msg: "REDUCE/NEWOBJ arguments are not a tuple"}
			}
			name := "REDUCE"
			if op == 0x81 {
				name = "NEWOBJ"
			}
			var o *Object
			if o, err = d.newObject(name, fn, t.Items); err == nil {
				err = d.push(o)
			}
		}
	}
	return err
}

// opNewobjEx runs NEWOBJ_EX (0x92).
func (d *Decoder) opNewobjEx(op byte, at int) error {
	var err error
	var kw, args, cls Value
	if kw, err = d.pop(); err == nil {
		if args, err = d.pop(); err == nil {
			if cls, err = d.pop(); err == nil {
				t, ok1 := args.(*Tuple)
				k, ok2 := kw.(*Dict)
				if !ok1 || !ok2 {
					return &FormatError{Offset: at, Msg: "NEWOBJ_EX arguments are not a tuple and a dict"}
				}
				var o *Object
				if o, err = d.newObject("NEWOBJ_EX", cls, t.Items); err == nil {
					o.Kwargs = k
					if err = d.nest(&o.depth, k); err == nil {
						err = d.push(o)
					}
				}
			}
		}
	}
	return err
}

// opBuild runs BUILD ('b').
func (d *Decoder) opBuild(op byte, at int) error {
	var err error
	var state, t Value
	if state, err = d.pop(); err == nil {
		if t, err = d.pop(); err == nil {
			o, ok := t.(*Object)
			if !ok {
				return &FormatError{Offset: at, Msg: fmt.Sprintf("BUILD on %s, not an object", Describe(t))}
			}
			if o.Built {
				return &FormatError{Offset: at, Msg: "BUILD twice on one object"}
			}
			o.State, o.Built = state, true
			if err = d.nest(&o.depth, state); err == nil {
				var v Value = o
				if d.opts.AfterBuild != nil {
					v, err = d.opts.AfterBuild(d, o)
				}
				if err == nil {
					err = d.push(v)
				}
			}
		}
	}
	return err
}

// latin1 decodes b as latin-1 (each byte one rune), within the budget.
func (d *Decoder) latin1(b []byte) (string, error) {
	if err := d.charge(2 * int64(len(b))); err != nil {
		return "", err
	}
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r), nil
}

// unquote decodes the repr of a Python 2 str as the STRING opcode holds
// it: in single or double quotes, with Python's backslash escapes.
func unquote(s string) ([]byte, error) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return nil, errors.New("not a quoted string")
	}
	s = s[1 : len(s)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return nil, errors.New("trailing backslash")
		}
		switch e := s[i]; e {
		case '\\', '\'', '"':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'a':
			out = append(out, 7)
		case 'b':
			out = append(out, 8)
		case 'f':
			out = append(out, 12)
		case 'v':
			out = append(out, 11)
		case '\n': // line continuation
		case 'x':
			if i+3 > len(s) {
				return nil, errors.New("truncated \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, errors.New("bad \\x escape")
			}
			out = append(out, byte(v))
			i += 2
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i:j], 8, 16)
				out = append(out, byte(v))
				i = j - 1
				continue
			}
			out = append(out, '\\', e) // Python keeps unknown escapes
		}
	}
	return out, nil
}

// rawUnicodeEscape decodes Python's raw-unicode-escape: bytes are latin-1
// code points except \uXXXX and \UXXXXXXXX.
func rawUnicodeEscape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			if i+2+n > len(s) {
				return "", errors.New("truncated \\u escape")
			}
			v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil || v > 0x10FFFF {
				return "", errors.New("bad \\u escape")
			}
			b.WriteRune(rune(v))
			i += 1 + n
			continue
		}
		b.WriteRune(rune(c))
	}
	return b.String(), nil
}

func (d *Decoder) addItems(s *Set, items []Value) error {
	for _, it := range items {
		if !hashable(it) {
			return d.errf("set item %s is not hashable", Describe(it))
		}
	}
	if err := d.charge(16 * int64(len(items))); err != nil {
		return err
	}
	s.Items = append(s.Items, items...)
	return d.nest(&s.depth, items...)
}

func (d *Decoder) put(n int) error {
	if n < 0 {
		return d.errf("negative memo index")
	}
	if _, ok := d.memo[n]; !ok && len(d.memo) >= d.opts.MaxMemo {
		return &LimitError{Offset: d.pos, What: "memo entries", Limit: int64(d.opts.MaxMemo)}
	}
	v, err := d.top()
	if err != nil {
		return err
	}
	if err := d.charge(48); err != nil {
		return err
	}
	d.memo[n] = v
	return nil
}

func (d *Decoder) get(n int) error {
	v, ok := d.memo[n]
	if !ok {
		return d.errf("memo index %d was never stored", n)
	}
	return d.push(v)
}

// long decodes a little-endian two's complement integer.
func (d *Decoder) long(b []byte) (Value, error) {
	if len(b) == 0 {
		return int64(0), nil
	}
	if len(b) <= 8 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		shift := uint(64 - 8*len(b))
		return int64(v<<shift) >> shift, nil
	}
	if err := d.charge(int64(len(b))); err != nil {
		return nil, err
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	v := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v, nil
}

func (d *Decoder) textInt(s string) error {
	s = strings.TrimSuffix(strings.TrimSpace(s), "L")
	switch s {
	case "00":
		return d.push(false)
	case "01":
		return d.push(true)
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return d.push(v)
	}
	if len(s) > 1000 {
		return d.errf("text integer of %d digits", len(s))
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return d.errf("bad integer %q", s)
	}
	return d.push(v)
}
