package tensorflow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/options"
)

// Limits on what a SavedModel may hold.
const (
	maxInlineDepth = 32
	maxNodes       = 1 << 20
	maxBundleKeys  = 1 << 20
)

// savedModel converts a SavedModel's serving meta graph, its variables
// read from the tensor bundle varPrefix (.index, .data-*).
func savedModel(ctx context.Context, file string, sm *tfpb.SavedModel, varPrefix string, o Options) (*canonical.Model, error) {
	var mg *tfpb.MetaGraphDef
	for _, m := range sm.GetMetaGraphs() {
		if slices.Contains(m.GetMetaInfoDef().GetTags(), "serve") {
			mg = m
			break
		}
	}
	if mg == nil {
		if len(sm.GetMetaGraphs()) == 0 {
			return nil, &FormatError{File: file, What: "the SavedModel holds no meta graph"}
		}
		mg = sm.GetMetaGraphs()[0]
	}
	sigName := o.Signature
	if sigName == "" {
		sigName = "serving_default"
	}
	sig, ok := mg.GetSignatureDef()[sigName]
	if !ok && o.Inputs != nil && o.Outputs != nil {
		sig = &tfpb.SignatureDef{} // the graph is cut at the options' tensors
	} else if !ok {
		var names []string
		for k := range mg.GetSignatureDef() {
			names = append(names, k)
		}
		slices.Sort(names)
		return nil, &importers.OptionError{Importer: Name, Key: "signature", Value: sigName, Known: options.Names(optionSet().Specs()),
			Err: fmt.Errorf("%s has no signature %q (signatures: %s); choose one with -O signature=NAME, or name the graph's tensors with -O inputs=NAME:0,… -O outputs=NAME:0,…", file, sigName, strings.Join(names, ", "))}
	}
	g := &tfops.Graph{Name: sigName}
	for _, k := range sortedKeys(sig.GetInputs()) {
		g.Inputs = append(g.Inputs, tfops.IO{Name: k, Tensor: sig.GetInputs()[k].GetName()})
	}
	for _, k := range sortedKeys(sig.GetOutputs()) {
		g.Outputs = append(g.Outputs, tfops.IO{Name: k, Tensor: sig.GetOutputs()[k].GetName()})
	}
	if o.Inputs != nil {
		g.Inputs = o.Inputs
	}
	if o.Outputs != nil {
		g.Outputs = o.Outputs
	}
	gd := mg.GetGraphDef()
	vars, err := readVariables(file, varPrefix)
	if err != nil {
		return nil, err
	}
	defer vars.close()
	// Variables: TF1 VariableV2 by node name; TF2 VarHandleOp captured by
	// a signature call, by the checkpoint key of the bound object.
	bound := map[string]string{} // VarHandleOp node name -> checkpoint key
	if og := mg.GetObjectGraphDef(); og != nil && vars != nil {
		keys, err := vars.objectKeys()
		if err != nil {
			return nil, err
		}
		for _, nd := range gd.GetNode() {
			fn := nd.GetAttr()["f"].GetFunc().GetName()
			cf, ok := og.GetConcreteFunctions()[fn]
			if !ok {
				continue
			}
			var ins []string
			for _, in := range nd.GetInput() {
				if !strings.HasPrefix(in, "^") {
					ins = append(ins, strings.Split(in, ":")[0])
				}
			}
			bi := cf.GetBoundInputs()
			if len(bi) > len(ins) {
				continue
			}
			for i, id := range bi {
				if k, ok := keys[id]; ok {
					bound[ins[len(ins)-len(bi)+i]] = k
				}
			}
		}
	}
	// Keep only what the signature's outputs need (the saver's string
	// constants and unrelated signatures are left out).
	byName := map[string]*tfpb.NodeDef{}
	for _, nd := range gd.GetNode() {
		byName[nd.GetName()] = nd
	}
	need := map[string]bool{}
	var stack []string
	for _, io := range g.Outputs {
		stack = append(stack, strings.Split(io.Tensor, ":")[0])
	}
	// The inputs are kept, read or not (a signature may name redundant
	// inputs), and the graph is cut there.
	for _, io := range g.Inputs {
		need[strings.Split(io.Tensor, ":")[0]] = true
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[n] || byName[n] == nil {
			continue
		}
		need[n] = true
		for _, in := range byName[n].GetInput() {
			if !strings.HasPrefix(in, "^") {
				stack = append(stack, strings.Split(in, ":")[0])
			}
		}
	}
	nodes := make([]*tfpb.NodeDef, 0, len(gd.GetNode()))
	for _, nd := range gd.GetNode() {
		if !need[nd.GetName()] {
			continue
		}
		switch nd.GetOp() {
		case "VariableV2", "VarHandleOp", "Variable":
			key := nd.GetName()
			if k, ok := bound[key]; ok {
				key = k
			} else if s := nd.GetAttr()["shared_name"].GetS(); len(s) > 0 && vars != nil && vars.has(string(s)) {
				key = string(s)
			}
			t, err := vars.tensor(key)
			if err != nil {
				return nil, fmt.Errorf("%s: variable %q: %w", file, nd.GetName(), err)
			}
			nodes = append(nodes, &tfpb.NodeDef{Name: nd.GetName(), Op: "Const"})
			g.Consts = setConst(g.Consts, nd.GetName(), t)
			continue
		}
		nodes = append(nodes, nd)
	}
	nn, err := neutralNodes(file, nodes, true)
	if err != nil {
		return nil, err
	}
	nn, resolve, err := inline(file, nn, gd.GetLibrary())
	if err != nil {
		return nil, err
	}
	if g.Functions, err = functions(file, gd.GetLibrary(), nn); err != nil {
		return nil, err
	}
	for i := range g.Outputs {
		g.Outputs[i].Tensor = resolve(g.Outputs[i].Tensor)
	}
	g.Nodes = nn
	return convert(file, g, o)
}

func setConst(m map[string]*canonical.Tensor, k string, t *canonical.Tensor) map[string]*canonical.Tensor {
	if m == nil {
		m = map[string]*canonical.Tensor{}
	}
	m[k] = t
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// inline replaces PartitionedCall/StatefulPartitionedCall nodes by the
// bodies of the functions they call (recursively), and rewrites
// ReadVariableOp to Identity (variables are constants by now).
// The returned resolve maps a tensor name that named a call's output to
// the tensor of the inlined body.
func inline(file string, nodes []tfops.Node, lib *tfpb.FunctionDefLibrary) ([]tfops.Node, func(string) string, error) {
	funcs := map[string]*tfpb.FunctionDef{}
	for _, fd := range lib.GetFunction() {
		funcs[fd.GetSignature().GetName()] = fd
	}
	alias := map[string]string{} // "call:i" -> tensor
	var out []tfops.Node
	work := newInlineWork(file, nodes, lib)
	var expand func(n tfops.Node, depth int) error
	add := func(n tfops.Node, depth int) error {
		if n.Op == "ReadVariableOp" {
			n.Op = "Identity"
		}
		if (n.Op == "PartitionedCall" || n.Op == "StatefulPartitionedCall") && n.Attrs["f"].Func != "" {
			return expand(n, depth)
		}
		if len(out) >= maxNodes {
			return &FormatError{File: file, What: fmt.Sprintf("more than %d nodes after inlining functions", maxNodes)}
		}
		out = append(out, n)
		return nil
	}
	expand = func(call tfops.Node, depth int) error {
		if depth > maxInlineDepth {
			return unsupportedNode(file, call.Name, call.Op, fmt.Sprintf("function calls nested deeper than %d (recursion?)", maxInlineDepth))
		}
		fd, ok := funcs[call.Attrs["f"].Func]
		if !ok {
			return &FormatError{File: file, What: fmt.Sprintf("node %q calls function %q, which the library lacks", call.Name, call.Attrs["f"].Func)}
		}
		var ins []string
		for _, in := range call.Inputs {
			if !strings.HasPrefix(in, "^") {
				ins = append(ins, in)
			}
		}
		args := fd.GetSignature().GetInputArg()
		if len(args) != len(ins) {
			return &FormatError{File: file, What: fmt.Sprintf("node %q passes %d inputs to %q, which takes %d", call.Name, len(ins), fd.GetSignature().GetName(), len(args))}
		}
		argMap := map[string]string{}
		for i, a := range args {
			argMap[a.GetName()] = ins[i]
		}
		prefix := call.Name + "/"
		rewrite := func(in string) string {
			ctl := strings.HasPrefix(in, "^")
			in = strings.TrimPrefix(in, "^")
			parts := strings.Split(in, ":")
			var r string
			switch {
			case len(parts) == 1 && argMap[parts[0]] != "":
				r = argMap[parts[0]]
			case len(parts) == 3:
				idx, _ := strconv.Atoi(parts[2])
				r = prefix + parts[0] + ":" + strconv.Itoa(idx)
				if idx == 0 {
					r = prefix + parts[0]
				}
			default:
				r = prefix + in
			}
			if ctl {
				return "^" + strings.Split(r, ":")[0]
			}
			return r
		}
		if err := work.take(call.Name, len(fd.GetNodeDef())); err != nil {
			return err
		}
		body, err := neutral(file, fd.GetNodeDef())
		if err != nil {
			return err
		}
		for _, n := range body {
			n.Name = prefix + n.Name
			ins := make([]string, len(n.Inputs))
			for i, in := range n.Inputs {
				ins[i] = rewrite(in)
			}
			n.Inputs = ins
			if err := add(n, depth+1); err != nil {
				return err
			}
		}
		for i, oa := range fd.GetSignature().GetOutputArg() {
			ret, ok := fd.GetRet()[oa.GetName()]
			if !ok {
				return &FormatError{File: file, What: fmt.Sprintf("function %q has no value for output %q", fd.GetSignature().GetName(), oa.GetName())}
			}
			alias[call.Name+":"+strconv.Itoa(i)] = rewrite(ret)
		}
		return nil
	}
	for _, n := range nodes {
		if err := add(n, 0); err != nil {
			return nil, nil, err
		}
	}
	resolve := func(in string) string {
		for range maxInlineDepth * 4 {
			k := in
			if !strings.Contains(k, ":") {
				k += ":0"
			}
			r, ok := alias[k]
			if !ok {
				return in
			}
			in = r
		}
		return in
	}
	for i := range out {
		for j, in := range out[i].Inputs {
			if !strings.HasPrefix(in, "^") {
				out[i].Inputs[j] = resolve(in)
			} else if _, ok := alias[in[1:]+":0"]; ok {
				out[i].Inputs[j] = "" // a control edge to an inlined call
			}
		}
		out[i].Inputs = slices.DeleteFunc(out[i].Inputs, func(s string) bool { return s == "" })
	}
	return out, resolve, nil
}

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
		return nil, unsupportedNode(b.file, "", "", "big-endian tensor bundle")
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

// tensor reads the variable key.
func (b *bundle) tensor(key string) (*canonical.Tensor, error) {
	if b == nil {
		return nil, &FormatError{File: key, What: "the SavedModel has no variables/variables.index"}
	}
	e, ok := b.entries[key]
	if !ok {
		return nil, &FormatError{File: b.file, What: fmt.Sprintf("no tensor %q in the bundle", key)}
	}
	if len(e.GetSlices()) > 0 {
		return nil, unsupportedNode(b.file, "", "", fmt.Sprintf("%q is saved in slices", key))
	}
	dt, ok := tfops.DataType(e.GetDtype().String())
	if !ok || dt == canonical.String {
		return nil, unsupportedNode(b.file, "", "", fmt.Sprintf("%q has type %s", key, e.GetDtype()))
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
	return canonical.NewTensor(key, dt, dims, raw), nil
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
			return nil, unsupportedNode(file, "", "", "compressed tensor bundle index blocks")
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
