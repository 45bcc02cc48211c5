package trees

import (
	"math"
	"slices"
)

// LinearLeaf is a leaf whose output is linear in the input (LightGBM's
// linear_tree): Const + sum(Coeffs[i] * x[Features[i]]), summed in that
// order in float64. When one of its Features is NaN the leaf gives the
// Node's Value instead, as LightGBM's Tree::Predict does.
type LinearLeaf struct {
	Const    float64
	Features []int
	Coeffs   []float64
}

// HashMultiplier is the multiplier of CatBoost's CalcHash(a, b) =
// M * (a + M * b) (mod 2^64), the hash a Lookup combines its values with.
const HashMultiplier uint64 = 0x4906ba494954cb65

// CombineHash is CatBoost's CalcHash(a, b): M * (a + M*b) modulo 2^64.
func CombineHash(a, b uint64) uint64 {
	return HashMultiplier * (a + HashMultiplier*b)
}

// Lookup is a derived feature column computed from the input before the
// trees run (CatBoost's CTR features): a 64-bit hash, starting at 0,
// combined with CombineHash with each Cats column's value (a 32-bit
// signed integer, sign-extended, as CatBoost's (ui64)(int)hash), then
// with each Tests condition (1 when it holds, else 0); the hash is looked
// up in Keys, giving the Values entry of the same index, or Default when
// absent. Lookup k of an Ensemble is feature NumFeatures+k of its trees.
type Lookup struct {
	Cats  []int
	Tests []Node // Feature, Mode (LT, GT or EQ), Threshold, MissingTrue
	// Keys are distinct; Values has one value per key.
	Keys    []uint64
	Values  []float64
	Default float64
}

// MaxLookupKeys bounds the keys of all lookups together.
const MaxLookupKeys = 1 << 26

// MaxLinearTerms bounds the coefficients of all linear leaves together.
const MaxLinearTerms = 1 << 26

// catKey is the 64-bit value a categorical column's number is hashed as:
// the sign-extended 32-bit integer; a value that is not an integer of
// int32's range (NaN among them) gets a value no 32-bit hash takes.
func catKey(x float64) uint64 {
	if math.IsNaN(x) || x < math.MinInt32 || x > math.MaxUint32 || x != math.Trunc(x) {
		return 1 << 62
	}
	return uint64(int64(int32(uint32(int64(x)))))
}

// Hash computes l's hash for one input row.
func (l *Lookup) Hash(row []float64) uint64 {
	var h uint64
	for _, c := range l.Cats {
		h = CombineHash(h, catKey(row[c]))
	}
	for i := range l.Tests {
		var b uint64
		if goesTrue(&l.Tests[i], row[l.Tests[i].Feature], false) {
			b = 1
		}
		h = CombineHash(h, b)
	}
	return h
}

// validateDerived checks the linear leaves and lookups of e.
func (e *Ensemble) validateDerived() error {
	keys := 0
	for k := range e.Lookups {
		l := &e.Lookups[k]
		if len(l.Cats)+len(l.Tests) == 0 {
			return serr(-1, -1, "lookup %d hashes no column", k)
		}
		for _, c := range l.Cats {
			if c < 0 || c >= e.NumFeatures {
				return serr(-1, -1, "lookup %d hashes column %d; the model has %d", k, c, e.NumFeatures)
			}
		}
		for _, t := range l.Tests {
			if t.Feature < 0 || t.Feature >= e.NumFeatures {
				return serr(-1, -1, "lookup %d tests column %d; the model has %d", k, t.Feature, e.NumFeatures)
			}
			if t.Mode != LT && t.Mode != GT && t.Mode != EQ {
				return serr(-1, -1, "lookup %d: test mode %v; want BRANCH_LT, BRANCH_GT or BRANCH_EQ", k, t.Mode)
			}
			if math.IsNaN(t.Threshold) {
				return serr(-1, -1, "lookup %d: a test's threshold is NaN", k)
			}
		}
		if len(l.Keys) != len(l.Values) {
			return serr(-1, -1, "lookup %d: %d keys and %d values", k, len(l.Keys), len(l.Values))
		}
		keys += len(l.Keys)
		if keys > MaxLookupKeys {
			return serr(-1, -1, "the lookups have more than %d keys", MaxLookupKeys)
		}
		s := slices.Clone(l.Keys)
		slices.Sort(s)
		for i := 1; i < len(s); i++ {
			if s[i] == s[i-1] {
				return serr(-1, -1, "lookup %d: key %d twice", k, s[i])
			}
		}
	}
	terms := 0
	for ti := range e.Trees {
		for ni := range e.Trees[ti].Nodes {
			nd := &e.Trees[ti].Nodes[ni]
			if nd.Linear == nil {
				continue
			}
			if !nd.Leaf {
				return serr(ti, ni, "a split node has linear leaf coefficients")
			}
			if len(nd.Linear.Features) != len(nd.Linear.Coeffs) {
				return serr(ti, ni, "linear leaf: %d features and %d coefficients", len(nd.Linear.Features), len(nd.Linear.Coeffs))
			}
			for _, f := range nd.Linear.Features {
				if f < 0 || f >= e.NumFeatures {
					return serr(ti, ni, "linear leaf uses feature %d; the model has %d", f, e.NumFeatures)
				}
			}
			terms += len(nd.Linear.Features) + 1
			if terms > MaxLinearTerms {
				return serr(ti, ni, "the linear leaves have more than %d terms", MaxLinearTerms)
			}
		}
	}
	return nil
}

// isLinear reports whether a tree has a linear leaf.
func (t *Tree) isLinear() bool {
	for i := range t.Nodes {
		if t.Nodes[i].Linear != nil {
			return true
		}
	}
	return false
}

// leafValue is the output of leaf nd for row: its Value, or its linear
// function (LightGBM's Tree::Predict for linear trees).
func leafValue(nd *Node, row []float64) float64 {
	l := nd.Linear
	if l == nil {
		return nd.Value
	}
	out := l.Const
	for i, f := range l.Features {
		x := row[f]
		if math.IsNaN(x) {
			return nd.Value
		}
		out += l.Coeffs[i] * x
	}
	return out
}

// extend returns row followed by the lookups' values (maps[k] holds
// lookup k's keys and values).
func (e *Ensemble) extend(row []float64, maps []map[uint64]float64) []float64 {
	if len(e.Lookups) == 0 {
		return row
	}
	out := make([]float64, len(row), len(row)+len(e.Lookups))
	copy(out, row)
	for k := range e.Lookups {
		l := &e.Lookups[k]
		v, ok := maps[k][l.Hash(row)]
		if !ok {
			v = l.Default
		}
		out = append(out, v)
	}
	return out
}

// lookupMaps indexes the lookups' keys.
func (e *Ensemble) lookupMaps() []map[uint64]float64 {
	maps := make([]map[uint64]float64, len(e.Lookups))
	for k := range e.Lookups {
		l := &e.Lookups[k]
		maps[k] = make(map[uint64]float64, len(l.Keys))
		for i, key := range l.Keys {
			maps[k][key] = l.Values[i]
		}
	}
	return maps
}
