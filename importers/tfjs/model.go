package tfjs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/importers"
)

// Limits on what a model.json may make the importer read.
const (
	// MaxModelJSON bounds model.json.
	MaxModelJSON = 256 << 20
	// MaxWeightBytes bounds the weight files together.
	MaxWeightBytes = 4 << 30
	// maxWeights bounds the manifest's entries.
	maxWeights = 1 << 20
	// maxJSONDepth bounds the nesting of model.json.
	maxJSONDepth = 256
)

// FormatError is a model.json that is not a well-formed TF.js model: it
// names the file and what is wrong.
type FormatError struct {
	Path   string
	Detail string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: not a valid TF.js model: %s", e.Path, e.Detail)
}

// modelJSON is the top of a TF.js model.json.
type modelJSON struct {
	Format              string          `json:"format"`
	GeneratedBy         string          `json:"generatedBy"`
	ConvertedBy         any             `json:"convertedBy"`
	ModelTopology       json.RawMessage `json:"modelTopology"`
	WeightsManifest     []weightGroup   `json:"weightsManifest"`
	Signature           json.RawMessage `json:"signature"`
	UserDefinedMetadata json.RawMessage `json:"userDefinedMetadata"`
	// ModelInitializer is a graph TF.js runs once at load (hash table
	// initialization).
	ModelInitializer json.RawMessage `json:"modelInitializer"`
}

type weightGroup struct {
	Paths   []string      `json:"paths"`
	Weights []weightEntry `json:"weights"`
}

type weightEntry struct {
	Name         string        `json:"name"`
	Shape        []json.Number `json:"shape"`
	DType        string        `json:"dtype"`
	Quantization *struct {
		DType         string   `json:"dtype"`
		Scale         *float64 `json:"scale"`
		Min           *float64 `json:"min"`
		OriginalDType string   `json:"original_dtype"`
	} `json:"quantization"`
}

// jsonDepth returns the maximum nesting of arrays and objects in data,
// without building anything (a guard before json.Unmarshal).
func jsonDepth(data []byte) int {
	depth, maxd := 0, 0
	inStr, esc := false, false
	for _, c := range data {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			maxd = max(maxd, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return maxd
}

func parseModel(path string, data []byte) (*modelJSON, error) {
	if d := jsonDepth(data); d > maxJSONDepth {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("JSON nested %d deep (more than %d)", d, maxJSONDepth)}
	}
	var m modelJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, &FormatError{Path: path, Detail: "model.json does not parse: " + err.Error()}
	}
	if len(m.ModelTopology) == 0 || string(m.ModelTopology) == "null" {
		return nil, &FormatError{Path: path, Detail: "no modelTopology"}
	}
	if len(m.WeightsManifest) > maxWeights {
		return nil, &FormatError{Path: path, Detail: "too many weight groups"}
	}
	return &m, nil
}

// elemBytes is the stored size of one element of a manifest dtype.
func elemBytes(dt string) (int64, canonical.DataType, error) {
	switch dt {
	case "float32":
		return 4, canonical.Float, nil
	case "int32":
		return 4, canonical.Int32, nil
	case "bool":
		return 1, canonical.Bool, nil
	case "float16":
		return 2, canonical.Float16, nil
	case "uint8":
		return 1, canonical.Uint8, nil
	case "uint16":
		return 2, canonical.Uint16, nil
	case "int8":
		return 1, canonical.Int8, nil
	case "int16":
		return 2, canonical.Int16, nil
	case "complex64":
		return 0, 0, errors.New("complex64 weights are not supported")
	case "string":
		return 0, 0, errors.New("string weights are not supported")
	}
	return 0, 0, fmt.Errorf("unknown weight dtype %q", dt)
}

// loadWeights reads every weight of the manifest, as float32 (quantized
// and float16 weights dequantized, as TF.js does when it loads them) or
// int32/bool. The weight files are read through fsys: regular files inside
// the model's folder only (no absolute path, "..", or symbolic link
// leaving it), each file once.
func loadWeights(path string, m *modelJSON) (map[string]*canonical.Tensor, error) {
	root, err := fsys.OpenRoot(filepath.Dir(path), nil)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := map[string]*canonical.Tensor{}
	var total int64
	listed := map[string]int{}
	for gi, g := range m.WeightsManifest {
		var buf []byte
		for _, p := range g.Paths {
			local, err := root.Local(p)
			if err != nil {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weights group %d: %v", gi, err)}
			}
			if prev, dup := listed[local]; dup {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weights group %d lists %q, which weights group %d lists already (each weight file holds its own bytes)", gi, p, prev)}
			}
			listed[local] = gi
			size, err := root.Stat(local)
			if err != nil {
				return nil, fmt.Errorf("%s: weights group %d: %w (the weight files must be beside model.json)", path, gi, err)
			}
			total += size
			if total > MaxWeightBytes {
				return nil, &importers.TooLargeError{Path: filepath.Join(root.Dir(), local), Size: total, Limit: MaxWeightBytes}
			}
			b, err := root.ReadFile(local, MaxWeightBytes)
			if err != nil {
				return nil, fmt.Errorf("%s: weights group %d: %w", path, gi, err)
			}
			buf = append(buf, b...)
		}
		off := int64(0)
		for _, w := range g.Weights {
			if len(out) >= maxWeights {
				return nil, &FormatError{Path: path, Detail: "too many weights"}
			}
			dims := make([]int64, len(w.Shape))
			n := int64(1)
			for i, d := range w.Shape {
				v, err := d.Int64()
				if err != nil || v < 0 || v > math.MaxInt32 {
					return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q: bad shape %v", w.Name, w.Shape)}
				}
				dims[i] = v
				if v != 0 && n > (1<<40)/v {
					return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q: shape %v is too large", w.Name, w.Shape)}
				}
				n *= v
			}
			stored := w.DType
			if w.Quantization != nil {
				stored = w.Quantization.DType
			}
			es, _, err := elemBytes(stored)
			if err != nil {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q: %v", w.Name, err)}
			}
			size := n * es
			if off+size > int64(len(buf)) {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q (%v %s) needs bytes %d..%d, the files of its group hold %d (truncated weight file, or a manifest that lies)",
					w.Name, dims, stored, off, off+size, len(buf))}
			}
			raw := buf[off : off+size]
			off += size
			t, err := decodeWeight(w, dims, raw)
			if err != nil {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q: %v", w.Name, err)}
			}
			if _, dup := out[w.Name]; dup {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("weight %q appears twice", w.Name)}
			}
			out[w.Name] = t
		}
	}
	return out, nil
}

func decodeWeight(w weightEntry, dims []int64, raw []byte) (*canonical.Tensor, error) {
	_, dt, err := elemBytes(w.DType)
	if err != nil {
		return nil, err
	}
	q := w.Quantization
	if q == nil {
		return canonical.NewTensor(w.Name, dt, dims, append([]byte{}, raw...)), nil
	}
	var vals []float64
	switch q.DType {
	case "float16":
		vals = make([]float64, len(raw)/2)
		for i := range vals {
			vals[i] = float64(canonical.Float16ToFloat32(binary.LittleEndian.Uint16(raw[2*i:])))
		}
	case "uint8", "uint16":
		if q.Scale == nil || q.Min == nil {
			return nil, fmt.Errorf("%s quantization without scale and min", q.DType)
		}
		es := 1
		if q.DType == "uint16" {
			es = 2
		}
		vals = make([]float64, len(raw)/es)
		for i := range vals {
			var u float64
			if es == 1 {
				u = float64(raw[i])
			} else {
				u = float64(binary.LittleEndian.Uint16(raw[2*i:]))
			}
			vals[i] = u*(*q.Scale) + *q.Min
		}
	default:
		return nil, fmt.Errorf("quantization dtype %q is not supported (uint8, uint16, float16)", q.DType)
	}
	switch dt {
	case canonical.Float:
		f := make([]float32, len(vals))
		for i, v := range vals {
			f[i] = float32(v)
		}
		return canonical.Float32Tensor(w.Name, dims, f), nil
	case canonical.Int32:
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(math.Round(v))))
		}
		return canonical.NewTensor(w.Name, dt, dims, b), nil
	}
	return nil, fmt.Errorf("quantized weights of dtype %s are not supported", w.DType)
}
