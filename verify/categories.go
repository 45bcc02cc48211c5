package verify

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/onnxconv/onnxconv/canonical"
)

// categories returns, for a [rows, features] input fed to tree ensembles
// (directly or through Cast), the largest category code an equality or
// set split of each categorical column tests: those columns are category
// codes, whole numbers, on which a fractional value means nothing (and
// runtimes legitimately differ).
func categories(v *canonical.Value, depth int) map[int64]float64 {
	out := map[int64]float64{}
	if depth > 2 {
		return out
	}
	add := func(f int64, x float64) {
		if f >= 0 && x >= 0 && x < 1<<24 && x == math.Trunc(x) {
			out[f] = math.Max(out[f], x)
		}
	}
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || u.Index != 0 {
			continue
		}
		feats := n.AttrInts("nodes_featureids", nil)
		switch n.OpType {
		case "Cast":
			for _, o := range n.Outputs {
				if o != nil {
					for f, x := range categories(o, depth+1) {
						add(f, x)
					}
				}
			}
		case "TreeEnsembleRegressor", "TreeEnsembleClassifier":
			modes := n.AttrStrings("nodes_modes", nil)
			vals := n.AttrFloats("nodes_values", nil)
			for i, m := range modes {
				if (m == "BRANCH_EQ" || m == "BRANCH_NEQ") && i < len(feats) && i < len(vals) {
					add(feats[i], float64(vals[i]))
				}
			}
		case "TreeEnsemble":
			a := n.Attr("nodes_modes")
			if a == nil || a.T == nil {
				continue
			}
			modes, err := a.T.Bytes()
			if err != nil {
				continue
			}
			var splits, member []float64
			if s := n.Attr("nodes_splits"); s != nil && s.T != nil {
				splits, _ = s.T.Float64s()
			}
			if s := n.Attr("membership_values"); s != nil && s.T != nil {
				member, _ = s.T.Float64s()
			}
			k := 0 // position in member, set after set (NaN-separated)
			for i, m := range modes {
				if i >= len(feats) {
					break
				}
				switch m {
				case 4, 5: // BRANCH_EQ, BRANCH_NEQ
					if i < len(splits) {
						add(feats[i], splits[i])
					}
				case 6: // BRANCH_MEMBER
					for ; k < len(member) && !math.IsNaN(member[k]); k++ {
						add(feats[i], member[k])
					}
					k++
				}
			}
		}
	}
	return out
}

// categorical rewrites the categorical columns of a generated [rows,
// features] float tensor as whole numbers from 0 to one past the largest
// code a split tests (an unseen category too).
func categorical(t *canonical.Tensor, cats map[int64]float64, rng *rand.Rand) {
	if len(cats) == 0 || len(t.Dims) != 2 || (t.DataType != canonical.Float && t.DataType != canonical.Double) {
		return
	}
	raw, err := t.Bytes()
	if err != nil {
		return
	}
	rows, cols := t.Dims[0], t.Dims[1]
	le := binary.LittleEndian
	for r := int64(0); r < rows; r++ {
		for c, hi := range cats {
			if c >= cols {
				continue
			}
			x := float64(rng.Int64N(int64(hi) + 2))
			i := r*cols + c
			if t.DataType == canonical.Float {
				le.PutUint32(raw[4*i:], math.Float32bits(float32(x)))
			} else {
				le.PutUint64(raw[8*i:], math.Float64bits(x))
			}
		}
	}
	t.SetBytes(raw)
}
