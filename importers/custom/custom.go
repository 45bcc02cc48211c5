// Package custom reads the ONNX definitions a user gives for the layers
// and ops onnxconv does not map: `-O custom=FILE.onnx`, an ONNX model file
// whose functions (FunctionProto, model.functions; the graph may be
// absent) are named after what they define — a Keras layer class
// (MultiplyBeta), a TF op name or a TFLite custom op name. An importer
// that meets an unmapped layer or op with a function of that name emits a
// node calling the function (its domain the function's) and copies the
// function into the model, where ONNX Runtime and the executor run it.
// docs/custom.md says what each importer passes to the function.
package custom

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/options"
)

// OptionName is the importer option that names the file.
const OptionName = "custom"

// MaxFileBytes bounds the file Load reads.
const MaxFileBytes = 64 << 20

// Option is the "custom" importer option, stored in the field field
// returns.
func Option[T any](field func(*T) *string) options.Option[T] {
	return options.String(OptionName, "", "ONNX file of FunctionProtos named after the custom layers or ops it defines (docs/custom.md)", field).
		Then(func(_ *T, v string) error {
			if v == "" {
				return errors.New("give the path of an ONNX file of functions")
			}
			return nil
		})
}

// Hint is the sentence a refusal of an unmapped layer or op (what, e.g.
// "Keras layer class", name its name) ends with: how to supply it.
func Hint(what, name string) string {
	return fmt.Sprintf("to convert it, give its ONNX definition with -O %s=FILE.onnx: an ONNX file holding a function (FunctionProto) named %q that computes the %s (docs/custom.md)",
		OptionName, name, what)
}

// Set is the functions of one file, by name.
type Set struct {
	path   string
	byName map[string]*canonical.Function
}

// Load reads the ONNX file at path. A file that is not ONNX, holds no
// function, or two functions of one name, is an error naming it.
func Load(path string) (*Set, error) {
	data, err := fsys.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("custom definitions: %w", err)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("custom definitions %s: not an ONNX model file: %w", path, err)
	}
	m, err := canonical.FromProto(&mp, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("custom definitions %s: %w", path, err)
	}
	if len(m.Functions) == 0 {
		return nil, fmt.Errorf("custom definitions %s: the file holds no function (model.functions): write one FunctionProto per custom layer or op", path)
	}
	s := &Set{path: path, byName: map[string]*canonical.Function{}}
	for _, f := range m.Functions {
		if _, dup := s.byName[f.Name]; dup {
			return nil, fmt.Errorf("custom definitions %s: two functions are named %q", path, f.Name)
		}
		if f.Domain == "" || f.Domain == "ai.onnx" {
			return nil, fmt.Errorf("custom definitions %s: function %q is in the ai.onnx domain: give it a domain of its own (e.g. \"custom\")", path, f.Name)
		}
		if f.Body == nil {
			return nil, fmt.Errorf("custom definitions %s: function %q has no body", path, f.Name)
		}
		s.byName[f.Name] = f
	}
	return s, nil
}

// Lookup returns the function named name, or nil (also on a nil Set).
func (s *Set) Lookup(name string) *canonical.Function {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

// Names returns the names of the functions, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.byName))
	for k := range s.byName {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Attach adds the functions named used (each once) to m, with the opsets
// they import and their own domains (version 1).
func (s *Set) Attach(m *canonical.Model, used []string) error {
	seen := map[string]bool{}
	for _, f := range m.Functions {
		seen[f.Domain+"\x00"+f.Name] = true
	}
	for _, name := range used {
		f := s.Lookup(name)
		if f == nil {
			return fmt.Errorf("custom definitions: no function %q", name)
		}
		if seen[f.Domain+"\x00"+f.Name] {
			continue
		}
		seen[f.Domain+"\x00"+f.Name] = true
		for _, o := range f.OpsetImports {
			if have := m.Opset(o.Domain); have != 0 && have != o.Version && normDomain(o.Domain) == "" {
				return fmt.Errorf("custom definitions %s: function %q imports ai.onnx opset %d, the model is at opset %d: write it for opset %d",
					s.path, f.Name, o.Version, have, have)
			} else if have == 0 {
				m.SetOpset(o.Domain, o.Version)
			}
		}
		if m.Opset(f.Domain) == 0 {
			m.SetOpset(f.Domain, 1)
		}
		m.Functions = append(m.Functions, f)
	}
	return nil
}

func normDomain(d string) string {
	return strings.TrimPrefix(d, "ai.onnx")
}
