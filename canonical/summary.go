package canonical

import (
	"sort"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Summary describes a model for people (onnxconv inspect).
type Summary struct {
	IRVersion       int64          `json:"ir_version"`
	ProducerName    string         `json:"producer_name,omitempty"`
	ProducerVersion string         `json:"producer_version,omitempty"`
	Domain          string         `json:"domain,omitempty"`
	ModelVersion    int64          `json:"model_version,omitempty"`
	GraphName       string         `json:"graph_name,omitempty"`
	Opsets          []SummaryOpset `json:"opsets"`
	Inputs          []SummaryValue `json:"inputs"`
	Outputs         []SummaryValue `json:"outputs"`
	Nodes           int            `json:"nodes"`
	Ops             []SummaryOp    `json:"ops"`
	Functions       int            `json:"functions"`
	Initializers    int            `json:"initializers"`
	// Parameters counts the elements of initializers and of Constant
	// nodes' tensors (value; sparse_value counts its stored values), in
	// every graph and function; ParameterBytes is their size.
	Parameters     int64 `json:"parameters"`
	ParameterBytes int64 `json:"parameter_bytes"`
	// ConstantTensors counts the Constant nodes whose tensor is counted
	// in Parameters.
	ConstantTensors int              `json:"constant_tensors,omitempty"`
	ExternalFiles   []SummaryExtFile `json:"external_files,omitempty"`
}

// SummaryOpset is one imported operator set.
type SummaryOpset struct {
	Domain  string `json:"domain"`
	Version int64  `json:"version"`
}

// SummaryValue is a graph input or output.
type SummaryValue struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Initializer is set for an input that has a default value.
	Initializer bool `json:"initializer,omitempty"`
}

// SummaryOp counts the nodes running one operator (subgraphs and
// functions included).
type SummaryOp struct {
	Domain string `json:"domain,omitempty"`
	Op     string `json:"op"`
	Count  int    `json:"count"`
}

// SummaryExtFile is one external data file and what it holds.
type SummaryExtFile struct {
	Location string `json:"location"`
	Tensors  int    `json:"tensors"`
	Bytes    int64  `json:"bytes"`
}

// Summarize describes m: versions, opsets, inputs and outputs, the
// operator histogram, parameter count and bytes (initializers and
// Constant node tensors of every graph), and external data files. It
// reads no tensor data.
func Summarize(m *Model) Summary {
	s := Summary{
		IRVersion:       m.IRVersion,
		ProducerName:    m.ProducerName,
		ProducerVersion: m.ProducerVersion,
		Domain:          m.Domain,
		ModelVersion:    m.ModelVersion,
		Functions:       len(m.Functions),
		Opsets:          []SummaryOpset{},
		Inputs:          []SummaryValue{},
		Outputs:         []SummaryValue{},
		Ops:             []SummaryOp{},
	}
	for _, o := range m.OpsetImports {
		s.Opsets = append(s.Opsets, SummaryOpset{Domain: o.Domain, Version: o.Version})
	}
	ops := map[[2]string]int{}
	ext := map[string]*SummaryExtFile{}
	var extOrder []string
	// countSparse counts the stored values of a sparse tensor and the
	// bytes of its values and indices.
	countSparse := func(sp *onnxpb.SparseTensorProto) {
		for i, tp := range []*onnxpb.TensorProto{sp.GetValues(), sp.GetIndices()} {
			if tp == nil {
				continue
			}
			n, err := NumElements(tp.GetDims())
			if err != nil {
				continue
			}
			if i == 0 {
				s.Parameters += n
			}
			if b := int64(ElemBits(DataType(tp.GetDataType()))); b > 0 && n <= (1<<62)/b {
				s.ParameterBytes += (n*b + 7) / 8
			}
		}
	}
	countTensor := func(t *Tensor) {
		if n, err := t.NumElements(); err == nil {
			s.Parameters += n
		}
		if t.DataType == String {
			for _, b := range t.strs {
				s.ParameterBytes += int64(len(b))
			}
		} else if b, err := t.ByteSize(); err == nil {
			s.ParameterBytes += b
		}
		if loc, _, length := t.ExternalLocation(); loc != "" {
			f := ext[loc]
			if f == nil {
				f = &SummaryExtFile{Location: loc}
				ext[loc] = f
				extOrder = append(extOrder, loc)
			}
			f.Tensors++
			if length < 0 {
				length, _ = t.ByteSize()
			}
			f.Bytes += length
		}
	}
	walk := func(g *Graph) {
		_ = WalkGraphs(g, func(g *Graph, _ string) error {
			for _, v := range g.Initializers {
				s.Initializers++
				countTensor(v.Const)
			}
			for _, n := range g.Nodes {
				s.Nodes++
				ops[[2]string{n.Domain, n.OpType}]++
				constant := n.OpType == "Constant" && normDomain(n.Domain) == DefaultDomain
				counted := false
				for _, a := range n.Attributes {
					if a.T != nil {
						loc, _, _ := a.T.ExternalLocation()
						// A Constant's tensor is a parameter like an
						// initializer; other tensor attributes count
						// when their data was moved out like one.
						if constant || loc != "" {
							countTensor(a.T)
							counted = true
						}
					}
					if constant && a.SparseTensor != nil {
						countSparse(a.SparseTensor)
						counted = true
					}
				}
				if constant && counted {
					s.ConstantTensors++
				}
			}
			return nil
		})
	}
	if g := m.Graph; g != nil {
		s.GraphName = g.Name
		for _, v := range g.Inputs {
			s.Inputs = append(s.Inputs, SummaryValue{Name: v.Name, Type: TypeString(v.Type), Initializer: v.Const != nil})
		}
		for _, v := range g.Outputs {
			s.Outputs = append(s.Outputs, SummaryValue{Name: v.Name, Type: TypeString(v.Type)})
		}
		walk(g)
	}
	for _, f := range m.Functions {
		if f.Body != nil {
			walk(f.Body)
		}
	}
	for k, c := range ops {
		s.Ops = append(s.Ops, SummaryOp{Domain: k[0], Op: k[1], Count: c})
	}
	sort.Slice(s.Ops, func(i, j int) bool {
		a, b := s.Ops[i], s.Ops[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		return a.Op < b.Op
	})
	for _, loc := range extOrder {
		s.ExternalFiles = append(s.ExternalFiles, *ext[loc])
	}
	return s
}
