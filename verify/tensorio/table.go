package tensorio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// Limits of a table read by ReadTable.
const (
	MaxTableBytes = 256 << 20
	MaxTableRows  = 1 << 22
	MaxTableCols  = 1 << 16
)

// IsTable reports whether path names a CSV or TSV table (by extension).
func IsTable(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv":
		return true
	}
	return false
}

// ReadTableFile reads a CSV (.csv) or TSV (.tsv) file of numbers as one
// [rows, cols] tensor of type dt (float32, float64, int32 or int64) named
// name. A first row that is not all numbers is a header and skipped;
// empty cells and "nan"/"NA" are NaN (floats only). want, when > 0, is
// the number of columns the model's input has.
func ReadTableFile(path, name string, dt canonical.DataType, want int64) (*canonical.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	defer func() { _ = f.Close() }()
	sep := ','
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		sep = '\t'
	}
	t, err := ReadTable(io.LimitReader(f, MaxTableBytes+1), sep, name, dt, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadTable reads a table of numbers separated by sep (see ReadTableFile).
func ReadTable(r io.Reader, sep rune, name string, dt canonical.DataType, want int64) (*canonical.Tensor, error) {
	switch dt {
	case canonical.Float, canonical.Double, canonical.Int32, canonical.Int64:
	default:
		return nil, fmt.Errorf("input %q is %s: a table feeds float32, float64, int32 or int64 inputs", name, canonical.ElemTypeName(dt))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var vals []float64
	cols, rows, line, read := -1, 0, 0, 0
	for sc.Scan() {
		line++
		read += len(sc.Bytes()) + 1
		if read > MaxTableBytes {
			return nil, fmt.Errorf("more than %d bytes", MaxTableBytes)
		}
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		cells := strings.Split(text, string(sep))
		if len(cells) > MaxTableCols {
			return nil, fmt.Errorf("line %d: %d columns, more than %d", line, len(cells), MaxTableCols)
		}
		row := make([]float64, len(cells))
		numeric := true
		for i, c := range cells {
			c = strings.Trim(strings.TrimSpace(c), `"`)
			switch strings.ToLower(c) {
			case "", "nan", "na", "null":
				row[i] = math.NaN()
				continue
			}
			x, err := strconv.ParseFloat(c, 64)
			if err != nil {
				numeric = false
				break
			}
			row[i] = x
		}
		if !numeric {
			if rows == 0 && cols < 0 {
				cols = len(cells) // a header: it fixes the width
				continue
			}
			return nil, fmt.Errorf("line %d: not a number in %q", line, text)
		}
		if cols < 0 {
			cols = len(cells)
		}
		if len(cells) != cols {
			return nil, fmt.Errorf("line %d: %d columns, the table has %d", line, len(cells), cols)
		}
		rows++
		if rows > MaxTableRows {
			return nil, fmt.Errorf("more than %d rows", MaxTableRows)
		}
		vals = append(vals, row...)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, errors.New("no rows of numbers")
	}
	if want > 0 && int64(cols) != want {
		return nil, fmt.Errorf("%d columns, input %q takes %d", cols, name, want)
	}
	var raw []byte
	le := binary.LittleEndian
	for _, x := range vals {
		switch dt {
		case canonical.Float:
			raw = le.AppendUint32(raw, math.Float32bits(float32(x)))
		case canonical.Double:
			raw = le.AppendUint64(raw, math.Float64bits(x))
		default:
			if x != math.Trunc(x) || math.IsNaN(x) {
				return nil, fmt.Errorf("%v is not a whole number for the %s input %q", x, canonical.ElemTypeName(dt), name)
			}
			if dt == canonical.Int32 {
				if x < math.MinInt32 || x > math.MaxInt32 {
					return nil, fmt.Errorf("%v is out of the int32 range of input %q", x, name)
				}
				raw = le.AppendUint32(raw, uint32(int32(x)))
			} else {
				if x < -(1<<63) || x >= 1<<63 {
					return nil, fmt.Errorf("%v is out of the int64 range of input %q", x, name)
				}
				raw = le.AppendUint64(raw, uint64(int64(x)))
			}
		}
	}
	return canonical.NewTensor(name, dt, []int64{int64(rows), int64(cols)}, raw), nil
}
