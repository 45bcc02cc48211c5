// Package onnx is the importer glue for ONNX models themselves: binary
// protobuf (.onnx, any IR version 3 to 13, with external data) and the ONNX
// text syntax (.onnxtxt). The model is read with package canonical (which
// checks sizes, offsets and external data paths of the untrusted input)
// in process (binary models memory-mapped, external data beside them), so
// there is no 2 GiB protobuf handoff.
//
// Detection is conservative: a binary ModelProto has no magic number, so
// Detect walks the first protobuf fields of the file and only claims it
// when they are ModelProto fields with the right wire types and an IR
// version in range. Its confidence stays below the 1 of importers with a
// real magic number, so it never wins a tie against them.
package onnx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/importers"
)

// Name is the importer's plugin and format name.
const Name = "onnx"

// IR versions read (those canonical supports).
const (
	MinIRVersion = 3
	MaxIRVersion = 13
)

// maxTextSize bounds the .onnxtxt files read (text is parsed in memory).
const maxTextSize = 1 << 30

// Confidences returned by Detect.
const (
	confStructure = 0.9 // the head parses as a ModelProto
	confExtension = 0.4 // only the extension says so
)

// Extensions are the file name suffixes of ONNX models.
func Extensions() []string { return []string{".onnx", ".onnxtxt"} }

// modelTags are the tags (field number and wire type) that may follow the
// ir_version field at the start of a ModelProto written by protobuf
// serializers (fields in number order).
var modelTags = []byte{
	2<<3 | 2,  // producer_name
	3<<3 | 2,  // producer_version
	4<<3 | 2,  // domain
	5<<3 | 0,  // model_version
	6<<3 | 2,  // doc_string
	7<<3 | 2,  // graph
	8<<3 | 2,  // opset_import
	14<<3 | 2, // metadata_props
}

// Magic returns the byte patterns a binary ModelProto written in field
// order starts with: ir_version (field 1, varint 3..13) followed by the tag
// of another ModelProto field.
func Magic() []importers.Magic {
	var out []importers.Magic
	for v := byte(MinIRVersion); v <= MaxIRVersion; v++ {
		for _, t := range modelTags {
			out = append(out, importers.Magic{Bytes: []byte{1<<3 | 0, v, t}})
		}
	}
	return out
}

// modelFields maps the ModelProto field numbers to their wire types.
var modelFields = map[protowire.Number]protowire.Type{
	1: protowire.VarintType, // ir_version
	2: protowire.BytesType, 3: protowire.BytesType, 4: protowire.BytesType,
	5: protowire.VarintType, // model_version
	6: protowire.BytesType, 7: protowire.BytesType, 8: protowire.BytesType,
	14: protowire.BytesType, 20: protowire.BytesType, 25: protowire.BytesType, 26: protowire.BytesType,
}

// detect tells how sure it is that the file at path, whose first bytes
// are head, is an ONNX model. A binary head is accepted when every field
// it holds is a ModelProto field of the right wire type, an ir_version in
// 3..13 is among them and a graph or opset_import field starts in it; text
// is accepted by extension only.
func detect(path string, head []byte) float32 {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".onnxtxt" {
		return confStructure
	}
	if looksLikeModel(head) {
		return confStructure
	}
	if ext == ".onnx" {
		return confExtension
	}
	return 0
}

// looksLikeModel walks the protobuf fields of head (a prefix of a file).
func looksLikeModel(head []byte) bool {
	b := head
	irOK, body := false, false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		want, known := modelFields[num]
		if !known || want != typ {
			return false
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false // cut by the end of head: undecided, say no
			}
			if num == 1 {
				if v < MinIRVersion || v > MaxIRVersion {
					return false
				}
				irOK = true
			}
			b = b[n:]
		case protowire.BytesType:
			l, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false
			}
			if num == 7 || num == 8 {
				body = true
			}
			if uint64(len(b)-n) < l {
				// The field runs past the head: what was seen decides.
				return irOK && body
			}
			b = b[n+int(l):]
		}
	}
	return irOK && body
}

// New returns the ONNX importer. It reads in process: a binary model is
// memory-mapped by canonical.Load, with its external data beside it, so
// models over 2 GiB need no handoff; text is parsed by onnxtext.
func New() importers.Importer { return importer{} }

type importer struct{}

// Describe names the format: "onnx", extensions .onnx and .onnxtxt, and
// the byte patterns of Magic.
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "ONNX model: binary protobuf (IR 3 to 13, external data) or ONNX text syntax (.onnxtxt)",
		Extensions: Extensions(),
		Magic:      Magic(),
		// ONNX's reference runtime: the onnxconv-plugin-onnxruntime plugin,
		// when installed.
		Runtime: "onnxruntime",
	}
}

// Detect is 0.9 for a head that parses as a ModelProto or a .onnxtxt
// name, 0.4 for a .onnx name alone, else 0 (see the package comment).
func (importer) Detect(path string, head []byte) float32 { return detect(path, head) }

// Import reads the model at path. The onnx importer takes no options.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	if _, err := (importers.OptionSet[struct{}]{Name: Name}).Parse(opts); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("onnx import %s: %w", path, err)
	}
	m, err := Read(path)
	if err != nil {
		return nil, err
	}
	res := &importers.Result{Model: m}
	if moved := SortNodes(m); moved > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d node(s) were not in topological order (ONNX requires it; ONNX Runtime sorts them itself): sorted on import, keeping file order where the dependencies allow", moved))
	}
	return res, nil
}

// SortNodes puts the nodes of every graph of m (the main graph and the
// subgraphs below it) in a topological order, keeping file order where
// the dependencies allow, and returns how many nodes changed place. Files
// come unsorted (a float16 conversion that appends its Casts at the end)
// and ONNX Runtime runs them; a graph with a cycle is left as it is, for
// the checker to name.
func SortNodes(m *canonical.Model) int {
	moved := 0
	_ = canonical.WalkGraphs(m.Graph, func(g *canonical.Graph, _ string) error {
		order, err := g.TopoSort()
		if err != nil || len(order) != len(g.Nodes) {
			return nil
		}
		n := 0
		for i, node := range order {
			if g.Nodes[i] != node {
				n++
			}
		}
		if n > 0 {
			g.Nodes = order
			moved += n
		}
		return nil
	})
	return moved
}

// Read loads the model at path (binary or .onnxtxt text) and checks its IR
// version. Close the model when done.
func Read(path string) (*canonical.Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("onnx import: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("onnx import: %w", &importers.NotRegularError{Path: path, Mode: st.Mode()})
	}
	var m *canonical.Model
	if strings.EqualFold(filepath.Ext(path), ".onnxtxt") {
		src, err := importers.ReadFile(path, maxTextSize)
		if err != nil {
			return nil, fmt.Errorf("onnx import: %w", err)
		}
		mp, err := onnxtext.Parse(path, src)
		if err != nil {
			return nil, fmt.Errorf("onnx import: %w; fix the text or re-export it", err)
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("onnx import %s: %w", path, err)
		}
		if m, err = canonical.FromProto(mp, dir); err != nil {
			return nil, fmt.Errorf("onnx import %s: %w", path, err)
		}
	} else {
		if m, err = canonical.Load(path, canonical.LoadOptions{}); err != nil {
			return nil, fmt.Errorf("onnx import %s: %w; the file is not a readable ONNX model (re-export it, or check that its external data files are beside it)", path, err)
		}
	}
	if m.IRVersion < MinIRVersion || m.IRVersion > MaxIRVersion {
		ir := m.IRVersion
		_ = m.Close()
		return nil, fmt.Errorf("onnx import %s: IR version %d is not supported (%d to %d); re-export the model with a newer (or older) exporter",
			path, ir, MinIRVersion, MaxIRVersion)
	}
	if m.Graph == nil {
		_ = m.Close()
		return nil, fmt.Errorf("onnx import %s: the model has no graph; re-export it", path)
	}
	return m, nil
}
