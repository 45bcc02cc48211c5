package lightgbm

import (
	"bytes"
	"fmt"
	"github.com/onnxconv/onnxconv/importers/trees"
	"math"
	"strconv"
	"strings"
)

// parseText reads the text model format (Booster.save_model, model.txt):
// a header of key=value lines, then "Tree=N" blocks until "end of trees".
// A file that is a bare tree block (no header) is read as a regression
// model over max split feature + 1 features.
func parseText(data []byte) (*model, error) {
	m := &model{numClass: 1, perIteration: 1, numFeatures: -1}
	lines := bytes.Split(data, []byte("\n"))
	header := map[string]string{}
	var blocks []map[string]string
	var names []string
	var cur map[string]string
	for ln, raw := range lines {
		line := strings.TrimSpace(string(raw))
		if line == "" {
			continue
		}
		if line == "end of trees" {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			if cur == nil {
				switch line {
				case "average_output":
					m.average = true
				case "tree":
				default:
					if len(header) == 0 && ln == 0 {
						return nil, fmt.Errorf("line 1: %.40q is not a LightGBM model header", line)
					}
				}
			}
			continue
		}
		if k == "Tree" {
			cur = map[string]string{}
			blocks = append(blocks, cur)
			names = append(names, v)
			continue
		}
		if cur == nil {
			header[k] = v
		} else {
			cur[k] = v
		}
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no Tree= block: not a LightGBM text model")
	}
	var err error
	m.version = header["version"]
	m.objective = header["objective"]
	if v, ok := header["num_class"]; ok {
		if m.numClass, err = atoiRange("num_class", v, 1, 1<<16); err != nil {
			return nil, err
		}
	}
	if v, ok := header["num_tree_per_iteration"]; ok {
		if m.perIteration, err = atoiRange("num_tree_per_iteration", v, 1, 1<<16); err != nil {
			return nil, err
		}
	}
	if v, ok := header["max_feature_idx"]; ok {
		mf, err := atoiRange("max_feature_idx", v, 0, 1<<24-1)
		if err != nil {
			return nil, err
		}
		m.numFeatures = mf + 1
	}
	if v, ok := header["feature_names"]; ok {
		m.featureNames = strings.Fields(v)
	}
	maxFeat := 0
	for i, b := range blocks {
		t, err := parseTree(b)
		if err != nil {
			return nil, fmt.Errorf("Tree=%s (tree %d): %w", names[i], i, err)
		}
		for _, s := range t.splits {
			maxFeat = max(maxFeat, s.feature+1)
		}
		m.trees = append(m.trees, t)
	}
	if m.numFeatures < 0 { // a bare tree block
		m.numFeatures = max(maxFeat, 1)
	}
	if len(m.trees)%m.perIteration != 0 {
		return nil, fmt.Errorf("%d trees is not a multiple of num_tree_per_iteration %d", len(m.trees), m.perIteration)
	}
	return m, nil
}

func atoiRange(key, v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%.40q: want an integer in [%d, %d]", key, v, lo, hi)
	}
	return n, nil
}

func fields(b map[string]string, key string, want int) ([]string, error) {
	f := strings.Fields(b[key])
	if want >= 0 && len(f) != want {
		return nil, fmt.Errorf("%s has %d values, want %d", key, len(f), want)
	}
	return f, nil
}

func ints(b map[string]string, key string, want, lo, hi int) ([]int, error) {
	f, err := fields(b, key, want)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(f))
	for i, s := range f {
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s[%d] = %.30q: want an integer in [%d, %d]", key, i, s, lo, hi)
		}
		out[i] = n
	}
	return out, nil
}

func floats(b map[string]string, key string, want int) ([]float64, error) {
	f, err := fields(b, key, want)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(f))
	for i, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRangeErr(err) {
			return nil, fmt.Errorf("%s[%d] = %.30q: not a number", key, i, s)
		}
		if math.IsNaN(v) {
			return nil, fmt.Errorf("%s[%d] is NaN", key, i)
		}
		out[i] = v
	}
	return out, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func parseTree(b map[string]string) (tree, error) {
	var t tree
	nl, err := atoiRange("num_leaves", b["num_leaves"], 1, maxLeaves)
	if err != nil {
		return t, err
	}
	if t.leaves, err = floats(b, "leaf_value", nl); err != nil {
		return t, err
	}
	if v := strings.TrimSpace(b["is_linear"]); v != "" && v != "0" {
		t.linear = true
		if t.linears, err = parseLinear(b, nl); err != nil {
			return t, err
		}
	}
	if nl == 1 {
		return t, nil
	}
	ns := nl - 1
	feat, err := ints(b, "split_feature", ns, 0, 1<<24-1)
	if err != nil {
		return t, err
	}
	thr, err := floats(b, "threshold", ns)
	if err != nil {
		return t, err
	}
	dt, err := ints(b, "decision_type", ns, 0, 255)
	if err != nil {
		return t, err
	}
	left, err := ints(b, "left_child", ns, -nl, ns-1)
	if err != nil {
		return t, err
	}
	right, err := ints(b, "right_child", ns, -nl, ns-1)
	if err != nil {
		return t, err
	}
	numCat := 0
	if v, ok := b["num_cat"]; ok {
		if numCat, err = atoiRange("num_cat", v, 0, ns); err != nil {
			return t, err
		}
	}
	var bounds []int
	var words []uint32
	if numCat > 0 {
		wf, err := fields(b, "cat_threshold", -1)
		if err != nil {
			return t, err
		}
		words = make([]uint32, len(wf))
		for i, s := range wf {
			w, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return t, fmt.Errorf("cat_threshold[%d] = %.30q: not a 32-bit word", i, s)
			}
			words[i] = uint32(w)
		}
		if bounds, err = ints(b, "cat_boundaries", numCat+1, 0, len(words)); err != nil {
			return t, err
		}
		for i := 1; i < len(bounds); i++ {
			if bounds[i] < bounds[i-1] {
				return t, fmt.Errorf("cat_boundaries decrease at %d", i)
			}
		}
	}
	t.splits = make([]split, ns)
	catUsed := make([]bool, numCat) // each bitset belongs to one split
	for i := range t.splits {
		s := split{feature: feat[i], threshold: thr[i], left: left[i], right: right[i],
			defaultLeft: dt[i]&defaultLeftMask != 0, missing: (dt[i] >> 2) & 3}
		if dt[i]&catMask != 0 {
			s.categorical = true
			ci := int(thr[i])
			if float64(ci) != thr[i] || ci < 0 || ci >= numCat {
				return t, fmt.Errorf("node %d: categorical split index %v out of range (num_cat %d)", i, thr[i], numCat)
			}
			if catUsed[ci] {
				// LightGBM writes one bitset per categorical split;
				// sharing one would expand it once per split.
				return t, fmt.Errorf("node %d: categorical bitset %d is used by a second split (LightGBM writes one per split)", i, ci)
			}
			catUsed[ci] = true
			for w := bounds[ci]; w < bounds[ci+1]; w++ {
				for bit := 0; bit < 32; bit++ {
					if words[w]&(1<<bit) != 0 {
						s.cats = append(s.cats, float64((w-bounds[ci])*32+bit))
					}
				}
			}
		}
		t.splits[i] = s
	}
	return t, nil
}

// parseLinear reads a linear tree's leaves (LightGBM's Tree::ToString for
// is_linear=1): leaf_const (one per leaf), num_features (one per leaf),
// then leaf_features and leaf_coeff, every leaf's list one after another.
func parseLinear(b map[string]string, nl int) ([]trees.LinearLeaf, error) {
	consts, err := floats(b, "leaf_const", nl)
	if err != nil {
		return nil, err
	}
	nf, err := ints(b, "num_features", nl, 0, 1<<24)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, n := range nf {
		total += n
		if total > trees.MaxLinearTerms {
			return nil, fmt.Errorf("num_features: more than %d linear terms", trees.MaxLinearTerms)
		}
	}
	feats, err := ints(b, "leaf_features", total, 0, 1<<24-1)
	if err != nil {
		return nil, err
	}
	coefs, err := floats(b, "leaf_coeff", total)
	if err != nil {
		return nil, err
	}
	out := make([]trees.LinearLeaf, nl)
	off := 0
	for j := range out {
		out[j] = trees.LinearLeaf{Const: consts[j], Features: feats[off : off+nf[j] : off+nf[j]], Coeffs: coefs[off : off+nf[j] : off+nf[j]]}
		off += nf[j]
	}
	return out, nil
}
