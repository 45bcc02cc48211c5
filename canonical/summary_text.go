package canonical

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// WriteText writes the summary for people, as 'onnxconv inspect' prints
// it; path names the model on the first line.
func (s Summary) WriteText(w io.Writer, path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "model:       %s\n", path)
	fmt.Fprintf(&b, "ir_version:  %d\n", s.IRVersion)
	if s.ProducerName != "" || s.ProducerVersion != "" {
		fmt.Fprintf(&b, "producer:    %s %s\n", s.ProducerName, s.ProducerVersion)
	}
	if s.Domain != "" || s.ModelVersion != 0 {
		fmt.Fprintf(&b, "domain:      %s (model version %d)\n", s.Domain, s.ModelVersion)
	}
	var ops []string
	for _, o := range s.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		ops = append(ops, fmt.Sprintf("%s %d", d, o.Version))
	}
	fmt.Fprintf(&b, "opsets:      %s\n", strings.Join(ops, ", "))
	b.WriteString("inputs:\n")
	for _, v := range s.Inputs {
		note := ""
		if v.Initializer {
			note = "  (has a default: initializer)"
		}
		fmt.Fprintf(&b, "  %-24s %s%s\n", v.Name, v.Type, note)
	}
	b.WriteString("outputs:\n")
	for _, v := range s.Outputs {
		fmt.Fprintf(&b, "  %-24s %s\n", v.Name, v.Type)
	}
	fmt.Fprintf(&b, "nodes:       %d", s.Nodes)
	if s.Functions > 0 {
		fmt.Fprintf(&b, " (functions: %d)", s.Functions)
	}
	b.WriteString("\n")
	for _, o := range s.Ops {
		name := o.Op
		if o.Domain != "" {
			name = o.Domain + "." + o.Op
		}
		fmt.Fprintf(&b, "  %-24s %d\n", name, o.Count)
	}
	consts := ""
	if s.ConstantTensors > 0 {
		consts = fmt.Sprintf(" and %d Constant nodes", s.ConstantTensors)
	}
	fmt.Fprintf(&b, "parameters:  %d in %d initializers%s, %s\n", s.Parameters, s.Initializers, consts, bytesize.Format(s.ParameterBytes))
	if len(s.ExternalFiles) > 0 {
		b.WriteString("external data:\n")
		for _, f := range s.ExternalFiles {
			fmt.Fprintf(&b, "  %-24s %d tensors, %s\n", f.Location, f.Tensors, bytesize.Format(f.Bytes))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
