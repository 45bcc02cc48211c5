package pickle

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Value is one inert value of a pickle: nil (None), bool, int64, *big.Int
// (an integer beyond 64 bits), float64, string, Bytes, or one of the
// containers *Tuple, *List, *Dict, *Set, or a *Global (a name the caller
// allowed) or an *Object (a recorded construction). Nothing in a Value can
// run: a *Global is a name, an *Object the arguments of a call that was
// never made.
type Value = any

// Bytes is a bytes or bytearray value. It aliases the input of Load (no
// copy); callers must not modify it.
type Bytes []byte

// Tuple is a Python tuple.
type Tuple struct {
	Items []Value
	depth int
}

// List is a Python list.
type List struct {
	Items []Value
	depth int
}

// DictItem is one key and value of a Dict, in insertion order.
type DictItem struct {
	Key, Value Value
}

// Dict is a Python dict; Items keep insertion order (a later SETITEM of an
// equal key replaces the value, as Python does, for string and int keys).
type Dict struct {
	Items []DictItem
	depth int
}

// Set is a Python set or frozenset.
type Set struct {
	Items  []Value
	Frozen bool
	depth  int
}

// Global is a module-level name (a class or function) that the caller's
// allow-list accepted. It is only a name.
type Global struct {
	Module, Name string
}

// String is "module.name".
func (g *Global) String() string { return g.Module + "." + g.Name }

// Object records the construction of an object, without making it: the
// callable (a *Global, normally) and its arguments (REDUCE, NEWOBJ,
// NEWOBJ_EX, INST, OBJ), the state BUILD would have set, and the items
// APPEND(S)/SETITEM(S)/ADDITEMS would have added.
type Object struct {
	// Op is the opcode that made it: "REDUCE", "NEWOBJ", "NEWOBJ_EX",
	// "INST" or "OBJ".
	Op string
	// Callable is what would have been called: for NEWOBJ, NEWOBJ_EX,
	// INST and OBJ the class, for REDUCE the callable.
	Callable Value
	Args     []Value
	// Kwargs are NEWOBJ_EX's keyword arguments, or nil.
	Kwargs *Dict
	// State is BUILD's argument (nil when there was no BUILD): usually a
	// *Dict of attributes, or a *Tuple (dict, slots) or any value a
	// __setstate__ takes.
	State Value
	// Built reports whether BUILD was applied.
	Built bool
	// ListItems and DictItems are what APPEND(S) and SETITEM(S) added.
	ListItems []Value
	DictItems []DictItem
	depth     int
}

// Class returns the callable as a *Global, or nil.
func (o *Object) Class() *Global {
	g, _ := o.Callable.(*Global)
	return g
}

// Get returns the value of the string key k.
func (d *Dict) Get(k string) (Value, bool) {
	if d == nil {
		return nil, false
	}
	for i := len(d.Items) - 1; i >= 0; i-- {
		if s, ok := d.Items[i].Key.(string); ok && s == k {
			return d.Items[i].Value, true
		}
	}
	return nil, false
}

// Keys returns the string keys of d, in order.
func (d *Dict) Keys() []string {
	var out []string
	for _, it := range d.Items {
		if s, ok := it.Key.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Attrs returns the attribute dict of an object: its State when that is a
// *Dict, or the first element of a (dict, slots) tuple. Nil if there is
// none.
func (o *Object) Attrs() *Dict {
	switch s := o.State.(type) {
	case *Dict:
		return s
	case *Tuple:
		if len(s.Items) > 0 {
			d, _ := s.Items[0].(*Dict)
			return d
		}
	}
	return nil
}

// Describe renders v for messages, bounded: at most depth levels and a few
// items per container, so that a value with shared or cyclic references
// (which a pickle can make) prints in bounded time.
func Describe(v Value) string {
	var b strings.Builder
	describe(&b, v, 3)
	return b.String()
}

func describe(b *strings.Builder, v Value, depth int) {
	if b.Len() > 400 {
		b.WriteString("…")
		return
	}
	const items = 6
	seq := func(open, end string, xs []Value) {
		b.WriteString(open)
		if depth <= 0 && len(xs) > 0 {
			b.WriteString("…")
		} else {
			for i, x := range xs {
				if i == items {
					fmt.Fprintf(b, ", … %d more", len(xs)-items)
					break
				}
				if i > 0 {
					b.WriteString(", ")
				}
				describe(b, x, depth-1)
			}
		}
		b.WriteString(end)
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if v {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case *big.Int:
		s := v.String()
		if len(s) > 40 {
			s = s[:20] + "…"
		}
		b.WriteString(s)
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		if len(v) > 60 {
			v = v[:60] + "…"
		}
		b.WriteString(strconv.Quote(v))
	case Bytes:
		fmt.Fprintf(b, "<%d bytes>", len(v))
	case *Tuple:
		seq("(", ")", v.Items)
	case *List:
		seq("[", "]", v.Items)
	case *Set:
		seq("{", "}", v.Items)
	case *Dict:
		b.WriteString("{")
		for i, it := range v.Items {
			if i == items {
				fmt.Fprintf(b, ", … %d more", len(v.Items)-items)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			if depth <= 0 {
				b.WriteString("…")
				break
			}
			describe(b, it.Key, depth-1)
			b.WriteString(": ")
			describe(b, it.Value, depth-1)
		}
		b.WriteString("}")
	case *Global:
		b.WriteString(v.String())
	case *Object:
		if g := v.Class(); g != nil {
			b.WriteString(g.String())
		} else {
			b.WriteString("<object>")
		}
		seq("(", ")", v.Args)
	default:
		fmt.Fprintf(b, "<%T>", v)
	}
}
