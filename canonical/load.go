package canonical

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// LoadOptions tune Load and Decode.
type LoadOptions struct {
	// Progress, when set, is called as the model is decoded with the bytes
	// done so far and the total.
	Progress func(done, total int64)
	// SkipDataChecks skips the checks of tensor data against dims and of
	// external data files (existence, size). Structure, names, nesting depth
	// and external data paths are always checked.
	SkipDataChecks bool
}

// Load reads the ONNX model at path. The file is memory-mapped and tensor
// data stays in the mapping (nothing is copied): call Model.Close when done
// with the model; its tensors must not be used after that. External data
// files are mapped on first use of their tensors.
//
// Every error names the file and the field path of the problem.
func Load(path string, opts LoadOptions) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the model: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	if size == 0 {
		return nil, fmt.Errorf("%s: the file is empty, not an ONNX model", path)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: file of %d bytes is too big to map", path, size)
	}
	data, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot memory-map the model: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		_ = unmapBytes(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src := &mappedSource{f: f, data: data}
	m, err := decode(data, dir, opts, src)
	if err != nil {
		_ = src.unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The tensor data has not been read; the protobuf around it has, and
	// its pages need not stay mapped.
	src.release(0, size)
	keep = true
	m.src = src
	if m.own == nil {
		m.own = &owner{refs: 1}
	}
	m.own.closers = append(m.own.closers, func() error {
		err := src.unmap()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	return m, nil
}

// Decode decodes a serialized ModelProto. Tensor raw_data stays a slice of
// data, which must therefore stay unchanged while the model is used. dir is
// the folder external data locations are relative to ("" for none).
func Decode(data []byte, dir string, opts LoadOptions) (*Model, error) {
	return decode(data, dir, opts, nil)
}

// decode is Decode; src, when set, is the mapping data lies in, whose pages
// are released behind the decoder as it goes.
func decode(data []byte, dir string, opts LoadOptions, src *mappedSource) (*Model, error) {
	if len(data) == 0 {
		return nil, errors.New("no data: an empty file is not an ONNX model")
	}
	d := &decoder{base: data, progress: opts.Progress, src: src}
	mp, err := d.model(data)
	if err != nil {
		return nil, err
	}
	if d.progress != nil {
		d.progress(int64(len(data)), int64(len(data)))
	}
	return fromProto(mp, dir, !opts.SkipDataChecks)
}

// decoder reads ModelProto, its GraphProto and the graph's initializers at
// the wire level so that raw_data is not copied; everything else goes
// through proto.Unmarshal (merging, which is what repeated occurrences of a
// field mean in protobuf).
type decoder struct {
	base     []byte
	progress func(done, total int64)
	// src is the mapping base lies in (nil: none). Reading a tensor's
	// header maps the pages around it, which count in resident memory
	// until released: the pages before released are released behind the
	// decoder every releaseChunk bytes.
	src      *mappedSource
	released int64
}

// passed notes that the decoder is done with the bytes before end.
func (d *decoder) passed(end int64) {
	if d.src != nil && end-d.released >= releaseChunk {
		d.src.release(d.released, end-d.released)
		d.released = end
	}
}

var mergeOpts = proto.UnmarshalOptions{Merge: true}

// offset returns the position of b (a subslice of d.base) in the file.
func (d *decoder) offset(b []byte) int64 { return int64(cap(d.base) - cap(b)) }

func (d *decoder) wireErr(path string, b []byte, n int) error {
	return fmt.Errorf("%s: malformed or truncated protobuf at byte %d: %v (the file is damaged or not an ONNX model)", path, d.offset(b), protowire.ParseError(n))
}

// walk calls special for every field of msg whose number and wire type
// match one of nums, and unmarshals the runs of other fields into msg.
func (d *decoder) walk(b []byte, msg proto.Message, path string, special func(num protowire.Number, v []byte) error, nums ...protowire.Number) error {
	runStart := 0
	flush := func(end int) error {
		if end > runStart {
			if err := mergeOpts.Unmarshal(b[runStart:end], msg); err != nil {
				return fmt.Errorf("%s: malformed protobuf between bytes %d and %d: %v (the file is damaged or not an ONNX model)", path, d.offset(b[runStart:]), d.offset(b[end:]), err)
			}
		}
		return nil
	}
	pos := 0
	for pos < len(b) {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return d.wireErr(path, b[pos:], n)
		}
		isSpecial := false
		if typ == protowire.BytesType {
			for _, s := range nums {
				if s == num {
					isSpecial = true
				}
			}
		}
		if isSpecial {
			v, m := protowire.ConsumeBytes(b[pos+n:])
			if m < 0 {
				return d.wireErr(fmt.Sprintf("%s (field %d)", path, num), b[pos+n:], m)
			}
			if err := flush(pos); err != nil {
				return err
			}
			if err := special(num, v); err != nil {
				return err
			}
			pos += n + m
			runStart = pos
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
		if m < 0 {
			return d.wireErr(fmt.Sprintf("%s (field %d)", path, num), b[pos+n:], m)
		}
		pos += n + m
	}
	return flush(pos)
}

func (d *decoder) model(b []byte) (*onnxpb.ModelProto, error) {
	mp := &onnxpb.ModelProto{}
	var g *onnxpb.GraphProto
	err := d.walk(b, mp, "model", func(_ protowire.Number, v []byte) error {
		if g == nil {
			g = &onnxpb.GraphProto{}
		}
		return d.graph(v, g)
	}, 7)
	if err != nil {
		return nil, err
	}
	if g != nil {
		mp.Graph = g
	}
	return mp, nil
}

func (d *decoder) graph(b []byte, g *onnxpb.GraphProto) error {
	return d.walk(b, g, "graph", func(_ protowire.Number, v []byte) error {
		i := len(g.Initializer)
		t, err := d.tensor(v, fmt.Sprintf("graph.initializer[%d]", i))
		if err != nil {
			return err
		}
		g.Initializer = append(g.Initializer, t)
		end := d.offset(v) + int64(len(v))
		d.passed(end)
		if d.progress != nil {
			d.progress(end, int64(len(d.base)))
		}
		return nil
	}, 5)
}

func (d *decoder) tensor(b []byte, path string) (*onnxpb.TensorProto, error) {
	t := &onnxpb.TensorProto{}
	var raw []byte
	err := d.walk(b, t, path, func(_ protowire.Number, v []byte) error {
		raw = v
		if raw == nil {
			raw = []byte{}
		}
		return nil
	}, 9)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		t.RawData = raw
	}
	return t, nil
}

// checkLocation rejects external data locations that could leave the
// model's folder.
func checkLocation(loc string) error {
	switch {
	case loc == "":
		return errors.New("external data location is empty")
	case strings.ContainsRune(loc, 0):
		return fmt.Errorf("external data location %q contains a NUL byte", loc)
	case filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, `\`) || (len(loc) > 1 && loc[1] == ':'):
		return fmt.Errorf("external data location %q is an absolute path; it must be relative to the model's folder", loc)
	}
	for _, part := range strings.FieldsFunc(loc, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("external data location %q contains \"..\"; it must stay inside the model's folder", loc)
		}
	}
	return nil
}

// extFiles maps the external data files of one model, each once, on first
// use. It is safe for concurrent use.
type extFiles struct {
	dir    string
	mu     sync.Mutex
	files  map[string]*extFile
	closed bool
}

type extFile struct {
	src      *mappedSource // the open, mapped file (nil when empty)
	path     string
	data     []byte
	mapped   bool
	verified map[string]bool // checksums already checked
}

func newExtFiles(dir string) *extFiles {
	return &extFiles{dir: dir, files: map[string]*extFile{}}
}

// resolve checks loc and returns the real path of the file, which must be a
// regular file inside the model's folder (also after following symlinks).
func (x *extFiles) resolve(loc string) (string, int64, error) {
	if err := checkLocation(loc); err != nil {
		return "", 0, err
	}
	realDir, err := filepath.EvalSymlinks(x.dir)
	if err != nil {
		return "", 0, fmt.Errorf("model folder: %w", err)
	}
	full := filepath.Join(x.dir, filepath.FromSlash(loc))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", 0, fmt.Errorf("external data file %q: %w (put it beside the model)", loc, err)
	}
	rel, err := filepath.Rel(realDir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", 0, fmt.Errorf("external data file %q resolves (through a symlink) to %s, outside the model's folder %s; copy the data into the folder", loc, real, realDir)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", 0, fmt.Errorf("external data file %q: %w", loc, err)
	}
	if !st.Mode().IsRegular() {
		return "", 0, fmt.Errorf("external data file %q is not a regular file", loc)
	}
	return real, st.Size(), nil
}

func span(loc string, size, offset, length int64) (int64, int64, error) {
	if offset > size {
		return 0, 0, fmt.Errorf("external data %q: offset %d is past the end of the file (%d bytes)", loc, offset, size)
	}
	if length < 0 {
		length = size - offset
	}
	if length > size-offset {
		return 0, 0, fmt.Errorf("external data %q: offset %d + length %d runs past the end of the file (%d bytes)", loc, offset, length, size)
	}
	return offset, length, nil
}

// check verifies that the data exists and lies within its file, without
// mapping it, and returns its length.
func (x *extFiles) check(loc string, offset, length int64) (int64, error) {
	_, size, err := x.resolve(loc)
	if err != nil {
		return 0, err
	}
	_, n, err := span(loc, size, offset, length)
	return n, err
}

// slice maps loc (once) and returns the bytes [offset, offset+length).
func (x *extFiles) slice(loc string, offset, length int64, checksum string) ([]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, fmt.Errorf("external data %q: %w", loc, ErrClosed)
	}
	f := x.files[loc]
	if f == nil {
		real, size, err := x.resolve(loc)
		if err != nil {
			return nil, err
		}
		f = &extFile{path: real, verified: map[string]bool{}}
		if size > 0 {
			if int64(int(size)) != size {
				return nil, fmt.Errorf("external data %q: file of %d bytes is too big to map", loc, size)
			}
			fd, err := os.Open(real)
			if err != nil {
				return nil, fmt.Errorf("external data %q: %w", loc, err)
			}
			data, err := mapFile(fd, int(size))
			if err != nil {
				fd.Close()
				return nil, fmt.Errorf("external data %q: cannot memory-map: %w", loc, err)
			}
			f.data, f.mapped = data, true
			f.src = &mappedSource{f: fd, data: data}
		} else {
			f.data = []byte{}
		}
		x.files[loc] = f
	}
	if checksum != "" && !f.verified[checksum] {
		sum := sha1.Sum(f.data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), checksum) {
			return nil, fmt.Errorf("external data %q: SHA-1 checksum %s does not match the file's %x; the data file is damaged or belongs to another model", loc, checksum, sum)
		}
		f.verified[checksum] = true
	}
	off, n, err := span(loc, int64(len(f.data)), offset, length)
	if err != nil {
		return nil, err
	}
	return f.data[off : off+n : off+n], nil
}

func (x *extFiles) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	var first error
	for _, f := range x.files {
		if f.mapped {
			if err := f.src.unmap(); err != nil && first == nil {
				first = err
			}
		}
		if f.src != nil {
			if err := f.src.f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	x.files = map[string]*extFile{}
	return first
}
