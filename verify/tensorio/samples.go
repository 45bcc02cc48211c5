package tensorio

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// MissingTensorError is returned (wrapped) by LoadSamples and LoadSet when
// a sample has no tensor for a value that is not optional. Tried lists
// what was looked for, in lookup order.
type MissingTensorError struct {
	Sample string // the sample folder or .npz file
	Prefix string // "input" or "output"
	Index  int
	Name   string
	Tried  []string
}

func (e *MissingTensorError) Error() string {
	return fmt.Sprintf("%s: no %s %d (%q); looked for %s", e.Sample, e.Prefix, e.Index, e.Name, strings.Join(e.Tried, ", "))
}

// ExtraTensorError is returned (wrapped) when a sample folder holds more
// PREFIX_N files than the model has values: the files belong to another
// model.
type ExtraTensorError struct {
	Sample string
	File   string
	Prefix string
	Count  int // how many values the model has
}

func (e *ExtraTensorError) Error() string {
	return fmt.Sprintf("%s holds %s but the model has %d %ss: the tensors belong to another model", e.Sample, e.File, e.Count, e.Prefix)
}

// LoadSamples reads the tensors of vals (graph inputs or outputs) for every
// sample under path. prefix is "input" or "output". It returns one row per
// sample, each with one tensor per value, named after the value.
//
// path is one of:
//   - a folder holding test_data_set_N subfolders: one sample per subfolder,
//     in numeric order of N;
//   - a folder of one sample;
//   - an .npz archive (np.savez): one sample.
//
// Value i named NAME is looked for in a sample folder in this order, the
// first found being used (SAFE is NAME with '/', '\' and ':' replaced by
// '_', see SafeName):
//
//  1. SAFE.pb (a TensorProto), then SAFE.npy;
//  2. member NAME, then SAFE, of the folder's .npz archive, if it has one
//     (a folder with more than one .npz is an error);
//  3. PREFIX_i.pb, then PREFIX_i.npy (the ONNX test data set layout);
//  4. member PREFIX_i of the .npz archive.
//
// In an .npz given as path, members NAME, SAFE and PREFIX_i are tried.
// A .csv or .tsv path is one sample for a model with one 2-D input (a
// tabular model): its rows (see ReadTableFile).
// That is, by name first, then by position. A missing tensor is an error
// (a *MissingTensorError naming what was looked for) unless optional is
// set, in which case its entry is nil. A sample folder that holds
// PREFIX_N.pb or PREFIX_N.npy for N = len(vals) is an error (an
// *ExtraTensorError) unless optional is set: the files are another
// model's.
func LoadSamples(path, prefix string, vals []*canonical.Value, optional bool) ([][]*canonical.Tensor, error) {
	if IsTable(path) {
		return loadTable(path, prefix, vals)
	}
	names := make([]string, len(vals))
	for i, v := range vals {
		if v != nil {
			names[i] = v.Name
		}
	}
	dirs, err := SetDirs(path)
	if err != nil {
		return nil, err
	}
	out := make([][]*canonical.Tensor, 0, len(dirs))
	for _, dir := range dirs {
		row, err := loadSample(dir, prefix, names, optional)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// loadSample reads one sample (a folder or an .npz file); see LoadSamples.
func loadSample(dir, prefix string, names []string, optional bool) ([]*canonical.Tensor, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("tensor folder: %w", err)
	}
	isDir := st.IsDir()
	var npz map[string]*canonical.Tensor
	var npzPath string
	if !isDir {
		if !strings.EqualFold(filepath.Ext(dir), ".npz") {
			return nil, fmt.Errorf("%s: not a folder or an .npz file", dir)
		}
		npzPath = dir
		if npz, err = ReadNpz(dir); err != nil {
			return nil, err
		}
	} else {
		matches, err := filepath.Glob(filepath.Join(dir, "*.npz"))
		if err != nil {
			return nil, fmt.Errorf("tensor folder %s: %w", dir, err)
		}
		if len(matches) > 1 {
			return nil, fmt.Errorf("tensor folder %s: %d .npz files; keep one", dir, len(matches))
		}
		if len(matches) == 1 {
			npzPath = matches[0]
			if npz, err = ReadNpz(npzPath); err != nil {
				return nil, err
			}
		}
		// A file named after a value is that value's (a Keras model's
		// one input named input_1 reads input_1.npy), not another
		// model's positional tensor.
		named := map[string]bool{}
		for _, n := range names {
			named[SafeName(n)] = true
		}
		if !optional && !named[prefix+"_"+strconv.Itoa(len(names))] {
			for _, ext := range []string{".pb", ".npy"} {
				extra := prefix + "_" + strconv.Itoa(len(names)) + ext
				if _, err := os.Stat(filepath.Join(dir, extra)); err == nil {
					return nil, &ExtraTensorError{Sample: dir, File: extra, Prefix: prefix, Count: len(names)}
				}
			}
		}
	}
	out := make([]*canonical.Tensor, len(names))
	for i, name := range names {
		var tried []string
		file := func(base string) (*canonical.Tensor, error) {
			p := filepath.Join(dir, base)
			if _, err := os.Stat(p); err != nil {
				tried = append(tried, base)
				return nil, nil
			}
			t, err := ReadTensorFile(p)
			if err != nil {
				return nil, fmt.Errorf("%s %d (%q): %w", prefix, i, name, err)
			}
			return t, nil
		}
		member := func(key string) *canonical.Tensor {
			if npz == nil || key == "" {
				return nil
			}
			if t, ok := npz[key]; ok {
				return t
			}
			tried = append(tried, filepath.Base(npzPath)+":"+key)
			return nil
		}
		safe := SafeName(name)
		indexed := prefix + "_" + strconv.Itoa(i)
		var steps []func() (*canonical.Tensor, error)
		if isDir && name != "" {
			steps = append(steps,
				func() (*canonical.Tensor, error) { return file(safe + ".pb") },
				func() (*canonical.Tensor, error) { return file(safe + ".npy") })
		}
		steps = append(steps, func() (*canonical.Tensor, error) {
			if t := member(name); t != nil {
				return t, nil
			}
			if safe != name {
				return member(safe), nil
			}
			return nil, nil
		})
		if isDir {
			steps = append(steps,
				func() (*canonical.Tensor, error) { return file(indexed + ".pb") },
				func() (*canonical.Tensor, error) { return file(indexed + ".npy") })
		}
		steps = append(steps, func() (*canonical.Tensor, error) { return member(indexed), nil })
		for _, step := range steps {
			t, err := step()
			if err != nil {
				return nil, err
			}
			if t != nil {
				out[i] = t
				break
			}
		}
		if out[i] == nil {
			if optional {
				continue
			}
			return nil, &MissingTensorError{Sample: dir, Prefix: prefix, Index: i, Name: name, Tried: tried}
		}
		out[i].Name = name
	}
	return out, nil
}

// loadTable reads a CSV/TSV table as the one sample of a model whose one
// input is a [rows, features] matrix.
func loadTable(path, prefix string, vals []*canonical.Value) ([][]*canonical.Tensor, error) {
	if prefix != "input" || len(vals) != 1 || vals[0] == nil {
		return nil, fmt.Errorf("%s: a table feeds a model with one [rows, features] input; this one has %d %ss", path, len(vals), prefix)
	}
	v := vals[0]
	dt, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !hasShape || len(ds) != 2 {
		return nil, fmt.Errorf("%s: a table feeds a [rows, features] input; %q is %s", path, v.Name, canonical.TypeString(v.Type))
	}
	want := int64(0)
	if ds[1].Known {
		want = ds[1].Value
	}
	t, err := ReadTableFile(path, v.Name, dt, want)
	if err != nil {
		return nil, err
	}
	if ds[0].Known && ds[0].Value != t.Dims[0] {
		return nil, fmt.Errorf("%s: %d rows, input %q takes %d", path, t.Dims[0], v.Name, ds[0].Value)
	}
	return [][]*canonical.Tensor{{t}}, nil
}
