// Command onnxconv-plugin-csvgraph is a complete third-party importer for
// onnxconv: it reads "csvgraph" files, a CSV listing of a graph, and writes
// an ONNX model. See README.md.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

func main() {
	sdk.ServeImporter(sdk.Importer{
		Name:        "csvgraph",
		Version:     "0.1",
		Description: "CSV listing of an ONNX graph (input, op and output rows)",
		Extensions:  []string{".csvg"},
		Magic:       []sdk.Magic{{Offset: 0, Bytes: []byte("#csvgraph")}},
		Import:      importCSV,
	})
}

func importCSV(ctx context.Context, in []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
	r := csv.NewReader(bytes.NewReader(in))
	r.Comment, r.FieldsPerRecord, r.TrimLeadingSpace = '#', -1, true
	g := &onnxpb.GraphProto{Name: proto.String(cmp.Or(opts["name"], "csvgraph"))}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("csvgraph: %w", err)
		}
		line, _ := r.FieldPos(0)
		switch {
		case row[0] == "op" && len(row) >= 4:
			g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String(row[1]), Name: proto.String(fmt.Sprintf("%s_%d", row[1], line)),
				Input: strings.Split(row[2], ";"), Output: strings.Split(row[3], ";")})
		case (row[0] == "input" || row[0] == "output") && len(row) == 4:
			v, err := valueInfo(row[1], row[2], row[3])
			if err != nil {
				return nil, fmt.Errorf("csvgraph: line %d: %w", line, err)
			}
			if row[0] == "input" {
				g.Input = append(g.Input, v)
			} else {
				g.Output = append(g.Output, v)
			}
		default:
			return nil, fmt.Errorf("csvgraph: line %d: want op,TYPE,IN;IN,OUT or input|output,NAME,TYPE,DIMS; got %q", line, row)
		}
	}
	if len(g.Node) == 0 {
		sdk.Warn(ctx, "csvgraph: the graph has no op rows")
	}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), ProducerName: proto.String("onnxconv-plugin-csvgraph"), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}}}, nil
}

// valueInfo builds a tensor value from a name, an element type ("float")
// and dims ("1x3", "N" for a symbolic dim).
func valueInfo(name, typ, dims string) (*onnxpb.ValueInfoProto, error) {
	et, ok := onnxpb.TensorProto_DataType_value[strings.ToUpper(typ)]
	if !ok {
		return nil, fmt.Errorf("unknown element type %q", typ)
	}
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range strings.Split(dims, "x") {
		if n, err := strconv.ParseInt(d, 10, 64); err == nil {
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: n}})
		} else {
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		}
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(et), Shape: shape}}}}, nil
}
