package catboost

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/importers/trees"
)

// CTR types (ECtrType of ctr_data.fbs).
const (
	ctrBorders = iota
	ctrBuckets
	ctrBinarizedTargetMeanValue
	ctrFloatTargetMeanValue
	ctrCounter
	ctrFeatureFreq
)

// floatProjSplit and oneHotProjSplit are the binary parts of a CTR's
// feature combination.
type floatProjSplit struct {
	index  int
	border float64 // a float32 value
}

type oneHotProjSplit struct {
	index int
	value int32
}

// ctrProj is a CTR's feature combination and type (TModelCtrBase).
type ctrProj struct {
	cats    []int
	floats  []floatProjSplit
	oneHots []oneHotProjSplit
	typ     int
}

func (b ctrProj) key() string {
	return fmt.Sprintf("%v|%v|%v|%d", b.cats, b.floats, b.oneHots, b.typ)
}

// ctrFeature is one CTR the trees split on (TCtrFeature).
type ctrFeature struct {
	base                               ctrProj
	targetBorderIdx                    int
	priorNum, priorDenom, shift, scale float32
	borders                            []float64 // float32 values
}

// ctrTable is the learned statistics of one ctrBase (TCtrValueTable):
// bucket b of hash hashes[i] is index[i]; ints or means hold the blob.
type ctrTable struct {
	hashes        []uint64
	index         []int
	ints          []int32   // Borders, Buckets (classes per bucket), Counter, FeatureFreq
	sums          []float32 // mean types: Sum per bucket
	counts        []int32   // mean types: Count per bucket
	denominator   int32
	targetClasses int
}

// emptyHash marks an empty slot of CatBoost's dense hash index.
const emptyHash = math.MaxUint64

// calc is TModelCtr::Calc, in float32 as CatBoost computes it.
func (c *ctrFeature) calc(count, total float32) float32 {
	ctr := float32(count+c.priorNum) / float32(total+c.priorDenom)
	return float32(ctr+c.shift) * c.scale
}

// buckets returns the number of buckets the blob holds for the table's type.
func (t *ctrTable) buckets(typ int) (int, error) {
	switch typ {
	case ctrBorders, ctrBuckets:
		if t.targetClasses < 2 {
			return 0, fmt.Errorf("%d target classes; want at least 2", t.targetClasses)
		}
		return len(t.ints) / t.targetClasses, nil
	case ctrCounter, ctrFeatureFreq:
		return len(t.ints), nil
	case ctrBinarizedTargetMeanValue, ctrFloatTargetMeanValue:
		return len(t.sums), nil
	}
	return 0, fmt.Errorf("unknown CTR type %d", typ)
}

// value is the CTR's value for bucket b (static_ctr_provider.cpp).
func (c *ctrFeature) value(t *ctrTable, b int) float32 {
	switch c.base.typ {
	case ctrBinarizedTargetMeanValue, ctrFloatTargetMeanValue:
		return c.calc(t.sums[b], float32(t.counts[b]))
	case ctrCounter, ctrFeatureFreq:
		return c.calc(float32(t.ints[b]), float32(t.denominator))
	case ctrBuckets:
		h := t.ints[b*t.targetClasses : (b+1)*t.targetClasses]
		var total int32
		for _, v := range h {
			total += v
		}
		return c.calc(float32(h[c.targetBorderIdx]), float32(total))
	}
	// Borders.
	h := t.ints[b*t.targetClasses : (b+1)*t.targetClasses]
	if t.targetClasses == 2 {
		return c.calc(float32(h[1]), float32(h[0]+h[1]))
	}
	var good, total int32
	for k := 0; k <= c.targetBorderIdx; k++ {
		total += h[k]
	}
	for k := c.targetBorderIdx + 1; k < len(h); k++ {
		good += h[k]
	}
	return c.calc(float32(good), float32(total+good))
}

// emptyValue is the CTR's value for a hash the table lacks.
func (c *ctrFeature) emptyValue(t *ctrTable) float32 {
	if c.base.typ == ctrCounter || c.base.typ == ctrFeatureFreq {
		return c.calc(0, float32(t.denominator))
	}
	return c.calc(0, 0)
}

// lookup makes the trees.Lookup computing CTR c.
func (m *model) lookup(ci int) (trees.Lookup, error) {
	c := &m.ctrs[ci]
	t, ok := m.ctrTables[c.base.key()]
	if !ok {
		return trees.Lookup{}, fmt.Errorf("CTR %d (%s): the model has no table for it", ci, m.ctrName(c))
	}
	n, err := t.buckets(c.base.typ)
	if err != nil {
		return trees.Lookup{}, fmt.Errorf("CTR %d (%s) table: %w", ci, m.ctrName(c), err)
	}
	if c.base.typ == ctrBuckets && (c.targetBorderIdx < 0 || c.targetBorderIdx >= t.targetClasses) ||
		c.base.typ == ctrBorders && (c.targetBorderIdx < 0 || c.targetBorderIdx+1 >= t.targetClasses && t.targetClasses > 2) {
		return trees.Lookup{}, fmt.Errorf("CTR %d (%s): target border %d for %d classes", ci, m.ctrName(c), c.targetBorderIdx, t.targetClasses)
	}
	l := trees.Lookup{Default: float64(c.emptyValue(t))}
	for _, cf := range c.base.cats {
		f, err := m.catByIndex(cf)
		if err != nil {
			return trees.Lookup{}, err
		}
		l.Cats = append(l.Cats, f.flat)
	}
	for _, fs := range c.base.floats {
		f, err := m.floatByIndex(fs.index)
		if err != nil {
			return trees.Lookup{}, err
		}
		l.Tests = append(l.Tests, trees.Node{Feature: f.flat, Mode: trees.GT, Threshold: gtThreshold(fs.border), MissingTrue: f.nan == nanAsTrue})
	}
	for _, oh := range c.base.oneHots {
		f, err := m.catByIndex(oh.index)
		if err != nil {
			return trees.Lookup{}, err
		}
		l.Tests = append(l.Tests, trees.Node{Feature: f.flat, Mode: trees.EQ, Threshold: float64(oh.value)})
	}
	for i, h := range t.hashes {
		b := t.index[i]
		if b < 0 || b >= n {
			return trees.Lookup{}, fmt.Errorf("CTR %d (%s) table: bucket %d out of range (%d buckets)", ci, m.ctrName(c), b, n)
		}
		l.Keys = append(l.Keys, h)
		l.Values = append(l.Values, float64(c.value(t, b)))
	}
	return l, nil
}

var ctrTypeNamesList = []string{"Borders", "Buckets", "BinarizedTargetMeanValue", "FloatTargetMeanValue", "Counter", "FeatureFreq"}

func (m *model) ctrName(c *ctrFeature) string {
	name := "CTR"
	if c.base.typ >= 0 && c.base.typ < len(ctrTypeNamesList) {
		name += " " + ctrTypeNamesList[c.base.typ]
	}
	var fs []string
	for _, i := range c.base.cats {
		fs = append(fs, m.catName(i))
	}
	for _, f := range c.base.floats {
		fs = append(fs, fmt.Sprintf("float feature %d > %g", f.index, f.border))
	}
	for _, o := range c.base.oneHots {
		fs = append(fs, fmt.Sprintf("categorical feature %d == %d", o.index, o.value))
	}
	return name + " of " + strings.Join(fs, ", ")
}

// newCtrTable checks and stores the raw bucket index and blob of a table.
func newCtrTable(typ int, indexRaw, blob []byte, denominator, classes int32) (*ctrTable, error) {
	// A bucket is the packed {ui64 Hash; ui32 IndexValue} (12 bytes).
	if len(indexRaw)%12 != 0 {
		return nil, fmt.Errorf("hash index of %d bytes is not a whole number of 12-byte buckets", len(indexRaw))
	}
	t := &ctrTable{denominator: denominator, targetClasses: int(classes)}
	seen := map[uint64]bool{}
	for p := 0; p < len(indexRaw); p += 12 {
		h := binary.LittleEndian.Uint64(indexRaw[p:])
		if h == emptyHash {
			continue
		}
		if seen[h] {
			return nil, fmt.Errorf("hash %d twice in the index", h)
		}
		seen[h] = true
		t.hashes = append(t.hashes, h)
		t.index = append(t.index, int(binary.LittleEndian.Uint32(indexRaw[p+8:])))
	}
	if len(blob)%4 != 0 {
		return nil, fmt.Errorf("CTR blob of %d bytes", len(blob))
	}
	switch typ {
	case ctrBinarizedTargetMeanValue, ctrFloatTargetMeanValue:
		if len(blob)%8 != 0 {
			return nil, fmt.Errorf("mean CTR blob of %d bytes is not a whole number of (sum, count) pairs", len(blob))
		}
		for p := 0; p < len(blob); p += 8 {
			t.sums = append(t.sums, math.Float32frombits(binary.LittleEndian.Uint32(blob[p:])))
			t.counts = append(t.counts, int32(binary.LittleEndian.Uint32(blob[p+4:])))
		}
	case ctrBorders, ctrBuckets, ctrCounter, ctrFeatureFreq:
		t.ints = make([]int32, len(blob)/4)
		for i := range t.ints {
			t.ints[i] = int32(binary.LittleEndian.Uint32(blob[4*i:]))
		}
	default:
		return nil, fmt.Errorf("unknown CTR type %d", typ)
	}
	return t, nil
}
