package importers

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/options"
)

type testOpts struct {
	N    int
	B    bool
	S, E string
	L    []string
	Seen []string
}

func testSet() OptionSet[testOpts] {
	return OptionSet[testOpts]{Name: "fmt", Init: func() testOpts { return testOpts{S: "init"} }, Options: []Option[testOpts]{
		options.Int("n", "3", "a number", func(o *testOpts) *int { return &o.N }).Range(1, 9),
		options.Bool("b", "false", "a flag", func(o *testOpts) *bool { return &o.B }),
		options.String("s", "", "a text", func(o *testOpts) *string { return &o.S }),
		options.Enum("e", "up", "a direction", []string{"up", "down"}, func(o *testOpts) *string { return &o.E }),
		{Spec: OptionSpec{Name: "l", Kind: KindList, Doc: "items"}, Set: func(o *testOpts, v string) error {
			o.L = strings.Split(v, ",")
			return nil
		}},
	}}
}

// Parse: every kind, the values normalized (an enum as its spec spells
// it), Init as the start.
func TestOptionSetParse(t *testing.T) {
	got, err := testSet().Parse(map[string]string{"n": "7", "b": "1", "e": " DOWN ", "l": "a,b"})
	want := testOpts{N: 7, B: true, S: "init", E: "down", L: []string{"a", "b"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, want)
	}
	if got, err := testSet().Parse(nil); err != nil || !reflect.DeepEqual(got, testOpts{S: "init"}) {
		t.Errorf("Parse(nil) = %+v, %v", got, err)
	}
}

// An unknown option names itself, the importer and the known options (the
// first in sorted order); a bad value names the option and the kind.
func TestOptionSetErrors(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		key  string
		msg  string
	}{
		{map[string]string{"zz": "1", "yy": "2"}, "yy", `fmt importer: unknown option "yy" (known: n, b, s, e, l)`},
		{map[string]string{"n": "x"}, "n", `fmt importer: option n="x": want an int from 1 to 9`},
		{map[string]string{"n": "10"}, "n", `fmt importer: option n="10": 10 is out of range: want an int from 1 to 9`},
		{map[string]string{"b": "maybe"}, "b", `fmt importer: option b="maybe": want a bool (true or false)`},
		{map[string]string{"e": "left"}, "e", `fmt importer: option e="left": want one of up, down`},
	} {
		_, err := testSet().Parse(c.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || err.Error() != c.msg || !reflect.DeepEqual(oe.Known, []string{"n", "b", "s", "e", "l"}) {
			t.Errorf("Parse(%v) = %v, want %q", c.opts, err, c.msg)
		}
	}
	_, err := testSet().Parse(map[string]string{"n": "x"})
	var ne *strconv.NumError
	var ve *ValueError
	if !errors.As(err, &ne) || !errors.As(err, &ve) || ve.Kind != KindInt {
		t.Errorf("a bad int: %v, want a *ValueError wrapping the *strconv.NumError", err)
	}
	set := OptionSet[testOpts]{Name: "x-export", Exporter: true}
	if _, err := set.Parse(map[string]string{"a": "1"}); err == nil || err.Error() != `x-export: unknown option "a" (known: none)` {
		t.Errorf("exporter: %v", err)
	}
}

// A parser's own check and error type; an option's own error for a value
// its spec refuses.
func TestOptionThenAndInvalid(t *testing.T) {
	mine := errors.New("mine")
	e := options.Enum("e", "", "", []string{"a"}, func(o *testOpts) *string { return &o.E })
	e.Invalid = func(string, error) error { return mine }
	set := OptionSet[testOpts]{Name: "f", Options: []Option[testOpts]{e,
		options.String("s", "", "", func(o *testOpts) *string { return &o.S }).Then(func(o *testOpts, v string) error {
			if v == "" {
				return errors.New("empty")
			}
			o.Seen = append(o.Seen, v)
			return nil
		})}}
	if _, err := set.Parse(map[string]string{"e": "b"}); !errors.Is(err, mine) {
		t.Errorf("Invalid: %v", err)
	}
	if _, err := set.Parse(map[string]string{"s": ""}); err == nil || !strings.Contains(err.Error(), `option s="": empty`) {
		t.Errorf("Then: %v", err)
	}
	if o, err := set.Parse(map[string]string{"s": "v"}); err != nil || o.S != "v" || len(o.Seen) != 1 {
		t.Errorf("Then: %+v %v", o, err)
	}
}

// CheckOptions checks as data what Parse checks, without the parsers.
func TestCheckOptions(t *testing.T) {
	d := Description{Name: "fmt", Options: testSet().Specs()}
	if err := CheckOptions(d, Options{"n": "4", "e": "Up", "l": "anything"}); err != nil {
		t.Errorf("valid options: %v", err)
	}
	for _, opts := range []Options{{"zz": "1"}, {"n": "0"}, {"b": "2"}, {"e": ""}} {
		var oe *OptionError
		if err := CheckOptions(d, opts); !errors.As(err, &oe) || oe.Importer != "fmt" {
			t.Errorf("CheckOptions(%v) = %v, want an *OptionError", opts, err)
		}
	}
	// An importer that declares no options decides itself.
	if err := CheckOptions(Description{Name: "x"}, Options{"k": "v"}); err != nil {
		t.Errorf("no specs: %v", err)
	}
}

func TestSynopsis(t *testing.T) {
	specs := testSet().Specs()
	var got []string
	for _, s := range specs {
		got = append(got, s.Synopsis())
	}
	want := []string{"1..9 (default 3)", "true|false (default false)", "TEXT", "up|down (default up)", "LIST"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Synopsis = %q, want %q", got, want)
	}
}

// FuzzOptionSetParse: any key and value parse or fail with an
// *OptionError, never a panic, and the host's check as data agrees with
// the parser (testSet's parsers refuse nothing the specs accept).
func FuzzOptionSetParse(f *testing.F) {
	for _, s := range [][2]string{{"n", "7"}, {"n", "-1"}, {"b", "T"}, {"e", " Down"}, {"l", ","}, {"zz", ""}, {"n", "99999999999999999999"}} {
		f.Add(s[0], s[1])
	}
	d := Description{Name: "fmt", Options: testSet().Specs()}
	f.Fuzz(func(t *testing.T, k, v string) {
		opts := Options{k: v}
		_, err := testSet().Parse(opts)
		var oe *OptionError
		if err != nil && (!errors.As(err, &oe) || oe.Key != k) {
			t.Fatalf("Parse(%q=%q) = %v, want an *OptionError for it", k, v, err)
		}
		if cerr := CheckOptions(d, opts); (cerr == nil) != (err == nil) {
			t.Fatalf("%q=%q: CheckOptions %v, Parse %v", k, v, cerr, err)
		}
	})
}
