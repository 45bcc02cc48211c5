// Package options holds declarative options: a spec of each option as data
// (name, kind, default, values, range, doc) that listings and a host that
// only validates read, and the parser beside it that fills a T. Importers
// and exporters declare their options with it once.
package options

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of value an option takes.
type Kind string

// The option kinds.
const (
	KindBool   Kind = "bool"   // true, false, 1, 0 (strconv.ParseBool)
	KindInt    Kind = "int"    // a decimal int, within Min and Max when set
	KindFloat  Kind = "float"  // a decimal number
	KindString Kind = "string" // any text
	KindEnum   Kind = "enum"   // one of Values (case and spaces ignored)
	KindList   Kind = "list"   // several items in one value (Doc says how they are separated)
)

// Spec describes one option an importer takes, as data: everything
// a listing (`onnxconv formats --json`, the -O help) and a host that only
// validates (the plugin host, before it starts a process) need. The
// plugin protocol carries it whole. The parser stays with the importer, in
// its Set.
type Spec struct {
	Name string `json:"name"`
	// Kind is the kind of value; "" is read as KindString.
	Kind Kind `json:"kind,omitempty"`
	// Default is the value used when the option is not given, as text
	// ("" when the importer decides from the file).
	Default string `json:"default,omitempty"`
	// Values are the values of a KindEnum option.
	Values []string `json:"values,omitempty"`
	// Min and Max bound a KindInt option when set.
	Min *int `json:"min,omitempty"`
	Max *int `json:"max,omitempty"`
	// Doc says what the option does.
	Doc string `json:"doc,omitempty"`
}

// Want describes the values the option takes ("an int from 13 to 23",
// "one of nhwc, nchw").
func (s Spec) Want() string {
	switch s.Kind {
	case KindBool:
		return "a bool (true or false)"
	case KindInt:
		switch {
		case s.Min != nil && s.Max != nil:
			return fmt.Sprintf("an int from %d to %d", *s.Min, *s.Max)
		case s.Min != nil:
			return fmt.Sprintf("an int of at least %d", *s.Min)
		case s.Max != nil:
			return fmt.Sprintf("an int of at most %d", *s.Max)
		}
		return "an int"
	case KindFloat:
		return "a number"
	case KindEnum:
		return "one of " + strings.Join(s.Values, ", ")
	case KindList:
		return "a list"
	}
	return "a string"
}

// Synopsis is the option's values and default in a few characters, for
// help texts: "13..23 (default 21)", "true|false (default false)",
// "xnnpack|reference", "LIST".
func (s Spec) Synopsis() string {
	var v string
	switch s.Kind {
	case KindBool:
		v = "true|false"
	case KindInt:
		switch {
		case s.Min != nil && s.Max != nil:
			v = fmt.Sprintf("%d..%d", *s.Min, *s.Max)
		case s.Min != nil:
			v = fmt.Sprintf("%d..", *s.Min)
		case s.Max != nil:
			v = fmt.Sprintf("..%d", *s.Max)
		default:
			v = "INT"
		}
	case KindFloat:
		v = "NUMBER"
	case KindEnum:
		v = strings.Join(s.Values, "|")
	case KindList:
		v = "LIST"
	default:
		v = "TEXT"
	}
	if s.Default != "" {
		v += " (default " + s.Default + ")"
	}
	return v
}

// Check checks v against the kind, values and range of the spec and
// returns it normalized (an enum value as Values spells it). A value that
// does not fit is a *ValueError.
func (s Spec) Check(v string) (string, error) {
	bad := func(err error) error { return &ValueError{Want: s.Want(), Kind: s.Kind, Err: err} }
	switch s.Kind {
	case KindBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return v, bad(err)
		}
	case KindInt:
		n, err := strconv.Atoi(v)
		if err != nil {
			return v, bad(err)
		}
		if (s.Min != nil && n < *s.Min) || (s.Max != nil && n > *s.Max) {
			return v, bad(fmt.Errorf("%d is out of range", n))
		}
	case KindFloat:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return v, bad(err)
		}
	case KindEnum:
		t := strings.TrimSpace(v)
		for _, e := range s.Values {
			if strings.EqualFold(t, e) {
				return e, nil
			}
		}
		return v, bad(nil)
	}
	return v, nil
}

// ValueError is an option value that does not fit its spec: Want says
// what the option takes; Err is the parse error, if any (a
// *strconv.NumError for a bool or number).
type ValueError struct {
	Want string
	Kind Kind
	Err  error
}

func (e *ValueError) Error() string {
	if e.Err != nil && e.Kind == KindInt {
		var ne *strconv.NumError
		if !errors.As(e.Err, &ne) { // out of range: say the value
			return fmt.Sprintf("%v: want %s", e.Err, e.Want)
		}
	}
	return "want " + e.Want
}

func (e *ValueError) Unwrap() error { return e.Err }

// Option is one option of an importer whose parsed options are a T: its
// spec (data) and the parser that sets a value into a T. The value Set
// gets has passed the spec's Check.
type Option[T any] struct {
	Spec
	// Set parses v into o; an error is reported as a bad value of the
	// option.
	Set func(o *T, v string) error
	// Invalid, when set, makes the error for a value that fails the
	// spec's Check (an importer's own error type); nil: the *ValueError.
	Invalid func(v string, err error) error
}

// Set is every option of one importer, declared once: Specs goes into
// its Description, Parse reads an Options.
type Set[T any] struct {
	// Name is the importer's name (or the exporter's, with Exporter).
	Name string
	// Exporter marks an exporter's options (Error.Exporter).
	Exporter bool
	Options  []Option[T]
	// Init, when set, gives the options before any is parsed (else the
	// zero T).
	Init func() T
}

// Specs returns the specs of the options, in order.
func (s Set[T]) Specs() []Spec {
	out := make([]Spec, len(s.Options))
	for i, o := range s.Options {
		out[i] = o.Spec
		out[i].Values = slices.Clone(o.Values)
	}
	return out
}

// Parse reads m, keys in sorted order (so the first error is the same on
// every run). An unknown key, a value that does not fit its spec or one
// its parser refuses is an *Error.
func (s Set[T]) Parse(m map[string]string) (T, error) {
	var o T
	if s.Init != nil {
		o = s.Init()
	}
	known := Names(s.Specs())
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		bad := func(err error) error {
			return &Error{Importer: s.Name, Exporter: s.Exporter, Key: k, Value: v, Known: known, Err: err}
		}
		i := slices.IndexFunc(s.Options, func(op Option[T]) bool { return op.Name == k })
		if i < 0 {
			return o, bad(nil)
		}
		op := s.Options[i]
		nv, err := op.Check(v)
		if err != nil {
			if op.Invalid != nil {
				err = op.Invalid(v, err)
			}
			return o, bad(err)
		}
		if op.Set != nil {
			if err := op.Set(&o, nv); err != nil {
				return o, bad(err)
			}
		}
	}
	return o, nil
}

// Bool is a KindBool option stored in the field field returns.
func Bool[T any](name, def, doc string, field func(*T) *bool) Option[T] {
	return Option[T]{Spec: Spec{Name: name, Kind: KindBool, Default: def, Doc: doc},
		Set: func(o *T, v string) error {
			b, err := strconv.ParseBool(v)
			*field(o) = b
			return err
		}}
}

// Int is a KindInt option stored in the field field returns; bound it with
// Range or AtLeast.
func Int[T any](name, def, doc string, field func(*T) *int) Option[T] {
	return Option[T]{Spec: Spec{Name: name, Kind: KindInt, Default: def, Doc: doc},
		Set: func(o *T, v string) error {
			n, err := strconv.Atoi(v)
			*field(o) = n
			return err
		}}
}

// String is a KindString option stored in the field field returns.
func String[T any](name, def, doc string, field func(*T) *string) Option[T] {
	return Option[T]{Spec: Spec{Name: name, Kind: KindString, Default: def, Doc: doc},
		Set: func(o *T, v string) error { *field(o) = v; return nil }}
}

// Enum is a KindEnum option of values, stored (as values spells it) in the
// field field returns.
func Enum[T any](name, def, doc string, values []string, field func(*T) *string) Option[T] {
	return Option[T]{Spec: Spec{Name: name, Kind: KindEnum, Default: def, Values: values, Doc: doc},
		Set: func(o *T, v string) error { *field(o) = v; return nil }}
}

// Range bounds an int option to lo..hi.
func (o Option[T]) Range(lo, hi int) Option[T] {
	o.Min, o.Max = &lo, &hi
	return o
}

// AtLeast bounds an int option from below.
func (o Option[T]) AtLeast(lo int) Option[T] {
	o.Min = &lo
	return o
}

// Then runs check on the parsed options after Set (a check between
// options, or one the kind does not express).
func (o Option[T]) Then(check func(o *T, v string) error) Option[T] {
	set := o.Set
	o.Set = func(t *T, v string) error {
		if set != nil {
			if err := set(t, v); err != nil {
				return err
			}
		}
		return check(t, v)
	}
	return o
}

// Names returns the names of specs, in order (for Error.Known).
func Names(specs []Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// Error is an option an importer (or exporter) does not know, or a
// value it cannot parse.
type Error struct {
	// Importer names the importer (the exporter, with Exporter).
	Importer string
	// Exporter marks an exporter's option: the message names it alone.
	Exporter bool
	Key      string
	Value    string
	// Known lists the options the importer takes.
	Known []string
	// Err is the parse error of Value (nil for an unknown key), a
	// *ValueError when it does not fit the option's kind.
	Err error
}

func (e *Error) Error() string {
	who := e.Importer + " importer"
	if e.Exporter {
		who = e.Importer
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: option %s=%q: %v", who, e.Key, e.Value, e.Err)
	}
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("%s: unknown option %q (known: %s)", who, e.Key, known)
}

func (e *Error) Unwrap() error { return e.Err }
