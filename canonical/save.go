package canonical

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// MaxProtoSize is the largest serialized ModelProto that protobuf
// implementations accept (2 GiB - 1). Bigger models must keep their
// tensors in external data.
const MaxProtoSize = math.MaxInt32

// DefaultExternalThreshold is the size from which SaveOptions.ExternalData
// moves a tensor to the external data file.
const DefaultExternalThreshold = 1024

// extAlign is the alignment of each tensor in an external data file, so
// that it can be memory-mapped.
const extAlign = 4096

// SaveOptions tune Save and Encode.
type SaveOptions struct {
	// ExternalData moves every numeric tensor of at least ExternalThreshold
	// bytes (initializers and attribute tensors, in subgraphs and functions
	// too) into one external data file beside the model, each aligned to
	// 4096 bytes. Without it, tensors read from external data are inlined.
	ExternalData bool
	// ExternalThreshold is the size in bytes from which a tensor moves
	// (0 means DefaultExternalThreshold).
	ExternalThreshold int64
	// ExternalFile names the data file, relative to the model's folder
	// (default: the model's file name + ".data").
	ExternalFile string
	// Progress, when set, is called with the bytes written so far and the
	// total.
	Progress func(done, total int64)

	// noSync skips fsync (tests that save thousands of models).
	noSync bool
}

// A model whose protobuf would be larger than MaxProtoSize is not written:
// Save and Encode return an error (ErrTooLarge) telling to use external
// data, before writing anything. The commands' pipeline.Save then writes
// it with external data (as it does for a model read with external data).

// ErrTooLarge is returned (wrapped) when the model needs external data.
var ErrTooLarge = errors.New("model is larger than the 2 GiB protobuf limit; save it with external data (onnxconv convert --external-data, or SaveOptions.ExternalData)")

// Save writes m to path atomically: everything goes to temporary files in
// the same folder, which are synced and renamed into place only when
// complete. On failure the temporaries are removed and existing files are
// left untouched. Tensor data is streamed from where it lives (the input's
// memory mapping), so memory use stays small.
func Save(path string, m *Model, opts SaveOptions) (err error) {
	if m == nil {
		return fmt.Errorf("%s: nil model", path)
	}
	dir := filepath.Dir(path)
	base := filepath.Base(path)
	var tmps []*os.File
	defer func() {
		if err != nil {
			for _, f := range tmps {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	newTemp := func() (*os.File, error) {
		f, err := os.CreateTemp(dir, "."+base+".tmp-*")
		if err != nil {
			return nil, fmt.Errorf("%s: cannot create a temporary file beside it: %w", path, err)
		}
		tmps = append(tmps, f)
		return f, nil
	}

	var ext *extWriter
	extName := ""
	if opts.ExternalData {
		extName = opts.ExternalFile
		if extName == "" {
			extName = base + ".data"
		}
		if err := checkLocation(extName); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		ext = &extWriter{location: filepath.ToSlash(extName), threshold: opts.ExternalThreshold}
		if ext.threshold <= 0 {
			ext.threshold = DefaultExternalThreshold
		}
	}
	mp, err := m.toProto(saveHook(ext))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	plan, err := planModel(mp)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	total := plan.total
	if ext != nil {
		total += ext.size
	}
	pw := &progressWriter{progress: opts.Progress, total: total}

	var extTmp *os.File
	if ext != nil && len(ext.blobs) > 0 {
		if extTmp, err = newTemp(); err != nil {
			return err
		}
		pw.w = extTmp
		bw := bufio.NewWriterSize(pw, 1<<20)
		if err := ext.write(bw, &rawCopier{dst: extTmp, srcs: m.sources(), pw: pw}); err != nil {
			return fmt.Errorf("%s: writing external data: %w", filepath.Join(dir, extName), err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("%s: writing external data: %w", filepath.Join(dir, extName), err)
		}
	}
	tmp, err := newTemp()
	if err != nil {
		return err
	}
	pw.w = tmp
	bw := bufio.NewWriterSize(pw, 1<<20)
	if err := plan.write(bw, &rawCopier{dst: tmp, srcs: m.sources(), pw: pw}); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, f := range tmps {
		if !opts.noSync {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("%s: sync: %w", f.Name(), err)
			}
		}
		if err := f.Chmod(0o644); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	if extTmp != nil {
		if err := os.Rename(extTmp.Name(), filepath.Join(dir, extName)); err != nil {
			return fmt.Errorf("%s: cannot put the external data in place: %w", path, err)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: cannot put the model in place: %w", path, err)
	}
	for _, f := range tmps {
		f.Close()
	}
	if opts.noSync {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Encode writes m as one serialized ModelProto to w, streaming tensor data.
// Tensors read from external data are inlined. opts.ExternalData is not
// allowed here (use Save, which knows the folder to write the data file in).
func Encode(w io.Writer, m *Model, opts SaveOptions) error {
	if m == nil {
		return errors.New("nil model")
	}
	if opts.ExternalData {
		return errors.New("Encode writes a single stream and cannot write external data; use Save")
	}
	mp, err := m.toProto(saveHook(nil))
	if err != nil {
		return err
	}
	plan, err := planModel(mp)
	if err != nil {
		return err
	}
	pw := &progressWriter{w: w, progress: opts.Progress, total: plan.total}
	bw := bufio.NewWriterSize(pw, 1<<20)
	if err := plan.write(bw, &rawCopier{srcs: m.sources(), pw: pw}); err != nil {
		return err
	}
	return bw.Flush()
}

// extWriter collects the tensors that go to the external data file.
type extWriter struct {
	location  string
	threshold int64
	blobs     []extBlob
	size      int64
}

type extBlob struct {
	offset int64
	data   []byte
}

func (x *extWriter) write(w *bufio.Writer, c *rawCopier) error {
	var pos int64
	var zeros [extAlign]byte
	for _, b := range x.blobs {
		if pad := b.offset - pos; pad > 0 {
			if _, err := w.Write(zeros[:pad]); err != nil {
				return err
			}
		}
		if err := c.write(w, b.data); err != nil {
			return err
		}
		pos = b.offset + int64(len(b.data))
	}
	c.flush()
	return nil
}

// saveHook rewrites each tensor for saving: to external data when x is set
// and the tensor is big enough, else inline (reading external data).
func saveHook(x *extWriter) tensorHook {
	return func(t *Tensor, tp *onnxpb.TensorProto) error {
		if x != nil && t.DataType != String && ElemBits(t.DataType) != 0 && tp.Segment == nil {
			size, err := t.ByteSize()
			if err != nil {
				return fmt.Errorf("tensor %q: %w", t.Name, err)
			}
			if size >= x.threshold {
				data, err := t.Bytes()
				if err != nil {
					return err
				}
				off := (x.size + extAlign - 1) / extAlign * extAlign
				x.blobs = append(x.blobs, extBlob{offset: off, data: data})
				x.size = off + int64(len(data))
				clearTypedDataOut(tp)
				loc := onnxpb.TensorProto_EXTERNAL
				tp.DataLocation = &loc
				tp.ExternalData = []*onnxpb.StringStringEntryProto{
					{Key: proto.String("location"), Value: proto.String(x.location)},
					{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(off, 10))},
					{Key: proto.String("length"), Value: proto.String(strconv.FormatInt(int64(len(data)), 10))},
				}
				return nil
			}
		}
		if t.IsExternal() {
			data, err := t.Bytes()
			if err != nil {
				return err
			}
			clearTypedDataOut(tp)
			tp.RawData = data
		}
		return nil
	}
}

func clearTypedDataOut(tp *onnxpb.TensorProto) {
	tp.FloatData, tp.Int32Data, tp.Int64Data, tp.DoubleData, tp.Uint64Data = nil, nil, nil, nil, nil
	tp.RawData, tp.ExternalData, tp.DataLocation = nil, nil, nil
}

// modelPlan is a ModelProto cut for streaming: the small parts marshaled,
// the main graph's initializer raw_data kept as slices.
type modelPlan struct {
	head      []byte // ModelProto without graph
	hasGraph  bool
	graphSize int
	graphHead []byte // GraphProto without initializers
	inits     []initPlan
	total     int64
}

type initPlan struct {
	hdr  []byte // TensorProto without raw_data
	raw  []byte
	has  bool // raw_data present
	size int
}

func planModel(mp *onnxpb.ModelProto) (*modelPlan, error) {
	p := &modelPlan{}
	g := mp.Graph
	mp.Graph = nil
	head, err := proto.Marshal(mp)
	mp.Graph = g
	if err != nil {
		return nil, fmt.Errorf("encoding the model: %w", err)
	}
	p.head = head
	p.total = int64(len(head))
	if g == nil {
		return p, checkTotal(p.total)
	}
	p.hasGraph = true
	inits := g.Initializer
	g.Initializer = nil
	p.graphHead, err = proto.Marshal(g)
	g.Initializer = inits
	if err != nil {
		return nil, fmt.Errorf("encoding the graph: %w", err)
	}
	gsize := int64(len(p.graphHead))
	p.inits = make([]initPlan, len(inits))
	for i, tp := range inits {
		raw := tp.RawData
		tp.RawData = nil
		hdr, err := proto.Marshal(tp)
		tp.RawData = raw
		if err != nil {
			return nil, fmt.Errorf("encoding initializer %q: %w", tp.GetName(), err)
		}
		ip := initPlan{hdr: hdr, raw: raw, has: raw != nil}
		size := int64(len(hdr))
		if ip.has {
			size += int64(protowire.SizeTag(9) + protowire.SizeVarint(uint64(len(raw))) + len(raw))
		}
		if size > MaxProtoSize {
			return nil, fmt.Errorf("initializer %q: %w", tp.GetName(), ErrTooLarge)
		}
		ip.size = int(size)
		p.inits[i] = ip
		gsize += int64(protowire.SizeTag(5)+protowire.SizeVarint(uint64(size))) + size
		if gsize > MaxProtoSize {
			return nil, fmt.Errorf("the graph's initializers exceed 2 GiB: %w", ErrTooLarge)
		}
	}
	p.graphSize = int(gsize)
	p.total += int64(protowire.SizeTag(7)+protowire.SizeVarint(uint64(gsize))) + gsize
	return p, checkTotal(p.total)
}

func checkTotal(n int64) error {
	if n > MaxProtoSize {
		return fmt.Errorf("the model would take %d bytes: %w", n, ErrTooLarge)
	}
	return nil
}

func (p *modelPlan) write(w *bufio.Writer, c *rawCopier) error {
	if _, err := w.Write(p.head); err != nil {
		return err
	}
	if !p.hasGraph {
		return nil
	}
	var buf []byte
	buf = protowire.AppendTag(buf, 7, protowire.BytesType)
	buf = protowire.AppendVarint(buf, uint64(p.graphSize))
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if _, err := w.Write(p.graphHead); err != nil {
		return err
	}
	for _, ip := range p.inits {
		buf = buf[:0]
		buf = protowire.AppendTag(buf, 5, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(ip.size))
		buf = append(buf, ip.hdr...)
		if ip.has {
			buf = protowire.AppendTag(buf, 9, protowire.BytesType)
			buf = protowire.AppendVarint(buf, uint64(len(ip.raw)))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if err := c.write(w, ip.raw); err != nil {
			return err
		}
	}
	c.flush()
	return nil
}

// writeChunked writes b in pieces so that progress is reported smoothly.
func writeChunked(w io.Writer, b []byte) error {
	const chunk = 16 << 20
	for len(b) > 0 {
		n := min(len(b), chunk)
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

type progressWriter struct {
	w        io.Writer
	done     int64
	total    int64
	progress func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.progress != nil {
		p.progress(p.done, p.total)
	}
	return n, err
}

// ToProtoInline is ToProto with the data of external tensors read and
// inlined as raw_data (for writers that cannot reference external files,
// such as the text syntax).
func (m *Model) ToProtoInline() (*onnxpb.ModelProto, error) {
	return m.toProto(saveHook(nil))
}

// WriteFileAtomic writes path through write: into a temporary file in the
// same folder, synced, then renamed over path. On failure the temporary is
// removed and an existing file is left untouched.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create a temporary file beside it: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("%s: cannot put the file in place: %w", path, err)
	}
	return nil
}
