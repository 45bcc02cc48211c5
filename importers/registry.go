package importers

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/internal/suggest"
	"github.com/onnxconv/onnxconv/options"
)

// OptionError is an option an importer does not know, or a value it
// cannot parse (the options package's error).
type OptionError = options.Error

// UnknownFormatError is a format or importer name that no importer of the
// registry has.
type UnknownFormatError struct {
	Name string
	// Formats lists the formats the registry reads.
	Formats []string
	// Suggestion is the closest known format, or "".
	Suggestion string
}

func (e *UnknownFormatError) Error() string {
	s := fmt.Sprintf("no importer reads format %q", e.Name)
	if e.Suggestion != "" {
		s += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return s + " (formats: " + strings.Join(e.Formats, ", ") + ")"
}

// NoMatchError is a file that no importer recognizes.
type NoMatchError struct {
	Path string
	// Formats lists the formats read, each with its extensions
	// ("xgboost .json .ubj").
	Formats []string
	// ByExtension lists the formats whose extensions the file's name
	// ends in (a .tflite file that is not TFLite): the hint to try.
	ByExtension []string
}

func (e *NoMatchError) Error() string {
	if len(e.ByExtension) > 0 {
		return fmt.Sprintf("%s: the extension %s names format %s, but the file's content is not what its importer recognizes (a damaged, truncated or mislabelled file?); "+
			"--from %s makes that importer read it anyway and say what is wrong (formats: %s)",
			e.Path, filepath.Ext(e.Path), strings.Join(e.ByExtension, " or "), e.ByExtension[0], strings.Join(e.Formats, "; "))
	}
	return fmt.Sprintf("%s: no importer recognizes the file; name the format with --from (formats: %s)",
		e.Path, strings.Join(e.Formats, "; "))
}

// FolderError is a folder given as a model that holds none of the files
// the importers read a folder by (Description.FolderFiles).
type FolderError struct {
	Dir string
	// Looked lists the files looked for.
	Looked []string
}

func (e *FolderError) Error() string {
	return fmt.Sprintf("%s is a folder holding no model file onnxconv reads (looked for %s); give the model file itself",
		e.Dir, strings.Join(e.Looked, ", "))
}

// FolderModel returns the model file a folder stands for: the first file
// named by an importer's FolderFiles (importers in order) that dir holds
// as a regular file of its own (a symbolic link is not followed: nothing
// outside dir is read). A folder holding none is a *FolderError.
func (r *Registry) FolderModel(dir string) (string, error) {
	var looked []string
	for _, imp := range r.list {
		for _, name := range imp.Describe().FolderFiles {
			if name != filepath.Base(name) || name == "." || name == ".." {
				continue // a file of the folder itself, nothing below or above
			}
			p := filepath.Join(dir, name)
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
			if !slices.Contains(looked, name) {
				looked = append(looked, name)
			}
		}
	}
	return "", &FolderError{Dir: dir, Looked: looked}
}

// Registry is an ordered set of importers. It is built explicitly (no
// package-level registration): see importers/builtin for the built-ins.
type Registry struct {
	list []Importer
}

// NewRegistry returns a registry of imps; two importers of the same name
// are an error. Earlier importers win detection ties.
func NewRegistry(imps ...Importer) (*Registry, error) {
	r := &Registry{}
	for _, imp := range imps {
		if err := r.Add(imp); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add appends imp; its name must be new.
func (r *Registry) Add(imp Importer) error {
	name := imp.Describe().Name
	if name == "" {
		return errors.New("importers: an importer has no name")
	}
	for _, x := range r.list {
		if strings.EqualFold(x.Describe().Name, name) {
			return fmt.Errorf("importers: two importers named %q", name)
		}
	}
	r.list = append(r.list, imp)
	return nil
}

// All returns the importers in order.
func (r *Registry) All() []Importer { return slices.Clone(r.list) }

// Formats lists the format names, in order.
func (r *Registry) Formats() []string {
	out := make([]string, 0, len(r.list))
	for _, imp := range r.list {
		out = append(out, imp.Describe().FormatName())
	}
	return out
}

// formatsWithExtensions lists "format .ext .ext" for messages.
func (r *Registry) formatsWithExtensions() []string {
	out := make([]string, 0, len(r.list))
	for _, imp := range r.list {
		d := imp.Describe()
		out = append(out, strings.TrimSpace(d.FormatName()+" "+strings.Join(d.Extensions, " ")))
	}
	return out
}

// byExtension lists the formats that claim path's extension.
func (r *Registry) byExtension(path string) []string {
	ext := filepath.Ext(path)
	if ext == "" {
		return nil
	}
	var out []string
	for _, imp := range r.list {
		d := imp.Describe()
		for _, e := range d.Extensions {
			if strings.EqualFold(e, ext) {
				out = append(out, d.FormatName())
				break
			}
		}
	}
	return out
}

// Lookup finds the importer whose name or format is name (any case).
func (r *Registry) Lookup(name string) (Importer, error) {
	for _, imp := range r.list {
		d := imp.Describe()
		if strings.EqualFold(d.Name, name) || strings.EqualFold(d.FormatName(), name) {
			return imp, nil
		}
	}
	formats := r.Formats()
	return nil, &UnknownFormatError{Name: name, Formats: formats, Suggestion: suggest.Closest(name, formats)}
}

// Detect reads the head of the file at path and returns the importer most
// sure it is in its format. A file none recognises is a *NoMatchError.
func (r *Registry) Detect(path string) (Importer, float32, error) {
	head, err := readHead(path)
	if err != nil {
		return nil, 0, err
	}
	var best Importer
	var conf float32
	for _, imp := range r.list {
		if c := imp.Detect(path, head); c > conf {
			best, conf = imp, c
		}
	}
	if best == nil {
		return nil, 0, &NoMatchError{Path: path, Formats: r.formatsWithExtensions(), ByExtension: r.byExtension(path)}
	}
	return best, conf, nil
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, HeadSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return head[:n], nil
}
