package catboost

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// cbmMagic starts a CatBoost binary model: "CBM1", then the uint32 size of
// the flatbuffers-serialized TModelCore, the core, then the model parts
// (CTR tables, text processing) the core's ModelPartIds name.
var cbmMagic = []byte("CBM1")

// Field numbers of catboost/libs/model/flatbuffers/{model,features,ctr_data}.fbs.
const (
	coreFormatVersion = 0
	coreModelTrees    = 1
	coreInfoMap       = 2
	coreModelPartIDs  = 3

	mtApproxDimension      = 0
	mtTreeSplits           = 1
	mtTreeSizes            = 2
	mtTreeStartOffsets     = 3
	mtCatFeatures          = 4
	mtFloatFeatures        = 5
	mtOneHotFeatures       = 6
	mtCtrFeatures          = 7
	mtLeafValues           = 8
	mtStepNodes            = 10
	mtNodeIDToLeafID       = 11
	mtTextFeatures         = 12
	mtEstimatedFeatures    = 13
	mtScale                = 14
	mtBias                 = 15
	mtMultiBias            = 16
	mtEmbeddingFeatures    = 18
	floatIndex             = 1
	floatFlatIndex         = 2
	floatBorders           = 3
	floatFeatureID         = 4
	floatNanTreatment      = 5
	catIndex               = 0
	catFlatIndex           = 1
	catFeatureID           = 2
	oneHotIndex            = 0
	oneHotValues           = 1
	ctrFeatureCtr          = 0
	ctrBase                = 0
	ctrBaseCombination     = 0
	ctrBaseType            = 1
	combinationCatFeatures = 0
)

// parseCBM reads a .cbm file.
func parseCBM(data []byte) (*model, error) {
	if len(data) < 8 || !bytes.Equal(data[:4], cbmMagic) {
		return nil, fmt.Errorf("not a CatBoost binary model (no CBM1 magic)")
	}
	size := int64(binary.LittleEndian.Uint32(data[4:8]))
	if size > int64(len(data))-8 {
		return nil, fmt.Errorf("the model core is %d bytes, but the file has %d after the header", size, len(data)-8)
	}
	core := data[8 : 8+size]
	root, err := fbRoot(core)
	if err != nil {
		return nil, fmt.Errorf("model core: %w", err)
	}
	m := &model{format: "binary model (.cbm)", scale: 1}
	if m.version, err = root.string(coreFormatVersion); err != nil {
		return nil, fmt.Errorf("format version: %w", err)
	}
	info := map[string]string{}
	kvs, err := root.tables(coreInfoMap)
	if err != nil {
		return nil, fmt.Errorf("info map: %w", err)
	}
	for _, kv := range kvs {
		k, err1 := kv.string(0)
		v, err2 := kv.string(1)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("info map: %w", errFB)
		}
		info[k] = v
	}
	if err := m.readInfo(info); err != nil {
		return nil, err
	}
	mt, ok, err := root.table(coreModelTrees)
	if err != nil {
		return nil, fmt.Errorf("model trees: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("the model has no trees table")
	}
	if err := m.readTrees(mt); err != nil {
		return nil, err
	}
	if len(m.ctrs) > 0 {
		parts, err := root.strings(coreModelPartIDs)
		if err != nil {
			return nil, fmt.Errorf("model part ids: %w", err)
		}
		if err := m.readParts(parts, data[8+size:]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// readParts reads the model parts after the core, in the order of their
// ids: CatBoost's static CTR provider (TCtrData: a count, then each
// TCtrValueTable as a size and a flatbuffer) holds the CTR tables.
func (m *model) readParts(ids []string, rest []byte) error {
	if len(ids) == 0 && len(rest) > 0 {
		// Not written by CatBoost (which lists its parts, and without them
		// would not load the tables): the bytes after the core are read as
		// the CTR data they are in every .cbm.
		ids = []string{"static_provider"}
		m.notes = append(m.notes, "catboost: the .cbm lists no model parts; the data after the model core was read as CTR tables")
	}
	for _, id := range ids {
		if !strings.Contains(id, "static_provider") {
			break // a part we cannot skip (text processing): stop here
		}
		n, used, err := loadSize(rest)
		if err != nil {
			return fmt.Errorf("CTR data: %w", err)
		}
		rest = rest[used:]
		if n > uint64(len(rest))/8 {
			return fmt.Errorf("CTR data: %d tables in %d bytes", n, len(rest))
		}
		m.ctrTables = map[string]*ctrTable{}
		for i := uint64(0); i < n; i++ {
			sz, used, err := loadSize(rest)
			if err != nil {
				return fmt.Errorf("CTR table %d: %w", i, err)
			}
			rest = rest[used:]
			if sz > uint64(len(rest)) {
				return fmt.Errorf("CTR table %d: %d bytes, %d left in the file", i, sz, len(rest))
			}
			buf := rest[:sz:sz]
			rest = rest[sz:]
			root, err := fbRoot(buf)
			if err != nil {
				return fmt.Errorf("CTR table %d: %w", i, err)
			}
			base, ok, err := root.table(0)
			if err != nil || !ok {
				return fmt.Errorf("CTR table %d: no ModelCtrBase (%v)", i, err)
			}
			proj, err := readCtrProj(base)
			if err != nil {
				return fmt.Errorf("CTR table %d: %w", i, err)
			}
			idx, err1 := root.bytes(1)
			blob, err2 := root.bytes(2)
			den, err3 := root.int32(3, 0)
			cls, err4 := root.int32(4, 0)
			if err := firstErr(err1, err2, err3, err4); err != nil {
				return fmt.Errorf("CTR table %d: %w", i, err)
			}
			t, err := newCtrTable(proj.typ, idx, blob, den, cls)
			if err != nil {
				return fmt.Errorf("CTR table %d: %w", i, err)
			}
			m.ctrTables[proj.key()] = t
		}
		return nil
	}
	var names []string
	for i := range m.ctrs {
		names = append(names, m.ctrName(&m.ctrs[i]))
	}
	return unsupported("the model uses %d CTR features (%s) but its file carries no CTR tables onnxconv can read (model parts %q)",
		len(m.ctrs), joinNames(names), ids)
}

// loadSize is util's LoadSize: a uint32, or 0xffffffff then a uint64.
func loadSize(b []byte) (uint64, int, error) {
	if len(b) < 4 {
		return 0, 0, fmt.Errorf("truncated size")
	}
	v := binary.LittleEndian.Uint32(b)
	if v != math.MaxUint32 {
		return uint64(v), 4, nil
	}
	if len(b) < 12 {
		return 0, 0, fmt.Errorf("truncated size")
	}
	return binary.LittleEndian.Uint64(b[4:]), 12, nil
}

// readCtrProj reads a TModelCtrBase.
func readCtrProj(base fbTable) (ctrProj, error) {
	var p ctrProj
	tp, err := base.uint8(ctrBaseType, 0)
	if err != nil {
		return p, err
	}
	p.typ = int(int8(tp))
	if p.typ < 0 || p.typ > ctrFeatureFreq {
		return p, fmt.Errorf("unknown CTR type %d", p.typ)
	}
	comb, ok, err := base.table(ctrBaseCombination)
	if err != nil || !ok {
		return p, fmt.Errorf("CTR without feature combination (%v)", err)
	}
	cats, err := comb.int32s(combinationCatFeatures)
	if err != nil {
		return p, err
	}
	for _, c := range cats {
		p.cats = append(p.cats, int(c))
	}
	fl, err := comb.int32Pairs(1)
	if err != nil {
		return p, err
	}
	for _, f := range fl {
		p.floats = append(p.floats, floatProjSplit{index: int(int32(f[0])), border: float64(math.Float32frombits(f[1]))})
	}
	oh, err := comb.int32Pairs(2)
	if err != nil {
		return p, err
	}
	for _, o := range oh {
		p.oneHots = append(p.oneHots, oneHotProjSplit{index: int(int32(o[0])), value: int32(o[1])})
	}
	return p, nil
}

// readCtrFeature reads a TCtrFeature.
func readCtrFeature(c fbTable) (ctrFeature, error) {
	var cf ctrFeature
	ctr, ok, err := c.table(ctrFeatureCtr)
	if err != nil || !ok {
		return cf, fmt.Errorf("no Ctr (%v)", err)
	}
	base, ok, err := ctr.table(ctrBase)
	if err != nil || !ok {
		return cf, fmt.Errorf("no Base (%v)", err)
	}
	if cf.base, err = readCtrProj(base); err != nil {
		return cf, err
	}
	tbi, err1 := ctr.int32(1, 0)
	pn, err2 := ctr.float32(2, 0)
	pd, err3 := ctr.float32(3, 1)
	sh, err4 := ctr.float32(4, 0)
	sc, err5 := ctr.float32(5, 1)
	borders, err6 := c.float32s(1)
	if err := firstErr(err1, err2, err3, err4, err5, err6); err != nil {
		return cf, err
	}
	cf.targetBorderIdx, cf.priorNum, cf.priorDenom, cf.shift, cf.scale = int(tbi), pn, pd, sh, sc
	for _, b := range borders {
		cf.borders = append(cf.borders, float64(b))
	}
	return cf, nil
}

// readInfo takes the loss function and class names from the info map.
func (m *model) readInfo(info map[string]string) error {
	if p, ok := info["params"]; ok {
		var params struct {
			LossFunction struct {
				Type string `json:"type"`
			} `json:"loss_function"`
		}
		if err := json.Unmarshal([]byte(p), &params); err != nil {
			return fmt.Errorf("info params: %w", err)
		}
		m.loss = params.LossFunction.Type
	}
	if c, ok := info["class_params"]; ok {
		var cp classParams
		if err := json.Unmarshal([]byte(c), &cp); err != nil {
			return fmt.Errorf("info class_params: %w", err)
		}
		m.classNames = cp.names()
	}
	return nil
}

type classParams struct {
	ClassNames []json.RawMessage `json:"class_names"`
}

func (c classParams) names() []string {
	out := make([]string, len(c.ClassNames))
	for i, r := range c.ClassNames {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out[i] = s
		} else {
			out[i] = string(r)
		}
	}
	return out
}

func (m *model) readTrees(mt fbTable) error {
	dim, err := mt.int32(mtApproxDimension, 1)
	if err != nil {
		return err
	}
	m.dim = int(dim)
	if m.dim < 1 || m.dim > maxDimension {
		return fmt.Errorf("approx dimension %d; want 1 to %d", m.dim, maxDimension)
	}
	// Features.
	floats, err := mt.tables(mtFloatFeatures)
	if err != nil {
		return fmt.Errorf("float features: %w", err)
	}
	for _, f := range floats {
		idx, err1 := f.int32(floatIndex, -1)
		flat, err2 := f.int32(floatFlatIndex, -1)
		borders, err3 := f.float32s(floatBorders)
		id, err4 := f.string(floatFeatureID)
		nt, err5 := f.uint8(floatNanTreatment, 0)
		if err := firstErr(err1, err2, err3, err4, err5); err != nil {
			return fmt.Errorf("float feature: %w", err)
		}
		if nt > uint8(nanAsTrue) {
			return fmt.Errorf("float feature %d: unknown NaN treatment %d", idx, nt)
		}
		ff := floatFeature{index: int(idx), flat: int(flat), nan: nanTreatment(nt), id: id, borders: make([]float64, len(borders))}
		for i, b := range borders {
			ff.borders[i] = float64(b)
		}
		m.floats = append(m.floats, ff)
	}
	cats, err := mt.tables(mtCatFeatures)
	if err != nil {
		return fmt.Errorf("categorical features: %w", err)
	}
	for _, c := range cats {
		idx, err1 := c.int32(catIndex, -1)
		flat, err2 := c.int32(catFlatIndex, -1)
		id, err3 := c.string(catFeatureID)
		if err := firstErr(err1, err2, err3); err != nil {
			return fmt.Errorf("categorical feature: %w", err)
		}
		m.cats = append(m.cats, catFeature{index: int(idx), flat: int(flat), id: id})
	}
	// Text and embedding features: refused when the model uses them
	// (through estimated features).
	var textNames []string
	for _, field := range []int{mtTextFeatures, mtEmbeddingFeatures} {
		ts, err := mt.tables(field)
		if err != nil {
			return fmt.Errorf("text/embedding features: %w", err)
		}
		kind := "text"
		if field == mtEmbeddingFeatures {
			kind = "embedding"
		}
		for _, t := range ts {
			idx, err1 := t.int32(0, -1)
			flat, err2 := t.int32(1, -1)
			id, err3 := t.string(2)
			if err := firstErr(err1, err2, err3); err != nil {
				return fmt.Errorf("%s feature: %w", kind, err)
			}
			textNames = append(textNames, featureName(kind, int(idx), int(flat), id))
			m.otherFlat = append(m.otherFlat, int(flat))
		}
	}
	est, err := mt.tables(mtEstimatedFeatures)
	if err != nil {
		return fmt.Errorf("estimated features: %w", err)
	}
	if len(est) > 0 {
		return unsupported("the model uses %d features computed from text or embedding features (%s); onnxconv does not compute text or embedding features",
			len(est), joinNames(textNames))
	}
	m.textNames = textNames
	ctrs, err := mt.tables(mtCtrFeatures)
	if err != nil {
		return fmt.Errorf("CTR features: %w", err)
	}
	for ci, c := range ctrs {
		cf, err := readCtrFeature(c)
		if err != nil {
			return fmt.Errorf("CTR feature %d: %w", ci, err)
		}
		m.ctrs = append(m.ctrs, cf)
	}
	// The binary features, in CatBoost's order: every float border, then
	// every one-hot value.
	var bins []split
	for _, f := range m.floats {
		for _, b := range f.borders {
			bins = append(bins, split{kind: splitFloat, feature: f.index, border: b})
		}
	}
	ohs, err := mt.tables(mtOneHotFeatures)
	if err != nil {
		return fmt.Errorf("one-hot features: %w", err)
	}
	for _, oh := range ohs {
		idx, err1 := oh.int32(oneHotIndex, -1)
		vals, err2 := oh.int32s(oneHotValues)
		if err := firstErr(err1, err2); err != nil {
			return fmt.Errorf("one-hot feature: %w", err)
		}
		for _, v := range vals {
			bins = append(bins, split{kind: splitOneHot, feature: int(idx), value: v})
		}
	}
	// Then every CTR border.
	for ci, c := range m.ctrs {
		for _, b := range c.borders {
			bins = append(bins, split{kind: splitCtr, feature: ci, border: b})
		}
	}
	// Scale and bias.
	if m.scale, err = mt.float64(mtScale, 1); err != nil {
		return err
	}
	multi, err := mt.float64s(mtMultiBias)
	if err != nil {
		return err
	}
	bias, err := mt.float64(mtBias, 0)
	if err != nil {
		return err
	}
	switch {
	case len(multi) > 0:
		m.bias = multi
	case bias != 0:
		m.bias = make([]float64, m.dim)
		for i := range m.bias {
			m.bias[i] = bias
		}
	}
	// Trees.
	splits, err1 := mt.int32s(mtTreeSplits)
	sizes, err2 := mt.int32s(mtTreeSizes)
	starts, err3 := mt.int32s(mtTreeStartOffsets)
	leaves, err4 := mt.float64s(mtLeafValues)
	steps, err5 := mt.uint16Pairs(mtStepNodes)
	toLeaf, err6 := mt.uint32s(mtNodeIDToLeafID)
	if err := firstErr(err1, err2, err3, err4, err5, err6); err != nil {
		return fmt.Errorf("trees: %w", err)
	}
	if len(starts) != len(sizes) {
		return fmt.Errorf("%d tree sizes but %d tree start offsets", len(sizes), len(starts))
	}
	bin := func(s int32) (split, error) {
		if s < 0 || int(s) >= len(bins) {
			return split{}, fmt.Errorf("split %d out of range: the model has %d binary features", s, len(bins))
		}
		return bins[s], nil
	}
	m.leafCount = len(leaves)
	if len(steps) == 0 {
		return m.obliviousTrees(splits, sizes, starts, leaves, bin)
	}
	return m.nonSymmetricTrees(splits, sizes, starts, leaves, steps, toLeaf, bin)
}

func (m *model) obliviousTrees(splits, sizes, starts []int32, leaves []float64, bin func(int32) (split, error)) error {
	off := 0
	for ti := range sizes {
		depth, start := int(sizes[ti]), int(starts[ti])
		if depth < 0 || depth > maxDepth {
			return fmt.Errorf("tree %d: depth %d; want 0 to %d", ti, depth, maxDepth)
		}
		if start < 0 || start > len(splits)-depth {
			return fmt.Errorf("tree %d: splits [%d, %d) out of range (%d splits)", ti, start, start+depth, len(splits))
		}
		n := (1 << depth) * m.dim
		if n > len(leaves)-off {
			return fmt.Errorf("tree %d: needs %d leaf values from %d; the model has %d", ti, n, off, len(leaves))
		}
		t := tree{leaves: leaves[off : off+n : off+n]}
		off += n
		for d := 0; d < depth; d++ {
			s, err := bin(splits[start+d])
			if err != nil {
				return fmt.Errorf("tree %d: %w", ti, err)
			}
			t.splits = append(t.splits, s)
		}
		if t.splits == nil {
			t.splits = []split{}
		}
		m.trees = append(m.trees, t)
	}
	if off != len(leaves) {
		return fmt.Errorf("the trees use %d leaf values; the model has %d", off, len(leaves))
	}
	return nil
}

// nonSymmetricTrees reads Depthwise/Lossguide trees: node n of a tree
// goes to n+RightSubtreeDiff when its split holds, else to
// n+LeftSubtreeDiff; a zero difference stops at n, whose leaf is
// NodeIdToLeafId[n] (an offset in LeafValues).
func (m *model) nonSymmetricTrees(splits, sizes, starts []int32, leaves []float64, steps [][2]uint16, toLeaf []uint32, bin func(int32) (split, error)) error {
	total := len(splits)
	if len(steps) != total || len(toLeaf) != total {
		return fmt.Errorf("non-symmetric trees: %d splits, %d step nodes, %d node-to-leaf entries", total, len(steps), len(toLeaf))
	}
	leafAt := func(ti, n int) (node, error) {
		id := toLeaf[n]
		if id == math.MaxUint32 || int64(id)+int64(m.dim) > int64(len(leaves)) {
			return node{}, fmt.Errorf("tree %d node %d: leaf %d out of range (%d leaf values)", ti, n, id, len(leaves))
		}
		return node{leaf: true, values: leaves[id : int(id)+m.dim : int(id)+m.dim]}, nil
	}
	for ti := range sizes {
		size, start := int(sizes[ti]), int(starts[ti])
		if size < 1 || start < 0 || start > total-size {
			return fmt.Errorf("tree %d: nodes [%d, %d) out of range (%d nodes)", ti, start, start+size, total)
		}
		end := start + size
		var t tree
		seen := make([]bool, size)
		// pending: a cbm node to convert into t.nodes[at].
		type pend struct{ n, at int }
		stack := []pend{{start, 0}}
		t.nodes = append(t.nodes, node{})
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[p.n-start] {
				return fmt.Errorf("tree %d: node %d is reached twice", ti, p.n)
			}
			seen[p.n-start] = true
			st := steps[p.n]
			if st[0] == 0 && st[1] == 0 {
				lf, err := leafAt(ti, p.n)
				if err != nil {
					return err
				}
				t.nodes[p.at] = lf
				continue
			}
			s, err := bin(splits[p.n])
			if err != nil {
				return fmt.Errorf("tree %d node %d: %w", ti, p.n, err)
			}
			nd := node{split: s}
			for side, diff := range st {
				child := len(t.nodes)
				if diff == 0 {
					lf, err := leafAt(ti, p.n)
					if err != nil {
						return err
					}
					t.nodes = append(t.nodes, lf)
				} else {
					c := p.n + int(diff)
					if c >= end {
						return fmt.Errorf("tree %d node %d: child %d past the tree's end %d", ti, p.n, c, end)
					}
					t.nodes = append(t.nodes, node{})
					stack = append(stack, pend{c, child})
				}
				if side == 0 {
					nd.left = child
				} else {
					nd.right = child
				}
			}
			t.nodes[p.at] = nd
		}
		m.trees = append(m.trees, t)
	}
	return nil
}

func (m *model) catName(i int) string {
	if c, err := m.catByIndex(i); err == nil {
		return featureName("categorical", c.index, c.flat, c.id)
	}
	return fmt.Sprintf("categorical feature %d", i)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
