// Package keras reads Keras model files (format "keras") into their model
// config and weights, for every role that needs them (importers/keras
// builds the ONNX graph from them; runtimes/tfjs writes them as a TF.js
// layers model):
//
//   - Keras 3 .keras files: a zip holding config.json (the model config),
//     metadata.json and model.weights.h5 (weights by position:
//     layers/NAME/vars/0, 1, ...), or the folder such a zip was unpacked
//     into, read through its config.json;
//   - Keras 2 full-model HDF5 files (.h5): a model_config attribute on the
//     root group and the weights in the model_weights group (by name, in the
//     order of each layer's weight_names attribute);
//   - Keras 2 architecture JSON (model.to_json()) with its weights .h5
//     (save_weights): the weights file is found beside the JSON
//     (NAME_weights.h5, NAME.h5, NAME.weights.h5) through fsys (a regular
//     file inside the JSON's folder only), or named by the caller.
//
// Files are detected by content (Detect), not by name. Reading is bounded:
// file and config sizes, zip entries and their inflation, JSON nesting and
// the weights of a layer all have limits. A layer class onnxconv does not
// map (QKeras, HGQ, a custom or Lambda layer) is a *CustomLayerError
// naming every such class. Nothing a file contains is executed.
package keras

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/formats/hdf5"
	"github.com/onnxconv/onnxconv/fsys"
)

// Kind is the kind of Keras file.
type Kind string

// The kinds of Keras files.
const (
	// KerasV3 is a Keras 3 .keras zip.
	KerasV3 Kind = "keras3"
	// FullH5 is a Keras 2 full-model HDF5 file.
	FullH5 Kind = "h5"
	// JSONWeights is a Keras 2 architecture JSON with a weights .h5.
	JSONWeights Kind = "json+h5"
)

// FormatError is a file that is not a well-formed Keras model: it names
// the file and what is wrong.
type FormatError struct {
	Path   string
	Detail string
	Err    error
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: not a valid Keras model: %s", e.Path, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// CustomLayerError is a model holding layers of classes that Keras does
// not define or onnxconv does not map (see Layers) (QKeras, HGQ, a custom
// or Lambda layer).
type CustomLayerError struct {
	Path string
	// Classes are the unsupported layer classes, in order of first use;
	// Layers the name of the first layer of each class.
	Classes []string
	Layers  []string
	// Library names the library the classes come from when known
	// ("QKeras", "HGQ"), else "".
	Library string
}

func (e *CustomLayerError) Error() string {
	var parts []string
	for i, c := range e.Classes {
		parts = append(parts, fmt.Sprintf("%s (layer %q)", c, e.Layers[i]))
	}
	lib := ""
	if e.Library != "" {
		lib = " from " + e.Library
	}
	return fmt.Sprintf("%s: the model uses custom layer class(es)%s that onnxconv cannot convert: %s; "+
		"give their ONNX definitions with -O custom=FILE.onnx (an ONNX file of functions named after the classes; docs/custom.md), "+
		"or rebuild the model with built-in Keras layers (for a quantized model, export the float model)",
		e.Path, lib, strings.Join(parts, ", "))
}

// Unwrap gives the classes as the one unsupported-op error shape
// (*unsupported.OpsError, format "keras"), so that callers classify a
// custom layer as they classify any op nothing maps (a reference runtime
// that cannot run it: not verified, said).
func (e *CustomLayerError) Unwrap() error {
	ue := &unsupported.OpsError{Format: "keras", File: e.Path,
		Hint: "give their ONNX definitions with -O custom=FILE.onnx (docs/custom.md)"}
	for i, c := range e.Classes {
		ue.Add(c, e.Layers[i], "custom layer class")
	}
	return ue
}

// Model is a Keras file read into its config and weights.
type Model struct {
	Path string
	Kind Kind
	// Config is the model config ({"class_name": ..., "config": ...}).
	Config map[string]any
	// KerasVersion is what the file says wrote it ("" if it does not say).
	KerasVersion string
	// Weights finds each layer's weights (by name for Keras 2, in Keras's
	// order for Keras 3).
	Weights Weights
	// WeightsPath is the weights .h5 read (the .keras or .h5 itself, or
	// the one beside an architecture JSON).
	WeightsPath string
	Warnings    []string
}

// Load reads the Keras file at path; weights names the weights .h5 of an
// architecture JSON ("" to look beside it).
func Load(ctx context.Context, path, weights string) (*Model, error) {
	return LoadCustom(ctx, path, weights, nil)
}

// LoadCustom is Load accepting, besides the classes of Layers, those for
// which custom is true (the user's definitions, -O custom=FILE.onnx).
func LoadCustom(ctx context.Context, path, weights string, custom func(class string) bool) (*Model, error) {
	data, err := fsys.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("keras import: %w", err)
	}
	var m *Model
	switch {
	case hdf5.IsHDF5(data):
		m, err = loadH5(path, data)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		m, err = loadZip(path, data)
	case unpacked(path):
		m, err = loadUnpacked(path)
	default:
		m, err = loadJSON(ctx, path, data, weights)
	}
	if err != nil {
		return nil, err
	}
	if err := checkLayers(path, m.Config, custom); err != nil {
		return nil, err
	}
	return m, nil
}

// parseConfig decodes a model config, refusing deep nesting and non-objects.
func parseConfig(path, what string, data []byte) (map[string]any, error) {
	if d := jsonDepth(data); d > maxJSONDepth {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("%s is nested %d deep (more than %d)", what, d, maxJSONDepth)}
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &FormatError{Path: path, Detail: what + " is not a JSON object", Err: err}
	}
	if mc, ok := top["model_config"].(map[string]any); ok {
		kv, _ := top["keras_version"].(string)
		top = mc
		if kv != "" {
			if _, ok := top["keras_version"]; !ok {
				top["keras_version"] = kv
			}
		}
	}
	if _, ok := top["class_name"].(string); !ok {
		return nil, &FormatError{Path: path, Detail: what + " has no class_name (not a Keras model config)"}
	}
	if _, ok := top["config"]; !ok {
		return nil, &FormatError{Path: path, Detail: what + " has no config (not a Keras model config)"}
	}
	return top, nil
}

// jsonDepth returns the deepest nesting of arrays and objects in data.
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

// --- Keras 3 .keras zip ---

func detectZip(path string) float32 {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return 0
	}
	defer zr.Close()
	var cfg, w bool
	for i, f := range zr.File {
		if i > maxZipEntries {
			break
		}
		if !localZipName(f.Name) {
			// Claimed so that the refusal says why (loadZip).
			return 0.5
		}
		switch f.Name {
		case "config.json":
			cfg = true
		case "model.weights.h5":
			w = true
		}
	}
	if cfg && w {
		return 1
	}
	return 0
}

// zipEntry reads the entry name of zr, at most limit bytes, checking its
// declared size against what it holds.
func zipEntry(path string, zr *zip.Reader, name string, limit int64, required bool) ([]byte, error) {
	var found *zip.File
	for _, f := range zr.File {
		if f.Name == name {
			if found != nil {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("the zip holds %s twice", name)}
			}
			found = f
		}
	}
	if found == nil {
		if !required {
			return nil, nil
		}
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("the zip holds no %s (a .keras file holds config.json, metadata.json and model.weights.h5)", name)}
	}
	if found.UncompressedSize64 > uint64(limit) {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("%s claims %d bytes, more than the %d read", name, found.UncompressedSize64, limit)}
	}
	rc, err := found.Open()
	if err != nil {
		return nil, &FormatError{Path: path, Detail: "cannot open " + name, Err: err}
	}
	defer rc.Close()
	// Inflated in steps, bounded by the declared size, the compression
	// ratio a real member reaches and limit: never held whole past them.
	b, err := fsys.Inflate(io.LimitReader(rc, int64(found.UncompressedSize64)+1), int64(found.CompressedSize64), zipRatio(found), limit, nil, name)
	if err != nil {
		var ie *fsys.InflateError
		if errors.As(err, &ie) {
			return nil, &FormatError{Path: path, Detail: fmt.Sprintf("zip member %s", name), Err: err}
		}
		return nil, &FormatError{Path: path, Detail: "reading " + name + " (truncated or corrupt zip)", Err: err}
	}
	if uint64(len(b)) != found.UncompressedSize64 {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("%s holds %d bytes, its zip entry says %d", name, len(b), found.UncompressedSize64)}
	}
	return b, nil
}

func loadZip(path string, data []byte) (*Model, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &FormatError{Path: path, Detail: "not a readable zip (truncated .keras file?)", Err: err}
	}
	for _, f := range zr.File {
		if !localZipName(f.Name) {
			return nil, &FormatError{Path: path, Detail: fmt.Sprintf("zip member %q has a name that leaves the archive's folder (absolute, .. or \\); a .keras file holds only config.json, metadata.json and model.weights.h5, so this is not one", f.Name)}
		}
	}
	if len(zr.File) > maxZipEntries {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("the zip has %d entries (a .keras file has 3)", len(zr.File))}
	}
	return loadV3(path, path+"!model.weights.h5", func(name string, limit int64, required bool) ([]byte, error) {
		return zipEntry(path, zr, name, limit, required)
	})
}

// loadV3 reads a Keras 3 model from its three parts (config.json,
// metadata.json, model.weights.h5), each read by entry: from the .keras
// zip, or from the folder a .keras file was unpacked into.
func loadV3(path, weightsPath string, entry func(name string, limit int64, required bool) ([]byte, error)) (*Model, error) {
	cfgData, err := entry("config.json", MaxConfigBytes, true)
	if err != nil {
		return nil, err
	}
	top, err := parseConfig(path, "config.json", cfgData)
	if err != nil {
		return nil, err
	}
	m := &Model{Path: path, Kind: KerasV3, Config: top, WeightsPath: weightsPath}
	meta, err := entry("metadata.json", MaxConfigBytes, false)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		var md struct {
			KerasVersion string `json:"keras_version"`
		}
		if json.Unmarshal(meta, &md) == nil {
			m.KerasVersion = md.KerasVersion
		}
	}
	wData, err := entry("model.weights.h5", MaxFileBytes, true)
	if err != nil {
		return nil, err
	}
	f, err := hdf5.Parse(m.WeightsPath, wData, hdf5.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: model.weights.h5: %w", path, err)
	}
	m.Weights = &v3Weights{f: f}
	return m, nil
}

// unpacked tells whether path is the config.json of a folder a .keras
// file was unpacked into: model.weights.h5 beside it, a regular file of
// the folder.
func unpacked(path string) bool {
	if filepath.Base(path) != "config.json" {
		return false
	}
	root, err := fsys.OpenRoot(filepath.Dir(path), nil)
	if err != nil {
		return false
	}
	defer root.Close()
	_, err = root.Stat("model.weights.h5")
	return err == nil
}

// loadUnpacked reads the folder a .keras file was unpacked into, through
// its config.json at path: the three parts are regular files of the folder
// (fsys: no link leading out).
func loadUnpacked(path string) (*Model, error) {
	dir := filepath.Dir(path)
	root, err := fsys.OpenRoot(dir, nil)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return loadV3(path, filepath.Join(dir, "model.weights.h5"), func(name string, limit int64, required bool) ([]byte, error) {
		b, err := root.ReadFile(name, limit)
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, &FormatError{Path: path, Detail: name, Err: err}
		}
		return b, nil
	})
}

// --- Keras 2 HDF5 ---

func detectHDF5(path string) float32 {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > MaxFileBytes {
		return 0
	}
	data, err := fsys.ReadFile(path, MaxFileBytes)
	if err != nil {
		return 0
	}
	f, err := hdf5.Parse(path, data, hdf5.Options{MaxBytes: MaxConfigBytes})
	if err != nil {
		return 0
	}
	root, err := f.Root()
	if err != nil {
		return 0
	}
	if _, err := root.Attr("model_config"); err == nil {
		return 1
	}
	if _, err := root.Attr("layer_names"); err == nil {
		return 0.5
	}
	if _, err := root.Child("model_weights"); err == nil {
		return 0.5
	}
	return 0
}

// strAttr reads a string attribute of o ("" and no error when missing).
func strAttr(o *hdf5.Object, name string) (string, error) {
	a, err := o.Attr(name)
	if err != nil {
		var nf *hdf5.NotFoundError
		if errors.As(err, &nf) {
			return "", nil
		}
		return "", err
	}
	ss, err := a.Strings()
	if err != nil {
		return "", err
	}
	if len(ss) != 1 {
		return "", fmt.Errorf("attribute %s holds %d strings, want 1", name, len(ss))
	}
	return ss[0], nil
}

func loadH5(path string, data []byte) (*Model, error) {
	f, err := hdf5.Parse(path, data, hdf5.Options{})
	if err != nil {
		return nil, fmt.Errorf("keras import: %w", err)
	}
	root, err := f.Root()
	if err != nil {
		return nil, fmt.Errorf("keras import: %w", err)
	}
	cfg, err := strAttr(root, "model_config")
	if err != nil {
		return nil, &FormatError{Path: path, Detail: "reading the model_config attribute", Err: err}
	}
	if cfg == "" {
		return nil, &FormatError{Path: path, Detail: "the HDF5 file holds weights but no model_config (it was written by save_weights): " +
			"convert the architecture JSON (model.to_json()) and name this file with -O weights=" + filepath.Base(path)}
	}
	if len(cfg) > MaxConfigBytes {
		return nil, &FormatError{Path: path, Detail: "model_config is larger than the config limit"}
	}
	top, err := parseConfig(path, "the model_config attribute", []byte(cfg))
	if err != nil {
		return nil, err
	}
	m := &Model{Path: path, Kind: FullH5, Config: top, WeightsPath: path}
	m.KerasVersion, _ = strAttr(root, "keras_version")
	wg := root
	if g, err := root.Child("model_weights"); err == nil {
		wg = g
		if v, _ := strAttr(g, "keras_version"); v != "" {
			m.KerasVersion = v
		}
	} else {
		m.Warnings = append(m.Warnings, "the file has no model_weights group: the weights are looked up at its root")
	}
	m.Weights = &v2Weights{file: path, g: wg}
	return m, nil
}

// --- Keras 2 architecture JSON + weights ---

func loadJSON(ctx context.Context, path string, data []byte, weights string) (*Model, error) {
	if int64(len(data)) > MaxConfigBytes {
		return nil, &fsys.TooLargeError{Path: path, Size: int64(len(data)), Limit: MaxConfigBytes}
	}
	top, err := parseConfig(path, "the architecture JSON", data)
	if err != nil {
		return nil, err
	}
	wp, err := findWeights(path, weights)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wdata, err := readWeights(path, wp, weights != "")
	if err != nil {
		return nil, fmt.Errorf("keras import %s: weights: %w", path, err)
	}
	f, err := hdf5.Parse(wp, wdata, hdf5.Options{})
	if err != nil {
		return nil, fmt.Errorf("keras import %s: weights: %w", path, err)
	}
	root, err := f.Root()
	if err != nil {
		return nil, fmt.Errorf("keras import %s: weights: %w", path, err)
	}
	wg := root
	if g, err := root.Child("model_weights"); err == nil {
		wg = g
	}
	m := &Model{Path: path, Kind: JSONWeights, Config: top, WeightsPath: wp}
	m.KerasVersion, _ = top["keras_version"].(string)
	if m.KerasVersion == "" {
		m.KerasVersion, _ = strAttr(wg, "keras_version")
	}
	m.Weights = &v2Weights{file: wp, g: wg}
	return m, nil
}

// findWeights returns the weights file of the architecture JSON at path.
func findWeights(path, weights string) (string, error) {
	dir := filepath.Dir(path)
	if weights != "" {
		if !filepath.IsAbs(weights) {
			weights = filepath.Join(dir, weights)
		}
		return weights, nil
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var tried []string
	root, err := fsys.OpenRoot(dir, nil)
	if err != nil {
		return "", err
	}
	defer root.Close()
	for _, c := range []string{stem + "_weights.h5", stem + ".h5", stem + ".weights.h5", stem + "_weights.hdf5", stem + ".hdf5"} {
		// Only a regular file inside the folder (a link leaving it is
		// not followed, not even to look at it).
		if _, err := root.Stat(c); err == nil {
			return filepath.Join(dir, c), nil
		} else if oe := (*fsys.OutsideError)(nil); errors.As(err, &oe) {
			return "", &FormatError{Path: path, Detail: "weights", Err: err}
		}
		tried = append(tried, c)
	}
	return "", &FormatError{Path: path, Detail: fmt.Sprintf("an architecture JSON needs its weights: none of %s is beside it; "+
		"name the weights file with -O weights=FILE", strings.Join(tried, ", "))}
}

// --- custom layers ---

// checkLayers refuses a config with layer classes onnxconv does not
// map (Layers), naming every such class at once.
func checkLayers(path string, top map[string]any, custom func(string) bool) error {
	known := map[string]bool{}
	for _, c := range Layers() {
		known[c] = true
	}
	if custom == nil {
		custom = func(string) bool { return false }
	}
	e := &CustomLayerError{Path: path}
	seen := map[string]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxJSONDepth {
			return
		}
		var layers []any
		switch c := v.(type) {
		case map[string]any:
			switch cc := c["config"].(type) {
			case map[string]any:
				layers, _ = cc["layers"].([]any)
			case []any: // Keras 2.0 Sequential: the config is the layer list
				layers = cc
			}
		}
		for _, l := range layers {
			lm, ok := l.(map[string]any)
			if !ok {
				continue
			}
			class, _ := lm["class_name"].(string)
			if class == "Sequential" || class == "Functional" || class == "Model" {
				walk(lm, depth+1)
				continue
			}
			if known[class] || seen[class] || custom(class) {
				continue
			}
			seen[class] = true
			name, _ := lm["name"].(string)
			if cfg, ok := lm["config"].(map[string]any); ok && name == "" {
				name, _ = cfg["name"].(string)
			}
			e.Classes = append(e.Classes, class)
			e.Layers = append(e.Layers, name)
			mod, _ := lm["module"].(string)
			reg, _ := lm["registered_name"].(string)
			switch {
			case strings.HasPrefix(mod, "qkeras") || strings.HasPrefix(strings.ToLower(reg), "qkeras"):
				e.Library = "QKeras"
			case strings.HasPrefix(mod, "HGQ") || strings.HasPrefix(mod, "hgq") || strings.HasPrefix(reg, "HGQ"):
				e.Library = "HGQ"
			case e.Library == "" && strings.HasPrefix(class, "Q") && len(class) > 1 && class[1] >= 'A' && class[1] <= 'Z':
				e.Library = "QKeras"
			case e.Library == "" && (class == "FixedPointQuantizer" || strings.HasPrefix(class, "HQuantize") ||
				(strings.HasPrefix(class, "H") && len(class) > 1 && class[1] >= 'A' && class[1] <= 'Z' && known[class[1:]])):
				e.Library = "HGQ"
			}
		}
	}
	walk(top, 0)
	if len(e.Classes) > 0 {
		return e
	}
	return nil
}

// sortNumeric sorts names numerically when they are all numbers, else as
// strings.
func sortNumeric(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if len(a) != len(b) && isDigits(a) && isDigits(b) {
			return len(a) < len(b)
		}
		return a < b
	})
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
