package passes

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// WriteText writes what Run did, as 'onnxconv optimize' prints it: the
// sizes of out before and after, the error against in when checked, and
// every pass rolled back.
func (r *Report) WriteText(w io.Writer, in, out string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: nodes %d -> %d, initializer bytes %d -> %d\n", out, r.Before.Nodes, r.After.Nodes, r.Before.Bytes, r.After.Bytes)
	if r.MaxAbs >= 0 {
		fmt.Fprintf(&b, "verified against %s: max abs error %.3g, max rel error %.3g\n", in, r.MaxAbs, r.MaxRel)
	}
	for _, p := range r.RolledBack() {
		fmt.Fprintf(&b, "rolled back %s: %s\n", p.Name, p.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteKept writes one line per node the fallback kept in float32.
func (r *FP16Report) WriteKept(w io.Writer) error {
	var b strings.Builder
	for _, k := range r.Kept {
		fmt.Fprintf(&b, "kept in float32: %s (%s): %s\n", k.Node, k.OpType, k.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the summary of a conversion of in to out, as
// 'onnxconv fp16' prints it after the kept nodes (WriteKept).
func (r *FP16Report) WriteText(w io.Writer, in, out string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %d nodes converted, %d blocked, ", out, r.Type, r.Converted, r.Blocked)
	if r.Unsupported > 0 {
		fmt.Fprintf(&b, "%d without a %s type or kernel, ", r.Unsupported, r.Type)
	}
	fmt.Fprintf(&b, "%d kept by the fallback; initializer bytes %d -> %d\n", len(r.Kept), r.Before.Bytes, r.After.Bytes)
	if r.MaxAbs >= 0 {
		fmt.Fprintf(&b, "verified against %s: max abs error %.3g, max rel error %.3g\n", in, r.MaxAbs, r.MaxRel)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the summary of a quantization written to out, as
// 'onnxconv quantize' prints it: nodes quantized, size change, top-1
// agreement and errors when measured.
func (r *QuantReport) WriteText(w io.Writer, out string) error {
	var b strings.Builder
	form := string(r.Mode) + " int8 QDQ"
	if r.Mode == Int4 {
		form = fmt.Sprintf("int4 weights (%s, blocks of %d)", r.Format, r.BlockSize)
		if r.AccuracyLevel != 0 {
			form = fmt.Sprintf("int4 weights (%s, blocks of %d, accuracy_level %d)", r.Format, r.BlockSize, r.AccuracyLevel)
		}
	}
	fused := ""
	if r.Fused > 0 {
		fused = fmt.Sprintf(", %d Relu/Clip removed (the quantization clamps)", r.Fused)
	}
	fmt.Fprintf(&b, "%s: %s, %d nodes quantized%s; initializer bytes %s -> %s\n", out, form, r.Quantized, fused,
		bytesize.Format(r.Before.Bytes), bytesize.Format(r.After.Bytes))
	if r.Top1 >= 0 {
		fmt.Fprintf(&b, "top-1 agreement with the float model: %.2f%%\n", 100*r.Top1)
	}
	if r.MaxAbs >= 0 {
		fmt.Fprintf(&b, "max abs error %.3g, mean abs error %.3g\n", r.MaxAbs, r.MeanAbs)
	}
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %-20s cosine %.6f  top-1 %.2f%%\n", s.Step, s.Cosine, 100*s.Top1)
	}
	if r.Unmeasured {
		b.WriteString("accuracy change not measured (skipped: unchecked)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteList writes one line per built-in pass, name and description, as
// 'onnxconv optimize --help' lists them.
func WriteList(w io.Writer) error {
	var b strings.Builder
	for _, p := range Builtin() {
		fmt.Fprintf(&b, "  %-24s %s\n", p.Name, p.Doc)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
