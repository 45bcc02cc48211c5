package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/plugins"
)

// convert's help lists every option of every built-in importer, from its
// spec: KEY=VALUES (default) and the doc.
func TestConvertHelpListsOptions(t *testing.T) {
	code, stdout, stderr := runCmd("convert", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	n := 0
	for _, imp := range builtin.Importers() {
		d := imp.Describe()
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(d.Name) + `:`).MatchString(stdout) {
			t.Errorf("help lacks the options of %s", d.Name)
		}
		for _, o := range d.Options {
			n++
			line := "    " + o.Name + "=" + o.Synopsis()
			if !strings.Contains(stdout, line) || !strings.Contains(stdout, o.Doc) {
				t.Errorf("help lacks %q (%s)", line, o.Doc)
			}
		}
	}
	if n < 25 || !strings.Contains(stdout, "    opset=13..23 (default 21)") || !strings.Contains(stdout, "    layout=nhwc|nchw (default nhwc)") {
		t.Errorf("%d options; help:\n%s", n, stdout)
	}
}

// `formats --json` carries each option's whole spec: kind, default,
// values, range.
func TestFormatsJSONOptionSpecs(t *testing.T) {
	code, stdout, stderr := runCmd("formats", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var formats []plugins.Format
	if err := json.Unmarshal([]byte(stdout), &formats); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range formats {
		for _, o := range f.Options {
			switch {
			case f.Format == "tflite" && o.Name == "opset":
				found++
				if o.Kind != "int" || o.Default != "21" || o.Min == nil || *o.Min != 13 || o.Max == nil || *o.Max != 23 {
					t.Errorf("tflite opset: %+v", o)
				}
			case f.Format == "tflite" && o.Name == "int8_kernels":
				found++
				if o.Kind != "enum" || strings.Join(o.Values, ",") != "xnnpack,reference" || o.Default != "xnnpack" {
					t.Errorf("tflite int8_kernels: %+v", o)
				}
			case f.Format == "torchscript" && o.Name == "shapes":
				found++
				if o.Kind != "list" || o.Doc == "" {
					t.Errorf("torchscript shapes: %+v", o)
				}
			}
		}
	}
	if found != 3 {
		t.Errorf("found %d of the 3 options checked in %s", found, stdout)
	}
}
