// Package onnxio reads and writes the files the executor and the backend
// test runner exchange: models (.onnx), tensors (TensorProto .pb files),
// sequences and optionals (SequenceProto / OptionalProto .pb files) and
// NumPy .npy arrays.
//
// ModelFromProto converts a ModelProto into a canonical.Model with the
// public canonical API; LoadModel uses canonical.Load first.
package onnxio

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// maxSubgraphDepth bounds the nesting of subgraphs of an untrusted model.
const maxSubgraphDepth = 64

// LoadModel reads an .onnx file with canonical.Load (memory-mapped: call
// Model.Close when done). When the canonical loader rejects the file, it
// falls back to decoding it in memory with ModelFromProto.
func LoadModel(path string) (*canonical.Model, error) {
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err == nil {
		return m, nil
	}
	m, ferr := loadInMemory(path)
	if ferr != nil {
		return nil, fmt.Errorf("%w (in-memory decoding: %v)", err, ferr)
	}
	return m, nil
}

func loadInMemory(path string) (*canonical.Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading model: %w", err)
	}
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(b, mp); err != nil {
		return nil, fmt.Errorf("model %s: decoding protobuf: %w", path, err)
	}
	m, err := ModelFromProto(mp, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return m, nil
}

// ModelFromProto converts mp; dir is the folder of the model file.
func ModelFromProto(mp *onnxpb.ModelProto, dir string) (*canonical.Model, error) {
	m := &canonical.Model{
		IRVersion:       mp.GetIrVersion(),
		ProducerName:    mp.GetProducerName(),
		ProducerVersion: mp.GetProducerVersion(),
		Domain:          mp.GetDomain(),
		ModelVersion:    mp.GetModelVersion(),
		DocString:       mp.GetDocString(),
		Dir:             dir,
	}
	for _, o := range mp.GetOpsetImport() {
		m.OpsetImports = append(m.OpsetImports, canonical.OpsetID{Domain: o.GetDomain(), Version: o.GetVersion()})
	}
	g, err := graphFromProto(mp.GetGraph(), nil, nil, 0)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	for _, fp := range mp.GetFunctions() {
		f := &canonical.Function{Domain: fp.GetDomain(), Name: fp.GetName(), Overload: fp.GetOverload(), Attributes: fp.GetAttribute()}
		for _, o := range fp.GetOpsetImport() {
			f.OpsetImports = append(f.OpsetImports, canonical.OpsetID{Domain: o.GetDomain(), Version: o.GetVersion()})
		}
		for _, ap := range fp.GetAttributeProto() {
			a, err := attrFromProto(ap, nil, 0)
			if err != nil {
				return nil, fmt.Errorf("function %s: %w", fp.GetName(), err)
			}
			f.AttributeDefaults = append(f.AttributeDefaults, a)
		}
		gp := &onnxpb.GraphProto{Name: proto.String(fp.GetName()), Node: fp.GetNode()}
		for _, in := range fp.GetInput() {
			gp.Input = append(gp.Input, &onnxpb.ValueInfoProto{Name: proto.String(in)})
		}
		for _, out := range fp.GetOutput() {
			gp.Output = append(gp.Output, &onnxpb.ValueInfoProto{Name: proto.String(out)})
		}
		body, err := graphFromProto(gp, nil, nil, 0)
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", fp.GetName(), err)
		}
		f.Body = body
		m.Functions = append(m.Functions, f)
	}
	return m, nil
}

func graphFromProto(gp *onnxpb.GraphProto, parent *canonical.Graph, owner *canonical.Node, depth int) (*canonical.Graph, error) {
	if gp == nil {
		return nil, fmt.Errorf("missing graph")
	}
	if depth > maxSubgraphDepth {
		return nil, fmt.Errorf("graph %q: subgraphs nested deeper than %d", gp.GetName(), maxSubgraphDepth)
	}
	g := canonical.NewGraph(gp.GetName())
	g.Parent, g.Owner = parent, owner
	for _, vi := range gp.GetInput() {
		if _, err := g.AddInput(vi.GetName(), vi.GetType()); err != nil {
			return nil, err
		}
	}
	for _, tp := range gp.GetInitializer() {
		t, err := TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("graph %q: initializer: %w", gp.GetName(), err)
		}
		var existing *canonical.Value
		for _, in := range g.Inputs {
			if in.Name == t.Name {
				existing = in
			}
		}
		if existing != nil {
			existing.Const = t
			g.Initializers = append(g.Initializers, existing)
			continue
		}
		if _, err := g.AddInitializer(t); err != nil {
			return nil, err
		}
	}
	types := map[string]*onnxpb.TypeProto{}
	for _, vi := range gp.GetValueInfo() {
		types[vi.GetName()] = vi.GetType()
	}
	for _, vi := range gp.GetOutput() {
		types[vi.GetName()] = vi.GetType()
	}
	for _, np := range gp.GetNode() {
		var ins []*canonical.Value
		for _, name := range np.GetInput() {
			if name == "" {
				ins = append(ins, nil)
				continue
			}
			v := g.Lookup(name)
			if v == nil {
				return nil, fmt.Errorf("graph %q: node %q (%s): input %q is not defined before use", gp.GetName(), np.GetName(), np.GetOpType(), name)
			}
			ins = append(ins, v)
		}
		n, err := g.AddNode(np.GetName(), np.GetDomain(), np.GetOpType(), ins, np.GetOutput())
		if err != nil {
			return nil, err
		}
		n.Overload = np.GetOverload()
		for _, o := range n.Outputs {
			if o != nil {
				o.Type = types[o.Name]
			}
		}
		for _, ap := range np.GetAttribute() {
			a, err := attrFromProto(ap, n, depth)
			if err != nil {
				return nil, fmt.Errorf("graph %q: node %s: %w", gp.GetName(), n, err)
			}
			n.Attributes = append(n.Attributes, a)
		}
	}
	for _, vi := range gp.GetOutput() {
		v := g.Lookup(vi.GetName())
		if v == nil {
			return nil, fmt.Errorf("graph %q: output %q is not defined", gp.GetName(), vi.GetName())
		}
		if v.Type == nil {
			v.Type = vi.GetType()
		}
		g.Outputs = append(g.Outputs, v)
	}
	return g, nil
}

func attrFromProto(ap *onnxpb.AttributeProto, owner *canonical.Node, depth int) (*canonical.Attribute, error) {
	a := &canonical.Attribute{
		Name: ap.GetName(), Type: ap.GetType(), RefAttrName: ap.GetRefAttrName(), DocString: ap.GetDocString(),
		F: ap.GetF(), I: ap.GetI(), S: ap.GetS(), Floats: ap.GetFloats(), Ints: ap.GetInts(), Strings: ap.GetStrings(),
		SparseTensor: ap.GetSparseTensor(), TP: ap.GetTp(), SparseTensors: ap.GetSparseTensors(), TypeProtos: ap.GetTypeProtos(),
	}
	var err error
	if tp := ap.GetT(); tp != nil {
		if a.T, err = TensorFromProto(tp); err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
	}
	for _, tp := range ap.GetTensors() {
		t, err := TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		a.Tensors = append(a.Tensors, t)
	}
	var parent *canonical.Graph
	if owner != nil {
		parent = owner.Graph
	}
	if gp := ap.GetG(); gp != nil {
		if a.G, err = graphFromProto(gp, parent, owner, depth+1); err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
	}
	for _, gp := range ap.GetGraphs() {
		sg, err := graphFromProto(gp, parent, owner, depth+1)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		a.Graphs = append(a.Graphs, sg)
	}
	return a, nil
}

// TensorFromProto converts a TensorProto with inline data into a Tensor
// holding packed little-endian bytes.
func TensorFromProto(tp *onnxpb.TensorProto) (*canonical.Tensor, error) {
	dt := canonical.DataType(tp.GetDataType())
	dims := append([]int64{}, tp.GetDims()...)
	if len(tp.GetExternalData()) > 0 {
		return nil, fmt.Errorf("tensor %q: external data is not supported by this loader", tp.GetName())
	}
	if dt == canonical.String {
		return canonical.NewStringTensor(tp.GetName(), dims, tp.GetStringData()), nil
	}
	if canonical.ElemBits(dt) == 0 {
		return nil, fmt.Errorf("tensor %q: unsupported data type %v", tp.GetName(), dt)
	}
	n, err := canonical.NumElements(dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
	}
	want := (n*int64(canonical.ElemBits(dt)) + 7) / 8
	if tp.RawData != nil {
		if int64(len(tp.RawData)) != want {
			return nil, fmt.Errorf("tensor %q: raw_data holds %d bytes, dims %v of %v need %d", tp.GetName(), len(tp.RawData), dims, dt, want)
		}
		return canonical.NewTensor(tp.GetName(), dt, dims, tp.RawData), nil
	}
	out := make([]byte, 0, want)
	switch dt {
	case canonical.Float, canonical.Complex64:
		for _, f := range tp.GetFloatData() {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case canonical.Double, canonical.Complex128:
		for _, f := range tp.GetDoubleData() {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
		}
	case canonical.Int64:
		for _, v := range tp.GetInt64Data() {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case canonical.Uint64:
		for _, v := range tp.GetUint64Data() {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	case canonical.Uint32:
		for _, v := range tp.GetUint64Data() {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case canonical.Int32:
		for _, v := range tp.GetInt32Data() {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case canonical.Int16, canonical.Uint16, canonical.Float16, canonical.BFloat16:
		for _, v := range tp.GetInt32Data() {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	default: // 8, 4 and 2 bit types: one (packed) byte per int32 entry
		for _, v := range tp.GetInt32Data() {
			out = append(out, byte(v))
		}
	}
	if int64(len(out)) != want {
		return nil, fmt.Errorf("tensor %q: data holds %d bytes, dims %v of %v need %d", tp.GetName(), len(out), dims, dt, want)
	}
	return canonical.NewTensor(tp.GetName(), dt, dims, out), nil
}

// TensorToProto converts t into a TensorProto with raw_data (string_data
// for STRING tensors).
func TensorToProto(t *canonical.Tensor) (*onnxpb.TensorProto, error) {
	tp := &onnxpb.TensorProto{Dims: append([]int64{}, t.Dims...), DataType: proto.Int32(int32(t.DataType))}
	if t.Name != "" {
		tp.Name = proto.String(t.Name)
	}
	if t.DataType == canonical.String {
		s, err := t.Strings()
		if err != nil {
			return nil, err
		}
		tp.StringData = s
		return tp, nil
	}
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	tp.RawData = append([]byte{}, b...)
	return tp, nil
}

// ReadTensorFile reads a TensorProto .pb file.
func ReadTensorFile(path string) (*canonical.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tensor: %w", err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		return nil, fmt.Errorf("tensor %s: decoding protobuf: %w", path, err)
	}
	t, err := TensorFromProto(tp)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", path, err)
	}
	return t, nil
}

// WriteTensorFile writes t as a TensorProto .pb file atomically.
func WriteTensorFile(path string, t *canonical.Tensor) error {
	tp, err := TensorToProto(t)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	b, err := proto.Marshal(tp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes data to a temporary file beside path and renames
// it over path.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	name := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
