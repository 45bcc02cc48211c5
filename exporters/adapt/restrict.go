package adapt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// verdict is the outcome of one rule on one node.
type verdict int

const (
	pass    verdict = iota
	fail            // the node breaks the rule
	unknown         // the model does not say (rank, shape or value unknown)
)

// outcome is a verdict with what the node has ("it has 3 spatial
// dimensions", "its rank is unknown").
type outcome struct {
	v      verdict
	detail string
}

var passed = outcome{v: pass}

func failed(format string, args ...any) outcome {
	return outcome{v: fail, detail: fmt.Sprintf(format, args...)}
}

func undecided(format string, args ...any) outcome {
	return outcome{v: unknown, detail: fmt.Sprintf(format, args...)}
}

// checkRestrictions decides the target's restrictions of n's operator
// with the profile's rules and adds a violation (or warning) per rule the
// node breaks or that the model cannot decide.
func checkRestrictions(r *Report, p *profiles.Profile, dom string, g *canonical.Graph, path string, idx int, n *canonical.Node) {
	for _, rule := range p.Checks(dom, n.OpType) {
		v := Violation{Graph: path, Node: n.Name, OpType: n.OpType, Domain: n.Domain, Index: idx}
		prefix := fmt.Sprintf("%s restricts %s: %s", p.Name, n.OpType, rule.Says)
		switch rule.Rule {
		case profiles.RuleNote:
			v.Problem, v.Warning = prefix, true
		case profiles.RuleManual:
			v.Problem, v.Fix, v.Warning = prefix, "onnxconv cannot check this from the model: check that it stays within it", true
		default:
			o := evalRule(rule, g, n)
			switch o.v {
			case pass:
				continue
			case fail:
				v.Problem = prefix + "; " + o.detail
				v.Warning = rule.Warning
				if !rule.Warning {
					v.Fix = "change the node so that it stays within the restriction, or pick another target"
				}
			case unknown:
				v.Problem = prefix + "; " + o.detail
				v.Warning = true
				v.Fix = "run 'onnxconv infer' on the model so that this can be checked, or check it by hand"
			}
		}
		r.Violations = append(r.Violations, v)
	}
}

// evalRule checks one rule on n.
func evalRule(rule profiles.Rule, g *canonical.Graph, n *canonical.Node) outcome {
	switch rule.Rule {
	case profiles.RuleSpatialRank:
		sr := -1
		what := ""
		if a := n.Attr("kernel_shape"); a != nil {
			sr, what = len(a.Ints), "kernel_shape"
		} else if rk, known := rankOf(n.Input(rule.Input)); known {
			sr, what = rk-2, fmt.Sprintf("input %d", rule.Input)
		}
		switch {
		case sr < 0:
			return undecided("its number of spatial dimensions is unknown (no kernel_shape, rank of input %d unknown)", rule.Input)
		case !slices.Contains(rule.Ranks, sr):
			return failed("it has %d spatial dimension(s) (from %s)", sr, what)
		}
	case profiles.RuleInputRank:
		in := n.Input(rule.Input)
		if in == nil {
			return passed
		}
		rk, known := rankOf(in)
		switch {
		case !known:
			return undecided("the rank of input %d %q is unknown", rule.Input, in.Name)
		case !slices.Contains(rule.Ranks, rk):
			return failed("input %d %q has rank %d", rule.Input, in.Name, rk)
		}
	case profiles.RuleAttrIn:
		a := n.Attr(rule.Attr)
		val := rule.Default
		if a != nil {
			if a.RefAttrName != "" {
				return undecided("%s comes from the calling function's attribute %s", rule.Attr, a.RefAttrName)
			}
			val = attrString(a)
		}
		if a == nil && rule.Default == "" {
			return passed
		}
		if !slices.Contains(rule.Values, val) {
			return failed("%s is %s", rule.Attr, val)
		}
	case profiles.RuleAttrUnset:
		if n.Attr(rule.Attr) != nil {
			return failed("%s is set", rule.Attr)
		}
	case profiles.RuleAllOnes:
		if a := n.Attr(rule.Attr); a != nil {
			for _, x := range a.Ints {
				if x != 1 {
					return failed("%s is %v", rule.Attr, a.Ints)
				}
			}
		}
	case profiles.RulePadsSymmetric:
		if a := n.Attr("pads"); a != nil && len(a.Ints)%2 == 0 {
			h := len(a.Ints) / 2
			if !slices.Equal(a.Ints[:h], a.Ints[h:]) {
				return failed("pads are %v", a.Ints)
			}
		}
	case profiles.RuleInputAbsent:
		if in := n.Input(rule.Input); in != nil {
			return failed("input %d %q is given", rule.Input, in.Name)
		}
	case profiles.RuleOutputUnused:
		if o := n.Output(rule.Output); o != nil && (len(o.Uses()) > 0 || isListed(g.Outputs, o)) {
			return failed("output %d %q is used", rule.Output, o.Name)
		}
	case profiles.RuleInputConst:
		in := n.Input(rule.Input)
		if in == nil {
			return passed
		}
		return constness(g, rule.Input, in)
	case profiles.RuleInputZero, profiles.RuleInputFalse, profiles.RuleConstBelow:
		in := n.Input(rule.Input)
		if in == nil {
			return passed
		}
		t := constTensor(g, in)
		if t == nil {
			if o := constness(g, rule.Input, in); o.v == fail {
				return o
			}
			return undecided("input %d %q is computed at run time", rule.Input, in.Name)
		}
		vals, err := t.Float64s()
		if err != nil {
			return undecided("input %d %q cannot be read: %v", rule.Input, in.Name, err)
		}
		for _, x := range vals {
			switch {
			case rule.Rule == profiles.RuleConstBelow && x >= rule.Max:
				return failed("input %d %q is %g", rule.Input, in.Name, x)
			case rule.Rule != profiles.RuleConstBelow && x != 0:
				return failed("input %d %q holds %g", rule.Input, in.Name, x)
			}
		}
	case profiles.RuleInputStatic:
		in := n.Input(rule.Input)
		if in == nil {
			return passed
		}
		dims, known := dimsOf(in)
		if !known {
			return undecided("the shape of input %d %q is unknown", rule.Input, in.Name)
		}
		for i, d := range dims {
			if !d.Known {
				return failed("dimension %d of input %d %q is dynamic", i, rule.Input, in.Name)
			}
		}
	case profiles.RuleAxisStatic:
		in := n.Input(0)
		dims, known := dimsOf(in)
		if in == nil || !known {
			return undecided("the shape of the input is unknown")
		}
		axis, _ := strconv.ParseInt(rule.Default, 10, 64)
		if a := n.Attr(rule.Attr); a != nil {
			axis = a.I
		}
		if axis < 0 {
			axis += int64(len(dims))
		}
		if axis < 0 || axis >= int64(len(dims)) {
			return failed("%s %d is outside the input's rank %d", rule.Attr, axis, len(dims))
		}
		if !dims[axis].Known {
			return failed("dimension %d of input %q is dynamic", axis, in.Name)
		}
	case profiles.RuleInputType:
		in := n.Input(rule.Input)
		if in == nil {
			return passed
		}
		dt, known := elemType(in)
		if !known {
			return undecided("the element type of input %d %q is unknown", rule.Input, in.Name)
		}
		if !slices.Contains(rule.Values, typeName(dt)) {
			return failed("input %d %q is %s", rule.Input, in.Name, typeName(dt))
		}
	case profiles.RuleRealInput:
		in := n.Input(rule.Input)
		dims, known := dimsOf(in)
		if in == nil || !known || len(dims) == 0 || !dims[len(dims)-1].Known {
			return undecided("the last dimension of input %d is unknown", rule.Input)
		}
		if last := dims[len(dims)-1].Value; last != 1 {
			return failed("input %d %q has last dimension %d (complex)", rule.Input, in.Name, last)
		}
	case profiles.RuleSameActivations:
		if n.AttrString("direction", "forward") != "bidirectional" {
			return passed
		}
		acts := n.AttrStrings("activations", nil)
		if len(acts) == 0 || len(acts)%2 != 0 {
			return passed // the defaults are the same both ways
		}
		h := len(acts) / 2
		if !slices.Equal(acts[:h], acts[h:]) {
			return failed("the activations are %v forward and %v backward", acts[:h], acts[h:])
		}
	case profiles.RuleBranches:
		then, els := n.Attr("then_branch"), n.Attr("else_branch")
		if then == nil || els == nil || then.G == nil || els.G == nil {
			return passed
		}
		to, eo := then.G.Outputs, els.G.Outputs
		for i := 0; i < len(to) && i < len(eo); i++ {
			if to[i].Name == eo[i].Name {
				return failed("output %d of both branches is named %q", i, to[i].Name)
			}
			rt, kt := rankOf(to[i])
			re, ke := rankOf(eo[i])
			switch {
			case !kt || !ke:
				return undecided("the rank of output %d of a branch is unknown", i)
			case rt != re:
				return failed("output %d has rank %d in then_branch and %d in else_branch", i, rt, re)
			}
		}
	case profiles.RuleAxesIota:
		a := n.Attr("axes")
		if a == nil {
			return passed
		}
		rk, known := rankOf(n.Input(0))
		if !known {
			return undecided("axes is %v and the input's rank is unknown", a.Ints)
		}
		for i, x := range a.Ints {
			if x < 0 {
				x += int64(rk)
			}
			if x != int64(i) || len(a.Ints) != rk {
				return failed("axes is %v for an input of rank %d", a.Ints, rk)
			}
		}
	case profiles.RuleNoDownsampling:
		if n.AttrString("coordinate_transformation_mode", "half_pixel") != "align_corners" {
			return passed
		}
		if scales := n.Input(2); scales != nil {
			if t := constTensor(g, scales); t != nil {
				if vals, err := t.Float64s(); err == nil {
					if len(vals) == 0 && n.Input(3) != nil {
						return downsampledBySizes(g, n)
					}
					for _, x := range vals {
						if x < 1 {
							return failed("it scales by %g with align_corners", x)
						}
					}
					return passed
				}
			}
			return undecided("the scales are computed at run time")
		}
		if n.Input(3) != nil {
			return downsampledBySizes(g, n)
		}
	}
	return passed
}

// downsampledBySizes compares Resize's constant sizes with the input's
// static shape.
func downsampledBySizes(g *canonical.Graph, n *canonical.Node) outcome {
	t := constTensor(g, n.Input(3))
	if t == nil {
		return undecided("the sizes are computed at run time")
	}
	sizes, err := t.Int64s()
	dims, known := dimsOf(n.Input(0))
	if err != nil || !known || len(dims) != len(sizes) || n.Attr("axes") != nil {
		return undecided("the input's shape is unknown")
	}
	for i, s := range sizes {
		if !dims[i].Known {
			return undecided("dimension %d of the input is dynamic", i)
		}
		if s < dims[i].Value {
			return failed("it resizes dimension %d from %d to %d with align_corners", i, dims[i].Value, s)
		}
	}
	return passed
}

// constness tells whether v (input i of a node of g) is fixed when the
// model is built: an initializer that no graph input overrides, or a
// Constant's output. A graph input fails; a value other nodes compute is
// unknown (the runtime may fold it).
func constness(g *canonical.Graph, i int, v *canonical.Value) outcome {
	if constTensor(g, v) != nil {
		return passed
	}
	if isListed(g.Inputs, v) {
		return failed("input %d %q is a graph input", i, v.Name)
	}
	if p, _ := v.Producer(); p != nil {
		return undecided("input %d %q is computed by %s node %q (the runtime may fold it)", i, v.Name, p.OpType, p.Name)
	}
	return undecided("input %d %q comes from an outer graph", i, v.Name)
}

// constTensor returns v's value when it is fixed: an initializer not
// listed as a graph input, or the value attribute of a Constant.
func constTensor(g *canonical.Graph, v *canonical.Value) *canonical.Tensor {
	if v == nil {
		return nil
	}
	if v.Const != nil && !isListed(g.Inputs, v) {
		return v.Const
	}
	if p, _ := v.Producer(); p != nil && p.OpType == "Constant" && (p.Domain == "" || p.Domain == "ai.onnx") {
		if a := p.Attr("value"); a != nil && a.T != nil {
			return a.T
		}
	}
	return nil
}

// dimsOf returns v's dims when its rank is known.
func dimsOf(v *canonical.Value) ([]canonical.Dim, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil {
		dims := make([]canonical.Dim, len(v.Const.Dims))
		for i, d := range v.Const.Dims {
			dims[i] = canonical.Dim{Value: d, Known: true}
		}
		return dims, true
	}
	if v.Type == nil {
		return nil, false
	}
	_, dims, hasShape, isTensor := canonical.TensorTypeOf(v.Type)
	if !isTensor || !hasShape {
		return nil, false
	}
	return dims, true
}

func rankOf(v *canonical.Value) (int, bool) {
	dims, known := dimsOf(v)
	return len(dims), known
}

// attrString is the value of a scalar attribute as the rules write it.
func attrString(a *canonical.Attribute) string {
	switch a.Type {
	case canonical.AttrInt:
		return strconv.FormatInt(a.I, 10)
	case canonical.AttrFloat:
		return strconv.FormatFloat(float64(a.F), 'g', -1, 32)
	case canonical.AttrString:
		return string(a.S)
	}
	return strings.TrimPrefix(a.String(), a.Name+"=")
}

// typeAllowedWhere decides a limited element type of v (declared in the
// graph at path) from where v is (profiles.Types.Where).
func typeAllowedWhere(where string, main *canonical.Graph, path string, v *canonical.Value) bool {
	switch where {
	case profiles.TypeIO:
		return path == "main" && (isListed(main.Inputs, v) || isListed(main.Outputs, v))
	case profiles.TypeQuantized:
		if p, _ := v.Producer(); p != nil && (p.OpType == "QuantizeLinear" || p.OpType == "DynamicQuantizeLinear") {
			return true
		}
		uses := v.Uses()
		for _, u := range uses {
			if u.Node == nil || u.Node.OpType != "DequantizeLinear" {
				return false
			}
		}
		return len(uses) > 0
	}
	return true
}
