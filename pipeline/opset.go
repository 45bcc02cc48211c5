package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/opset/convert"
)

// Opset moves the ONNX model in to opts.Opset (and opts.MLOpset) and writes
// it to out: Convert for ONNX input, with the same options, verification
// and overwrite rules. At least one of Opset and MLOpset must be set.
func Opset(ctx context.Context, in, out string, opts Options) (*Result, error) {
	if opts.Opset == 0 && opts.MLOpset == 0 {
		return nil, usageErr("give the target opset (ai.onnx) and/or the ai.onnx.ml opset")
	}
	if opts.Target != "" {
		return nil, usageErr("opset moves a model between opsets; fit it to a target runtime with convert --target")
	}
	if opts.From == "" {
		opts.From = "onnx"
	}
	return Convert(ctx, in, out, opts)
}

// PlanResult lists what blocks a conversion.
type PlanResult struct {
	Model    string            `json:"model"`
	From     int64             `json:"from"`
	To       int               `json:"to"`
	FromML   int64             `json:"from_ml,omitempty"`
	ToML     int               `json:"to_ml,omitempty"`
	Blockers []convert.Blocker `json:"blockers"`
}

// Plan converts nothing: it lists every node of the ONNX model in that
// blocks the move to opset (and mlOpset), with the reason and a fix. lo
// loads the model (its Importers name a file that is not ONNX).
func Plan(ctx context.Context, in string, opset, mlOpset int, lo LoadOptions) (*PlanResult, error) {
	if opset == 0 && mlOpset == 0 {
		return nil, usageErr("give the target opset (ai.onnx) and/or the ai.onnx.ml opset")
	}
	if opset < 0 || mlOpset < 0 {
		return nil, usageErr("the opset and ml opset must be positive")
	}
	in, err := inputFile(lo.Importers, in)
	if err != nil {
		return nil, err
	}
	m, err := Load(in, lo)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if err := ctx.Err(); err != nil {
		return nil, inputErr(err)
	}
	blockers, err := convert.Plan(m, convert.Options{To: opset, ToML: mlOpset})
	if err != nil {
		var be *convert.BlockedError
		if !errors.As(err, &be) {
			return nil, usageErr("%s: %v", in, err)
		}
		blockers = be.Blockers
	}
	if blockers == nil {
		blockers = []convert.Blocker{}
	}
	return &PlanResult{Model: in, From: m.Opset(""), To: opset, FromML: m.Opset("ai.onnx.ml"), ToML: mlOpset, Blockers: blockers}, nil
}

// String summarises the plan in one line.
func (p *PlanResult) String() string {
	if len(p.Blockers) == 0 {
		return fmt.Sprintf("%s: nothing blocks opset %d", p.Model, p.To)
	}
	return fmt.Sprintf("%s: %d node(s) block opset %d", p.Model, len(p.Blockers), p.To)
}

// WriteText writes the plan for people, as 'onnxconv opset --dry-run'
// prints it: String, with a colon and one indented line per blocker when
// anything blocks.
func (p *PlanResult) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(p.String())
	if len(p.Blockers) > 0 {
		b.WriteString(":")
	}
	b.WriteString("\n")
	for _, bl := range p.Blockers {
		fmt.Fprintf(&b, "  %s\n", bl)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
