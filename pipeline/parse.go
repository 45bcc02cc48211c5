package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/verify"
)

// ParseDims reads symbolic dim values as the command line's --dim gives
// them, NAME=N or INPUT:AXIS=N, into VerifyOptions.Dims. N must be a
// non-negative integer.
func ParseDims(dims []string) (map[string]int64, error) {
	m := map[string]int64{}
	for _, d := range dims {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--dim %q: want NAME=N", d)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--dim %q: %q is not a non-negative integer", d, v)
		}
		m[k] = n
	}
	return m, nil
}

// ParseRanges reads ranges of generated input values as the command
// line's --input-range gives them, LO,HI for every input ("*") or
// NAME=LO,HI, into VerifyOptions.Ranges. It returns nil for no ranges.
func ParseRanges(rs []string) (map[string]verify.Range, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	m := map[string]verify.Range{}
	for _, r := range rs {
		name, spec := "*", r
		if k, v, ok := strings.Cut(r, "="); ok {
			name, spec = k, v
		}
		lo, hi, ok := strings.Cut(spec, ",")
		a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || err1 != nil || err2 != nil || name == "" || !(a <= b) {
			return nil, fmt.Errorf("--input-range %q: want LO,HI or NAME=LO,HI with LO <= HI", r)
		}
		m[name] = verify.Range{Lo: a, Hi: b}
	}
	return m, nil
}

// ParseImportOptions reads importer options as the command line's -O
// gives them, KEY=VALUE, into Options.ImportOptions.
func ParseImportOptions(kvs []string) (importers.Options, error) {
	opts := importers.Options{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--option %q: want KEY=VALUE", kv)
		}
		opts[k] = v
	}
	return opts, nil
}
