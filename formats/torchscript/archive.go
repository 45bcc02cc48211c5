// Package torchscript reads TorchScript archives (torch.jit.save: .pt,
// .jit, .torchscript): the zip, its pickles (data.pkl, constants.pkl)
// through the project's pickle reader with an allow-list of torch's
// tensor and storage rebuild names, the raw storages under data/ and
// constants/, and the TorchScript source under code/ parsed into an AST.
// Nothing the archive holds is executed; every size is checked against
// the archive's own size before anything is allocated.
package torchscript

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
)

// FormatError is an archive that is not a TorchScript archive or is
// malformed; Fix says what to do, when there is something to do.
type FormatError struct {
	File   string
	Detail string
	Fix    string
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: %s", e.File, e.Detail)
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Kinds of torch files that Identify tells apart.
const (
	KindTorchScript = "torchscript"
	KindStateDict   = "state_dict"  // torch.save zip without code/
	KindPT2         = "pt2"         // torch.export archive
	KindLegacy      = "legacy save" // torch.save before 1.6 (a bare pickle)
)

// legacyMagic starts a pre-1.6 torch.save file: PROTO 2, LONG1 of the
// magic number 0x1950a86a20f9469cfc6c.
var legacyMagic = []byte{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19}

// Identify tells from the first bytes of a file which kind of torch file
// it is, or "" when it is none. A zip whose first entry is
// <name>/data.pkl is a torch.save or torch.jit.save archive (which one is
// known only from the central directory: see Open).
func Identify(head []byte) string {
	if bytes.HasPrefix(head, legacyMagic) {
		return KindLegacy
	}
	if len(head) < 30 || string(head[:4]) != "PK\x03\x04" {
		return ""
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	if 30+n > len(head) {
		return ""
	}
	first := string(head[30 : 30+n])
	if strings.Contains(first, "archive_format") || bytes.Contains(head, []byte("serialized_exported_program")) {
		return KindPT2
	}
	_, rest, ok := strings.Cut(first, "/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rest, "/")
	switch top {
	case "data.pkl", "data", "code", "constants.pkl", "constants", "version", ".data", "byteorder":
		return KindTorchScript
	}
	return ""
}

// Storage is one raw storage of the archive: data/<Key> (or
// constants/<Key> for constants.pkl), of Numel elements of DType.
type Storage struct {
	Dir      string
	Key      string
	DType    canonical.DataType
	TypeName string
	Numel    int64
	Location string
}

// TensorRef is a tensor of the archive: a view of a storage.
type TensorRef struct {
	Storage *Storage
	Offset  int64
	Size    []int64
	Stride  []int64
}

// Archive is an opened TorchScript archive.
type Archive struct {
	File    string
	Prefix  string // the archive's top folder, with its slash
	Version int64
	// Data is data.pkl: the root module object.
	Data pickle.Value
	// Constants are the items of constants.pkl (CONSTANTS.cN).
	Constants []pickle.Value
	// Classes maps a qualified class name (__torch__.a.b.Name) to its
	// definition; Funcs does the same for free functions.
	Classes map[string]*ClassDef
	Funcs   map[string]*Def

	size    int64
	entries map[string]*zip.File
	read    int64 // bytes of entries read so far
}

var storageTypes = map[string]canonical.DataType{
	"FloatStorage": canonical.Float, "DoubleStorage": canonical.Double, "HalfStorage": canonical.Float16,
	"BFloat16Storage": canonical.BFloat16, "LongStorage": canonical.Int64, "IntStorage": canonical.Int32,
	"ShortStorage": canonical.Int16, "CharStorage": canonical.Int8, "ByteStorage": canonical.Uint8,
	"BoolStorage": canonical.Bool,
}

// allow is the pickle allow-list: the names of the module classes
// (__torch__.…, names only), torch's tensor and storage rebuild functions,
// OrderedDict and the list/tensor builders of torch.jit._pickle. Nothing
// is called: each is recorded as a name.
func allow(module, name string) error {
	switch {
	case module == "__torch__" || strings.HasPrefix(module, "__torch__."):
		return nil
	case module == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_tensor"):
		return nil
	case module == "torch" && storageTypes[name] != 0:
		return nil
	case module == "collections" && name == "OrderedDict":
		return nil
	case module == "torch.jit._pickle" && (strings.HasPrefix(name, "build_") && name != "build_tensor_from_id" || name == "restore_type_tag"):
		return nil
	case module == "torch" && name == "device":
		return nil
	}
	return errors.New("only TorchScript module classes and torch's tensor and storage rebuild functions are read")
}

// Open reads the archive held in data (the whole file, named file for
// messages): the pickles and the source, not yet the storages.
func Open(file string, data []byte) (*Archive, error) {
	switch Identify(data) {
	case KindLegacy:
		return nil, &FormatError{File: file, Detail: "a torch.save file of the format before torch 1.6 (a pickle of Python objects, no TorchScript code)",
			Fix: "load it in Python and save a TorchScript archive: torch.jit.save(torch.jit.trace(model, example) or torch.jit.script(model), 'model.pt')"}
	case KindPT2:
		return nil, pt2Error(file)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &FormatError{File: file, Detail: "not a zip archive: " + err.Error()}
	}
	a := &Archive{File: file, size: int64(len(data)), entries: map[string]*zip.File{}, Classes: map[string]*ClassDef{}, Funcs: map[string]*Def{}}
	for _, f := range zr.File {
		n := f.Name
		if strings.HasPrefix(n, "/") || strings.Contains(n, "\\") || path.Clean(n) != n || strings.HasPrefix(n, "../") || n == ".." {
			return nil, &FormatError{File: file, Detail: fmt.Sprintf("entry %q is not a plain relative name", n)}
		}
		if strings.HasSuffix(n, "/data.pkl") && strings.Count(n, "/") == 1 {
			a.Prefix = strings.TrimSuffix(n, "data.pkl")
		}
		if strings.HasSuffix(n, "archive_format") || strings.HasSuffix(n, "serialized_exported_program.json") {
			return nil, pt2Error(file)
		}
		a.entries[n] = f
	}
	if a.Prefix == "" {
		return nil, &FormatError{File: file, Detail: "a zip without <name>/data.pkl: not a torch archive"}
	}
	hasCode := false
	for n := range a.entries {
		if strings.HasPrefix(n, a.Prefix+"code/") && strings.HasSuffix(n, ".py") {
			hasCode = true
			break
		}
	}
	if !hasCode {
		return nil, &FormatError{File: file, Detail: "a torch.save archive (a state_dict or pickled Python objects) without TorchScript code (no code/ folder): the model's forward is not in the file",
			Fix: "save the model as TorchScript in Python: torch.jit.save(torch.jit.trace(model, example_inputs), 'model.pt') (or torch.jit.script(model)), then convert that file"}
	}
	if v, err := a.entry("version", 64); err == nil {
		fmt.Sscan(string(v), &a.Version)
	}
	raw, err := a.entry("data.pkl", a.size)
	if err != nil {
		return nil, err
	}
	if a.Data, err = a.loadPickle("data.pkl", raw, "data"); err != nil {
		return nil, err
	}
	if raw, err := a.entry("constants.pkl", a.size); err == nil {
		c, err := a.loadPickle("constants.pkl", raw, "constants")
		if err != nil {
			return nil, err
		}
		t, ok := c.(*pickle.Tuple)
		if !ok {
			return nil, &FormatError{File: file, Detail: "constants.pkl is not a tuple"}
		}
		a.Constants = t.Items
	}
	if err := a.parseCode(); err != nil {
		return nil, err
	}
	return a, nil
}

func pt2Error(file string) error {
	return &FormatError{File: file, Detail: "a torch.export .pt2 archive: its ExportedProgram (a serialized FX graph in JSON with its own schema versions) is not read yet, because no real .pt2 file could be checked here",
		Fix: "save the model as TorchScript instead: torch.jit.save(torch.jit.trace(model, example_inputs), 'model.pt'), or export ONNX with torch.onnx.export"}
}

// entry reads <prefix>name, at most limit bytes; the bytes read from the
// archive in total are bounded by four times its size.
func (a *Archive) entry(name string, limit int64) ([]byte, error) {
	f, ok := a.entries[a.Prefix+name]
	if !ok {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("no entry %s%s", a.Prefix, name)}
	}
	n := f.UncompressedSize64
	if n > uint64(limit) || n > uint64(a.size) {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("entry %s claims %d bytes, more than the archive (%d) holds", f.Name, n, a.size)}
	}
	if a.read+int64(n) > 4*a.size+1<<20 {
		return nil, &FormatError{File: a.File, Detail: "the entries expand to more than four times the archive's size"}
	}
	r, err := f.Open()
	if err != nil {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("entry %s: %v", f.Name, err)}
	}
	defer r.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("entry %s: %v", f.Name, err)}
	}
	a.read += int64(n)
	return buf, nil
}

func (a *Archive) loadPickle(name string, raw []byte, dir string) (pickle.Value, error) {
	storages := map[string]*Storage{}
	persistent := func(pid pickle.Value) (pickle.Value, error) {
		t, ok := pid.(*pickle.Tuple)
		if !ok || len(t.Items) != 5 {
			return nil, fmt.Errorf("not a ('storage', type, key, location, numel) tuple")
		}
		tag, _ := t.Items[0].(string)
		g, _ := t.Items[1].(*pickle.Global)
		key, _ := t.Items[2].(string)
		loc, _ := t.Items[3].(string)
		numel, ok := t.Items[4].(int64)
		if tag != "storage" || g == nil || key == "" || !ok || numel < 0 {
			return nil, fmt.Errorf("not a ('storage', type, key, location, numel) tuple")
		}
		dt := storageTypes[g.Name]
		if dt == 0 {
			return nil, fmt.Errorf("storage type %s is not read", g)
		}
		if s, ok := storages[key]; ok {
			return s, nil
		}
		if numel > a.size {
			return nil, fmt.Errorf("storage %s claims %d elements, more than the archive's %d bytes", key, numel, a.size)
		}
		s := &Storage{Dir: dir, Key: key, DType: dt, TypeName: g.Name, Numel: numel, Location: loc}
		storages[key] = s
		return s, nil
	}
	v, _, err := pickle.Load(raw, pickle.Options{Allow: allow, PersistentLoad: persistent})
	if err != nil {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("%s%s: %v", a.Prefix, name, err)}
	}
	return v, nil
}

// MaxSourceFiles bounds the code/ files read.
const MaxSourceFiles = 10000

func (a *Archive) parseCode() error {
	var names []string
	for n := range a.entries {
		if strings.HasPrefix(n, a.Prefix+"code/") && strings.HasSuffix(n, ".py") {
			names = append(names, n)
		}
	}
	if len(names) > MaxSourceFiles {
		return &FormatError{File: a.File, Detail: fmt.Sprintf("%d source files, more than %d", len(names), MaxSourceFiles)}
	}
	sort.Strings(names)
	for _, n := range names {
		rel := strings.TrimPrefix(n, a.Prefix+"code/")
		mod := strings.ReplaceAll(strings.TrimSuffix(rel, ".py"), "/", ".")
		src, err := a.entry(strings.TrimPrefix(n, a.Prefix), MaxSourceBytes)
		if err != nil {
			return err
		}
		m, err := Parse(n, string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", a.File, err)
		}
		for _, c := range m.Classes {
			a.Classes[mod+"."+c.Name] = c
		}
		for _, f := range m.Funcs {
			a.Funcs[mod+"."+f.Name] = f
		}
	}
	return nil
}

// AsTensor returns the tensor v records (a _rebuild_tensor_v2 of a
// storage), or nil when v is not one.
func AsTensor(v pickle.Value) *TensorRef {
	o, ok := v.(*pickle.Object)
	if !ok {
		return nil
	}
	g := o.Class()
	if g == nil || g.Module != "torch._utils" || (g.Name != "_rebuild_tensor_v2" && g.Name != "_rebuild_tensor") || len(o.Args) < 4 {
		return nil
	}
	s, _ := o.Args[0].(*Storage)
	off, ok := o.Args[1].(int64)
	size, ok2 := ints(o.Args[2])
	stride, ok3 := ints(o.Args[3])
	if s == nil || !ok || !ok2 || !ok3 || len(size) != len(stride) {
		return nil
	}
	return &TensorRef{Storage: s, Offset: off, Size: size, Stride: stride}
}

func ints(v pickle.Value) ([]int64, bool) {
	t, ok := v.(*pickle.Tuple)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(t.Items))
	for i, x := range t.Items {
		n, ok := x.(int64)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// Tensor reads the data of t into a dense tensor named name (strided
// views are gathered; every index is checked against the storage).
func (a *Archive) Tensor(name string, t *TensorRef) (*canonical.Tensor, error) {
	s := t.Storage
	es := int64(canonical.ElemBits(s.DType) / 8)
	raw, err := a.entry(s.Dir+"/"+s.Key, a.size)
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) < s.Numel*es {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("storage %s/%s holds %d bytes, %d elements of %d bytes claimed", s.Dir, s.Key, len(raw), s.Numel, es)}
	}
	n := int64(1)
	maxIdx := t.Offset
	for i, d := range t.Size {
		if d < 0 || t.Stride[i] < 0 {
			return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("tensor %s: negative size or stride", name)}
		}
		if d > 0 && n > math.MaxInt64/d {
			return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("tensor %s: too many elements", name)}
		}
		n *= d
		if d > 0 {
			maxIdx += (d - 1) * t.Stride[i]
		}
	}
	if es <= 0 || n > (4*a.size+1<<20)/es {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("tensor %s of %d elements expands its storage %s/%s beyond four times the archive's size", name, n, s.Dir, s.Key)}
	}
	if n > 0 && (t.Offset < 0 || maxIdx >= s.Numel) {
		return nil, &FormatError{File: a.File, Detail: fmt.Sprintf("tensor %s reads outside its storage %s/%s (%d elements)", name, s.Dir, s.Key, s.Numel)}
	}
	out := make([]byte, n*es)
	idx := make([]int64, len(t.Size))
	for k := int64(0); k < n; k++ {
		src := t.Offset
		for i := range idx {
			src += idx[i] * t.Stride[i]
		}
		copy(out[k*es:(k+1)*es], raw[src*es:(src+1)*es])
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < t.Size[i] {
				break
			}
			idx[i] = 0
		}
	}
	return canonical.NewTensor(name, s.DType, append([]int64{}, t.Size...), out), nil
}
