package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// DynamicDim makes axis Axis of the graph input or output Value symbolic,
// named Param ("" names it VALUE_dimAXIS).
type DynamicDim struct {
	Value string
	Axis  int
	Param string
}

// ParseDynamic parses --dynamic NAME:AXIS[=PARAM] values.
func ParseDynamic(specs []string) ([]DynamicDim, error) {
	var out []DynamicDim
	for _, s := range specs {
		spec, param, _ := strings.Cut(s, "=")
		i := strings.LastIndexByte(spec, ':')
		if i <= 0 {
			return nil, fmt.Errorf("--dynamic %q: want NAME:AXIS or NAME:AXIS=PARAM", s)
		}
		ax, err := strconv.Atoi(spec[i+1:])
		if err != nil || ax < 0 {
			return nil, fmt.Errorf("--dynamic %q: the axis must be a non-negative integer", s)
		}
		out = append(out, DynamicDim{Value: spec[:i], Axis: ax, Param: param})
	}
	return out, nil
}

// ParseRenames parses --rename OLD=NEW values.
func ParseRenames(specs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range specs {
		o, n, ok := strings.Cut(s, "=")
		if !ok || o == "" || n == "" {
			return nil, fmt.Errorf("--rename %q: want OLD=NEW", s)
		}
		out[o] = n
	}
	return out, nil
}

// editIO applies SetDims, Dynamic and Rename to the result's graph inputs
// and outputs (on a copy when the result is the imported model itself),
// then infers the shapes inside again. Verification then generates the
// fixed dims at their size and matches renamed values by position.
func (c *converter) editIO(imported, result *canonical.Model) (*canonical.Model, error) {
	o := c.opts
	if len(o.SetDims) == 0 && len(o.Dynamic) == 0 && len(o.Rename) == 0 {
		return result, nil
	}
	if result == imported {
		cp, err := result.Clone()
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: %w", c.in, err))
		}
		c.closers = append(c.closers, cp)
		result = cp
	}
	g := result.Graph
	io := append(append([]*canonical.Value{}, g.Inputs...), g.Outputs...)
	for _, v := range io {
		// A copy: a TypeProto may be shared with other values.
		if v != nil && v.Type != nil {
			v.Type = proto.Clone(v.Type).(*onnxpb.TypeProto)
		}
	}
	cv := &c.res.Conversion
	for name, n := range o.SetDims {
		found := false
		for _, v := range io {
			for _, d := range tensorDims(v) {
				if d.GetDimParam() == name {
					d.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: n}
					found = true
				}
			}
		}
		if !found {
			return nil, usageErr("--set-dim %s=%d: no input or output of %s has a dim named %q", name, n, c.in, name)
		}
		cv.Applied = append(cv.Applied, fmt.Sprintf("dim %s set to %d", name, n))
	}
	for _, dd := range o.Dynamic {
		v := findIO(io, dd.Value)
		ds := tensorDims(v)
		if v == nil || dd.Axis >= len(ds) {
			return nil, usageErr("--dynamic %s:%d: %s has no input or output %q with a dim %d", dd.Value, dd.Axis, c.in, dd.Value, dd.Axis)
		}
		p := dd.Param
		if p == "" {
			p = dd.Value + "_dim" + strconv.Itoa(dd.Axis)
		}
		ds[dd.Axis].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: p}
		cv.Applied = append(cv.Applied, fmt.Sprintf("dim %d of %s made symbolic (%s)", dd.Axis, dd.Value, p))
	}
	for old, nw := range o.Rename {
		v := findIO(io, old)
		if v == nil {
			return nil, usageErr("--rename %s=%s: %s has no input or output %q", old, nw, c.in, old)
		}
		if err := g.RenameValue(v, nw); err != nil {
			return nil, usageErr("--rename %s=%s: %v", old, nw, err)
		}
		cv.Applied = append(cv.Applied, fmt.Sprintf("renamed %s to %s", old, nw))
	}
	if len(o.SetDims) > 0 || len(o.Dynamic) > 0 {
		// The shapes inside follow the new dims: infer them again.
		isIO := map[*canonical.Value]bool{}
		for _, v := range io {
			isIO[v] = true
		}
		for _, n := range g.Nodes {
			for _, out := range n.Outputs {
				if out != nil && !isIO[out] {
					out.Type = nil
				}
			}
		}
		g.ValueInfo = nil
		if _, err := infer.Infer(result, infer.Options{}); err != nil {
			return nil, invalidErr(fmt.Errorf("%s: inferring the shapes after the dim edits: %w", c.in, err))
		}
	}
	if c.opts.Verify != nil {
		vo := *c.opts.Verify
		if len(o.Rename) > 0 {
			vo.ByOrder = true
		}
		if len(o.SetDims) > 0 {
			dims := map[string]int64{}
			for k, v := range vo.Dims {
				dims[k] = v
			}
			for k, v := range o.SetDims {
				if _, set := dims[k]; !set {
					dims[k] = v
				}
			}
			vo.Dims = dims
		}
		c.opts.Verify = &vo
	}
	return result, nil
}

func findIO(vs []*canonical.Value, name string) *canonical.Value {
	for _, v := range vs {
		if v != nil && v.Name == name {
			return v
		}
	}
	return nil
}

// tensorDims returns the shape dims of v's tensor type (nil when none).
func tensorDims(v *canonical.Value) []*onnxpb.TensorShapeProto_Dimension {
	if v == nil || v.Type == nil || v.Type.GetTensorType() == nil || v.Type.GetTensorType().GetShape() == nil {
		return nil
	}
	return v.Type.GetTensorType().GetShape().GetDim()
}
