package catboost

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/importers"
)

// nanTreatment is how a float feature's NaN takes its splits.
type nanTreatment uint8

const (
	nanAsIs nanTreatment = iota // NaN > border is false
	nanAsFalse
	nanAsTrue
)

type floatFeature struct {
	index, flat int
	borders     []float64 // float32 values
	nan         nanTreatment
	id          string
}

type catFeature struct {
	index, flat int
	id          string
}

type splitKind uint8

const (
	splitFloat  splitKind = iota // float feature > border
	splitOneHot                  // hashed cat feature == value
	splitCtr                     // CTR feature (m.ctrs[feature]) > border
)

// split is one binary condition; true goes to the "right" (bit 1).
type split struct {
	kind    splitKind
	feature int // float feature index or cat feature index
	border  float64
	value   int32
}

// node of a non-symmetric tree (or an expanded oblivious one).
type node struct {
	leaf        bool
	values      []float64 // a leaf's ApproxDimension values
	split       split
	left, right int
}

// tree is an oblivious tree (splits, 2^depth * dim leaf values, leaf index
// bit d from splits[d]) or a non-symmetric one (nodes, root 0).
type tree struct {
	splits []split
	leaves []float64
	nodes  []node
}

// model is what both formats are read into.
type model struct {
	dim        int
	floats     []floatFeature
	cats       []catFeature
	textNames  []string // text and embedding features, for messages
	otherFlat  []int    // their columns
	numFlat    int
	trees      []tree
	scale      float64
	bias       []float64
	loss       string
	classNames []string
	version    string
	format     string // "JSON export" or "binary model (.cbm)"
	// ctrs are the CTR features splits use, ctrTables their statistics
	// by ctrProj.key().
	ctrs      []ctrFeature
	notes     []string // warnings for the user
	ctrTables map[string]*ctrTable
	// leafCount is how many leaf values the file holds: the expanded
	// trees may not have many more nodes than that (a hostile file could
	// otherwise share leaves to make a huge graph from a few bytes).
	leafCount int
}

// Limits on what a model may declare.
const (
	maxDepth     = 24
	maxDimension = 1 << 16
	maxFeatures  = 1 << 24
)

func (m *model) floatByIndex(i int) (*floatFeature, error) {
	for k := range m.floats {
		if m.floats[k].index == i {
			return &m.floats[k], nil
		}
	}
	return nil, fmt.Errorf("a split uses float feature %d, which the model does not declare", i)
}

func (m *model) catByIndex(i int) (*catFeature, error) {
	for k := range m.cats {
		if m.cats[k].index == i {
			return &m.cats[k], nil
		}
	}
	return nil, fmt.Errorf("a split uses categorical feature %d, which the model does not declare", i)
}

// featureName describes a feature for messages: its id when it has one.
func featureName(kind string, index, flat int, id string) string {
	s := fmt.Sprintf("%s feature %d (column %d)", kind, index, flat)
	if id != "" {
		s = fmt.Sprintf("%s feature %q (column %d)", kind, id, flat)
	}
	return s
}

// check validates counts and indexes shared by both formats.
func (m *model) check() error {
	if m.dim < 1 || m.dim > maxDimension {
		return fmt.Errorf("approx dimension %d; want 1 to %d", m.dim, maxDimension)
	}
	if len(m.bias) != 0 && len(m.bias) != m.dim {
		return fmt.Errorf("%d bias values for approx dimension %d", len(m.bias), m.dim)
	}
	seen := map[int]string{}
	claim := func(flat int, what string) error {
		if flat < 0 || flat >= maxFeatures {
			return fmt.Errorf("%s: column %d out of range", what, flat)
		}
		if prev, ok := seen[flat]; ok {
			return fmt.Errorf("%s and %s share column %d", prev, what, flat)
		}
		seen[flat] = what
		if flat+1 > m.numFlat {
			m.numFlat = flat + 1
		}
		return nil
	}
	for _, f := range m.floats {
		if err := claim(f.flat, featureName("float", f.index, f.flat, f.id)); err != nil {
			return err
		}
	}
	for _, c := range m.cats {
		if err := claim(c.flat, featureName("categorical", c.index, c.flat, c.id)); err != nil {
			return err
		}
	}
	for _, f := range m.otherFlat {
		if f < 0 || f >= maxFeatures {
			return fmt.Errorf("a text or embedding feature's column %d is out of range", f)
		}
		m.numFlat = max(m.numFlat, f+1)
	}
	if m.numFlat == 0 {
		m.numFlat = 1
	}
	for ti := range m.trees {
		t := &m.trees[ti]
		if t.nodes == nil {
			if len(t.splits) > maxDepth {
				return fmt.Errorf("tree %d: depth %d; at most %d", ti, len(t.splits), maxDepth)
			}
			want := (1 << len(t.splits)) * m.dim
			if len(t.leaves) != want {
				return fmt.Errorf("tree %d: %d leaf values for depth %d and dimension %d (want %d)", ti, len(t.leaves), len(t.splits), m.dim, want)
			}
			for _, s := range t.splits {
				if err := m.checkSplit(s); err != nil {
					return fmt.Errorf("tree %d: %w", ti, err)
				}
			}
			continue
		}
		for ni, n := range t.nodes {
			if n.leaf {
				if len(n.values) != m.dim {
					return fmt.Errorf("tree %d node %d: %d leaf values for dimension %d", ti, ni, len(n.values), m.dim)
				}
				continue
			}
			if err := m.checkSplit(n.split); err != nil {
				return fmt.Errorf("tree %d node %d: %w", ti, ni, err)
			}
		}
	}
	return nil
}

func (m *model) checkSplit(s split) error {
	switch s.kind {
	case splitFloat:
		_, err := m.floatByIndex(s.feature)
		return err
	case splitOneHot:
		_, err := m.catByIndex(s.feature)
		return err
	case splitCtr:
		if s.feature < 0 || s.feature >= len(m.ctrs) {
			return fmt.Errorf("a split uses CTR %d; the model has %d", s.feature, len(m.ctrs))
		}
		return nil
	}
	return fmt.Errorf("unknown split kind %d", s.kind)
}

// unsupported is a model that uses what the importer cannot compute
// (CTR-encoded categorical features, text or embedding features): an
// *importers.UnsupportedOpsError, the one shape, whose reason names the
// feature.
func unsupported(format string, a ...any) error {
	return &importers.UnsupportedOpsError{Format: Name, Ops: []importers.UnsupportedOp{{Reason: fmt.Sprintf(format, a...)}}}
}

func joinNames(names []string) string {
	if len(names) > 6 {
		names = append(names[:6:6], fmt.Sprintf("and %d more", len(names)-6))
	}
	return strings.Join(names, ", ")
}
