package trees

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/build"
)

// EmbedOptions places an ensemble's tree op inside a larger graph.
type EmbedOptions struct {
	// Input is the name of the [N, NumFeatures] value the trees read and
	// Output the name of the [N, NumTargets] margin they write (the sum
	// of the trees plus Base; no objective is applied).
	Input, Output string
	// Name names the tree node ("" means Output).
	Name string
	// MLOpset is the ai.onnx.ml opset the caller imports: 5 (the
	// default) uses TreeEnsemble, 3 and 4 TreeEnsembleRegressor.
	MLOpset int
}

// Embed adds to b the nodes (and their constants) computing e's margin
// from o.Input into o.Output, for a caller that builds its own graph around
// the trees (a scikit-learn Pipeline, a forest that averages its trees).
// The element type of Input and Output is double when e.Double, else
// float. It imports ai.onnx.ml at o.MLOpset into b's model.
func Embed(b *build.Builder, e *Ensemble, o EmbedOptions) error {
	if o.MLOpset == 0 {
		o.MLOpset = 5
	}
	if o.MLOpset < 1 || o.MLOpset > MaxMLOpset {
		return fmt.Errorf("ai.onnx.ml opset %d not supported: use 1 to %d", o.MLOpset, MaxMLOpset)
	}
	if o.Input == "" || o.Output == "" {
		return fmt.Errorf("embedding %s trees: input and output names are needed", e.Format)
	}
	if err := e.Validate(); err != nil {
		return err
	}
	if e.Linear != nil {
		return fmt.Errorf("embedding %s: a linear model has no trees", e.Format)
	}
	if e.Double && o.MLOpset < 3 {
		return fmt.Errorf("%s computes in double precision, which TreeEnsembleRegressor has from ai.onnx.ml opset 3; got ml opset %d", e.Format, o.MLOpset)
	}
	name := o.Name
	if name == "" {
		name = o.Output
	}
	g := &graph{b: b, double: e.Double, input: o.Input}
	if err := g.margin(e, name, o.Output, o.MLOpset, 21); err != nil {
		return err
	}
	b.Import(mlDomain, int64(o.MLOpset))
	return nil
}
