package tensorflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/fsys"
)

// Limits on what a tensor bundle may hold.
const maxBundleKeys = 1 << 20

// bundle is a TensorFlow tensor bundle (variables.index + data shards).
type bundle struct {
	file   string
	prefix string
	// root is the SavedModel's folder: the index and the shards are read
	// inside it only (fsys), local is prefix relative to it.
	root    *fsys.Root
	local   string
	header  *tfpb.BundleHeaderProto
	entries map[string]*tfpb.BundleEntryProto
}

// readVariables reads the bundle at prefix; nil when it has no index.
func readVariables(file, prefix string) (*bundle, error) {
	dir := filepath.Dir(file)
	local, err := filepath.Rel(dir, prefix)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	root, err := fsys.OpenRoot(dir, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	data, err := root.ReadFile(local+".index", MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		root.Close()
		return nil, nil
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	b := &bundle{file: prefix + ".index", prefix: prefix, root: root, local: local, entries: map[string]*tfpb.BundleEntryProto{}}
	ok := false
	defer func() {
		if !ok {
			root.Close()
		}
	}()
	kv, err := readTable(b.file, data)
	if err != nil {
		return nil, err
	}
	for k, v := range kv {
		if k == "" {
			b.header = &tfpb.BundleHeaderProto{}
			if err := proto.Unmarshal(v, b.header); err != nil {
				return nil, &FormatError{File: b.file, What: fmt.Sprintf("bundle header: %v", err)}
			}
			continue
		}
		e := &tfpb.BundleEntryProto{}
		if err := proto.Unmarshal(v, e); err != nil {
			return nil, &FormatError{File: b.file, What: fmt.Sprintf("bundle entry %q: %v", k, err)}
		}
		b.entries[k] = e
	}
	if b.header == nil {
		return nil, &FormatError{File: b.file, What: "tensor bundle without header"}
	}
	if b.header.GetEndianness() != tfpb.BundleHeaderProto_LITTLE {
		return nil, Unsupported(b.file, "", "", "big-endian tensor bundle")
	}
	ok = true
	return b, nil
}

// close closes the bundle's folder (nil: no bundle).
func (b *bundle) close() {
	if b != nil {
		b.root.Close()
	}
}

// shard is the local name of data shard id.
func (b *bundle) shard(id int32) string {
	return fmt.Sprintf("%s.data-%05d-of-%05d", b.local, id, b.header.GetNumShards())
}

func (b *bundle) has(key string) bool {
	if b == nil {
		return false
	}
	_, ok := b.entries[key]
	return ok
}

// tensor reads the variable key, as a TensorProto holding its bytes.
func (b *bundle) tensor(key string) (*tfpb.TensorProto, error) {
	if b == nil {
		return nil, &FormatError{File: key, What: "the SavedModel has no variables/variables.index"}
	}
	e, ok := b.entries[key]
	if !ok {
		return nil, &FormatError{File: b.file, What: fmt.Sprintf("no tensor %q in the bundle", key)}
	}
	if len(e.GetSlices()) > 0 {
		return nil, Unsupported(b.file, "", "", fmt.Sprintf("%q is saved in slices", key))
	}
	dt, ok := DataType(e.GetDtype().String())
	if !ok || dt == canonical.String {
		return nil, Unsupported(b.file, "", "", fmt.Sprintf("%q has type %s", key, e.GetDtype()))
	}
	dims, n, err := shapeOf(b.file, key, e.GetShape())
	if err != nil {
		return nil, err
	}
	want := n * uint64(canonical.ElemBits(dt)/8)
	if uint64(e.GetSize()) != want {
		return nil, &FormatError{File: b.file, What: fmt.Sprintf("%q of shape %v has %d bytes, want %d", key, dims, e.GetSize(), want)}
	}
	if e.GetShardId() < 0 || e.GetShardId() >= b.header.GetNumShards() {
		return nil, &FormatError{File: b.file, What: fmt.Sprintf("%q in shard %d of %d", key, e.GetShardId(), b.header.GetNumShards())}
	}
	shard := filepath.Join(b.root.Dir(), b.shard(e.GetShardId()))
	size, err := b.root.Stat(b.shard(e.GetShardId()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.file, err)
	}
	if e.GetOffset() < 0 || want > uint64(size) || uint64(e.GetOffset()) > uint64(size)-want {
		return nil, &FormatError{File: shard, What: fmt.Sprintf("%q at %d+%d past the end (%d bytes)", key, e.GetOffset(), want, size)}
	}
	raw, err := b.root.ReadAt(b.shard(e.GetShardId()), e.GetOffset(), int64(want))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.file, err)
	}
	return &tfpb.TensorProto{Dtype: e.GetDtype(), TensorShape: e.GetShape(), TensorContent: raw}, nil
}

// objectKeys maps the node ids of the trackable object graph to their
// VARIABLE_VALUE checkpoint keys.
func (b *bundle) objectKeys() (map[int32]string, error) {
	out := map[int32]string{}
	if !b.has("_CHECKPOINTABLE_OBJECT_GRAPH") {
		return out, nil
	}
	t, err := b.rawString("_CHECKPOINTABLE_OBJECT_GRAPH")
	if err != nil {
		return nil, err
	}
	var og tfpb.TrackableObjectGraph
	if err := proto.Unmarshal(t, &og); err != nil {
		return nil, &FormatError{File: b.file, What: fmt.Sprintf("object graph: %v", err)}
	}
	for i, n := range og.GetNodes() {
		for _, a := range n.GetAttributes() {
			if a.GetName() == "VARIABLE_VALUE" {
				out[int32(i)] = a.GetCheckpointKey()
			}
		}
	}
	return out, nil
}

// rawString reads a scalar string tensor of the bundle (stored as a
// varint length table, a checksum, then the bytes).
func (b *bundle) rawString(key string) ([]byte, error) {
	e := b.entries[key]
	shard := filepath.Join(b.root.Dir(), b.shard(e.GetShardId()))
	fsize, err := b.root.Stat(b.shard(e.GetShardId()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.file, err)
	}
	off, size := e.GetOffset(), e.GetSize()
	if off < 0 || size < 0 || off > fsize || size > fsize-off {
		return nil, &FormatError{File: shard, What: fmt.Sprintf("%q past the end", key)}
	}
	s, err := b.root.ReadAt(b.shard(e.GetShardId()), off, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.file, err)
	}
	l, n := binary.Uvarint(s)
	if n <= 0 || l > uint64(len(s)-n) || uint64(len(s)-n)-l < 4 {
		return nil, &FormatError{File: shard, What: fmt.Sprintf("string tensor %q", key)}
	}
	return s[n+4 : n+4+int(l)], nil
}

// readTable reads every key and value of a LevelDB-format table (the
// .index of a tensor bundle), uncompressed blocks only.
func readTable(file string, data []byte) (map[string][]byte, error) {
	bad := func(what string) error { return &FormatError{File: file, What: "tensor bundle index: " + what} }
	if len(data) < 48 || binary.LittleEndian.Uint64(data[len(data)-8:]) != 0xdb4775248b80fb57 {
		return nil, bad("no table footer")
	}
	foot := data[len(data)-48:]
	_, n1 := binary.Uvarint(foot)
	_, n2 := binary.Uvarint(foot[max(n1, 0):])
	if n1 <= 0 || n2 <= 0 {
		return nil, bad("bad footer")
	}
	ioff, n3 := binary.Uvarint(foot[n1+n2:])
	isz, n4 := binary.Uvarint(foot[n1+n2+max(n3, 0):])
	if n3 <= 0 || n4 <= 0 {
		return nil, bad("bad footer")
	}
	block := func(off, size uint64) ([]byte, error) {
		if off > uint64(len(data)) || size > uint64(len(data)) || size+5 > uint64(len(data))-off {
			return nil, bad(fmt.Sprintf("block at %d+%d past the end", off, size))
		}
		if data[off+size] != 0 {
			return nil, Unsupported(file, "", "", "compressed tensor bundle index blocks")
		}
		return data[off : off+size], nil
	}
	entries := func(b []byte, visit func(k string, v []byte) error) error {
		if len(b) < 4 {
			return bad("short block")
		}
		nr := binary.LittleEndian.Uint32(b[len(b)-4:])
		if uint64(nr)*4+4 > uint64(len(b)) {
			return bad("block restarts past its end")
		}
		end := len(b) - 4 - int(nr)*4
		var key []byte
		for p := 0; p < end; {
			shared, a := binary.Uvarint(b[p:end])
			if a <= 0 {
				return bad("entry")
			}
			p += a
			nonShared, a := binary.Uvarint(b[p:end])
			if a <= 0 {
				return bad("entry")
			}
			p += a
			vlen, a := binary.Uvarint(b[p:end])
			if a <= 0 {
				return bad("entry")
			}
			p += a
			if shared > uint64(len(key)) || nonShared > uint64(end-p) || vlen > uint64(end-p)-nonShared {
				return bad("entry sizes")
			}
			key = append(key[:shared], b[p:p+int(nonShared)]...)
			p += int(nonShared)
			if err := visit(string(key), b[p:p+int(vlen)]); err != nil {
				return err
			}
			p += int(vlen)
		}
		return nil
	}
	index, err := block(ioff, isz)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = entries(index, func(_ string, h []byte) error {
		off, a := binary.Uvarint(h)
		size, c := binary.Uvarint(h[max(a, 0):])
		if a <= 0 || c <= 0 {
			return bad("block handle")
		}
		db, err := block(off, size)
		if err != nil {
			return err
		}
		return entries(db, func(k string, v []byte) error {
			if len(out) >= maxBundleKeys {
				return bad("too many keys")
			}
			out[k] = v
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
