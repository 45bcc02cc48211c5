package pipeline

import (
	"reflect"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/verify"
)

func TestParseDims(t *testing.T) {
	got, err := ParseDims([]string{"batch=4", "x:0=2"})
	if err != nil || !reflect.DeepEqual(got, map[string]int64{"batch": 4, "x:0": 2}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"batch":    `--dim "batch": want NAME=N`,
		"=3":       `--dim "=3": want NAME=N`,
		"batch=-1": `--dim "batch=-1": "-1" is not a non-negative integer`,
		"batch=x":  `--dim "batch=x": "x" is not a non-negative integer`,
	} {
		if _, err := ParseDims([]string{in}); err == nil || err.Error() != want {
			t.Errorf("ParseDims(%q) = %v, want %s", in, err, want)
		}
	}
}

func TestParseRanges(t *testing.T) {
	if got, err := ParseRanges(nil); got != nil || err != nil {
		t.Fatalf("no ranges: %v, %v", got, err)
	}
	got, err := ParseRanges([]string{"0, 255", "audio=-1,1"})
	want := map[string]verify.Range{"*": {Lo: 0, Hi: 255}, "audio": {Lo: -1, Hi: 1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, in := range []string{"1", "2,1", "=0,1", "a=x,1"} {
		want := `--input-range "` + in + `": want LO,HI or NAME=LO,HI with LO <= HI`
		if _, err := ParseRanges([]string{in}); err == nil || err.Error() != want {
			t.Errorf("ParseRanges(%q) = %v, want %s", in, err, want)
		}
	}
}

func TestParseImportOptions(t *testing.T) {
	got, err := ParseImportOptions([]string{"keep_nhwc=true", "a=b=c"})
	if err != nil || !reflect.DeepEqual(got, importers.Options{"keep_nhwc": "true", "a": "b=c"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseImportOptions([]string{"novalue"}); err == nil || err.Error() != `--option "novalue": want KEY=VALUE` {
		t.Errorf("got %v", err)
	}
}
