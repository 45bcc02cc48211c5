package xgboost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/importers"
)

// The legacy binary model format: what xgboost < 1.0 wrote with
// save_model, and what later releases (to 1.7) still write with
// save_raw("deprecated") or save_model to a name that is not .json or
// .ubj. It is the C structs of the learner, the booster and each tree,
// little-endian, in this order:
//
//	["binf"]                       optional header (always written by 1.x)
//	LearnerModelParam   136 bytes  base_score f32, num_feature u32,
//	                               num_class i32, contain_extra_attrs i32,
//	                               contain_eval_metrics i32, then (1.x)
//	                               major u32, minor u32, num_target u32,
//	                               boost_from_average i32; reserved (0)
//	objective, booster             strings: u64 length, bytes
//	gbtree / dart:
//	  GBTreeModelParam  160 bytes  num_trees i32, num_roots i32,
//	                               num_feature i32, pad, num_pbuffer i64,
//	                               num_output_group i32,
//	                               size_leaf_vector i32, reserved
//	  per tree: TreeParam 148 bytes (num_roots, num_nodes, num_deleted,
//	    max_depth, num_feature, size_leaf_vector, reserved), num_nodes
//	    Nodes of 20 bytes (parent i32, left i32, right i32, sindex u32:
//	    feature | default_left<<31, leaf value or split condition f32)
//	    and num_nodes stats of 16 bytes (loss_chg, sum_hess,
//	    base_weight f32, leaf_child_cnt i32)
//	  tree_info                    num_trees i32 (each tree's group)
//	  dart only: weight_drop       u64 count, f32 values
//	gblinear:
//	  GBLinearModelParam 136 bytes num_feature u32, num_output_group i32
//	  weights                      u64 count, f32 values
//	attributes (if contain_extra_attrs)  u64 count, string pairs
//
// Before 1.0 base_score is stored as a margin (the objective's
// ProbToMargin already applied); from 1.0 (major_version >= 1) it is
// stored as a prediction, like the JSON model's.

// Sizes of the legacy structs.
const (
	legacyLearnerParam = 136
	legacyGBTreeParam  = 160
	legacyTreeParam    = 148
	legacyNode         = 20
	legacyStat         = 16
	legacyLinearParam  = 136
)

// LegacyError is a malformed legacy binary model: Offset is where the
// reader was, Part what it was reading.
type LegacyError struct {
	Offset int
	Part   string
	Err    error
}

func (e *LegacyError) Error() string {
	return fmt.Sprintf("legacy binary model, %s at byte %d: %v", e.Part, e.Offset, e.Err)
}

func (e *LegacyError) Unwrap() error { return e.Err }

// legacyReader reads the little-endian fields of a legacy model.
type legacyReader struct {
	b    []byte
	pos  int
	part string
}

func (r *legacyReader) fail(format string, args ...any) error {
	return &LegacyError{Offset: r.pos, Part: r.part, Err: fmt.Errorf(format, args...)}
}

func (r *legacyReader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.fail("needs %d bytes, %d remain (truncated?)", n, len(r.b)-r.pos)
	}
	out := r.b[r.pos : r.pos+n]
	r.pos += n
	return out, nil
}

func (r *legacyReader) u32() (uint32, error) {
	b, err := r.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *legacyReader) i32() (int32, error) {
	v, err := r.u32()
	return int32(v), err
}

func (r *legacyReader) u64() (uint64, error) {
	b, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a dmlc string: a u64 length and the bytes, at most max.
func (r *legacyReader) str(max int) (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(max) || n > uint64(len(r.b)-r.pos) {
		return "", r.fail("a string of %d bytes (at most %d, %d remain)", n, max, len(r.b)-r.pos)
	}
	b, _ := r.bytes(int(n))
	return string(b), nil
}

// floats reads a dmlc vector of float32: a u64 count and the values.
func (r *legacyReader) floats(max int) ([]float32, error) {
	n, err := r.u64()
	if err != nil {
		return nil, err
	}
	if n > uint64(max) || n > uint64(len(r.b)-r.pos)/4 {
		return nil, r.fail("a vector of %d floats (at most %d, %d bytes remain)", n, max, len(r.b)-r.pos)
	}
	out := make([]float32, n)
	for i := range out {
		v, _ := r.u32()
		out[i] = math.Float32frombits(v)
	}
	return out, nil
}

// legacyHeader is what the start of a legacy model tells: where the
// learner parameters start, the objective and booster names and where
// the booster starts.
type legacyHeader struct {
	start              int
	objective, booster string
	boosterAt          int
}

// readLegacyHeader reads the start of a legacy model (a head of the file
// is enough): the optional "binf", the learner parameters, the objective
// (a name xgboost knows, or a printable name) and the booster (gbtree,
// dart or gblinear). It is the content check of Detect.
func readLegacyHeader(b []byte) (legacyHeader, error) {
	h := legacyHeader{}
	if bytes.HasPrefix(b, []byte("bs64")) {
		return h, &LegacyError{Part: "header", Err: errors.New("the base64 (bs64) model format is not supported (xgboost itself dropped it); save the model again as JSON")}
	}
	if bytes.HasPrefix(b, []byte("binf")) {
		h.start = 4
	}
	r := &legacyReader{b: b, pos: h.start + legacyLearnerParam, part: "objective name"}
	if r.pos > len(b) {
		return h, r.fail("the file is shorter than the learner parameters")
	}
	n, err := r.u64()
	if err != nil {
		return h, err
	}
	if n >= math.MaxUint32 {
		// Models of the first releases stored the length in the high
		// 32 bits, followed by 4 bytes of padding.
		if _, err := r.bytes(4); err != nil {
			return h, err
		}
		n >>= 32
	}
	if n == 0 || n > 64 || n > uint64(len(b)-r.pos) {
		return h, r.fail("objective name of %d bytes", n)
	}
	obj, _ := r.bytes(int(n))
	for _, c := range obj {
		if c <= ' ' || c > '~' {
			return h, r.fail("objective name %q is not printable", obj)
		}
	}
	h.objective = string(obj)
	if !strings.Contains(h.objective, ":") {
		return h, r.fail("objective %q is not an xgboost objective (kind:name)", obj)
	}
	r.part = "booster name"
	if h.booster, err = r.str(16); err != nil {
		return h, err
	}
	switch h.booster {
	case "gbtree", "dart", "gblinear":
	default:
		return h, r.fail("booster %q (gbtree, dart and gblinear are xgboost's)", h.booster)
	}
	h.boosterAt = r.pos
	return h, nil
}

// legacyObjectives are the objectives whose legacy models Describe's
// magic patterns recognise (every objective the importer supports).
var legacyObjectives = []string{
	"reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:pseudohubererror", "reg:absoluteerror",
	"reg:quantileerror", "rank:pairwise", "rank:ndcg", "rank:map", "binary:logitraw", "reg:logistic",
	"binary:logistic", "binary:hinge", "count:poisson", "reg:tweedie", "reg:gamma", "survival:cox",
	"survival:aft", "multi:softprob", "multi:softmax",
}

// legacyMagic is the content a legacy model has at a fixed offset (after
// the learner parameters, with or without "binf" before them): the
// objective and booster names with their u64 lengths. Detect checks the
// whole header.
func legacyMagic() []importers.Magic {
	var out []importers.Magic
	for _, start := range []int64{0, 4} {
		for _, obj := range legacyObjectives {
			for _, b := range []string{"gbtree", "dart", "gblinear"} {
				p := binary.LittleEndian.AppendUint64(nil, uint64(len(obj)))
				p = append(p, obj...)
				p = binary.LittleEndian.AppendUint64(p, uint64(len(b)))
				p = append(p, b...)
				out = append(out, importers.Magic{Offset: start + legacyLearnerParam, Bytes: p})
			}
		}
	}
	return out
}

// isLegacy tells a legacy binary model by its content: a head that reads
// as one up to its booster name.
func isLegacy(head []byte) bool {
	_, err := readLegacyHeader(head)
	return err == nil
}

// claimsLegacy is a file that says it is a legacy model: its "binf" or
// "bs64" header, or a head that reads as one. Its errors are the legacy
// reader's.
func claimsLegacy(data []byte) bool {
	return bytes.HasPrefix(data, []byte("binf")) || bytes.HasPrefix(data, []byte("bs64")) || isLegacy(data)
}

// parseLegacy decodes a legacy binary model.
func parseLegacy(data []byte) (*model, error) {
	h, err := readLegacyHeader(data)
	if err != nil {
		return nil, err
	}
	r := &legacyReader{b: data, pos: h.start, part: "learner parameters"}
	baseBits, _ := r.u32()
	numFeature, _ := r.u32()
	numClass, _ := r.i32()
	extraAttrs, _ := r.i32()
	evalMetrics, _ := r.i32()
	major, _ := r.u32()
	minor, _ := r.u32()
	numTarget, _ := r.u32()
	if numTarget == 0 {
		numTarget = 1 // not stored before 1.7
	}
	m := &model{objective: h.objective, booster: h.booster}
	if major > 0 {
		m.version = fmt.Sprintf("%d.%d (legacy binary)", major, minor)
	} else {
		m.version = "< 1.0 (legacy binary)"
	}
	var ok bool
	if m.obj, ok = lookupObjective(m.objective); !ok {
		return nil, &LegacyError{Offset: h.start + legacyLearnerParam, Part: "objective name", Err: fmt.Errorf("objective %q is not supported", m.objective)}
	}
	if numFeature < 1 || numFeature > maxFeatures {
		return nil, r.fail("num_feature %d out of range [1, %d]", numFeature, maxFeatures)
	}
	m.numFeature = int(numFeature)
	switch {
	case m.obj.transform == tSoftprob || m.obj.transform == tSoftmax:
		if numClass < 1 || numClass > maxTargets {
			return nil, r.fail("num_class is %d; objective %s needs 1 to %d classes", numClass, m.objective, maxTargets)
		}
		m.numTargets = int(numClass)
	case numClass > 1:
		return nil, r.fail("num_class is %d but objective %s is not multi-class", numClass, m.objective)
	default:
		if numTarget > maxTargets {
			return nil, r.fail("num_target %d out of range", numTarget)
		}
		m.numTargets = int(numTarget)
	}
	base := math.Float32frombits(baseBits)
	m.baseScoreRaw = fmt.Sprint(base)
	margin := base
	if major >= 1 {
		if margin, err = m.obj.baseToMargin(base); err != nil {
			return nil, r.fail("base_score (objective %s): %w", m.objective, err)
		}
	} else if math.IsNaN(float64(base)) || math.IsInf(float64(base), 0) {
		return nil, r.fail("base_score %v", base)
	}
	m.baseMargin = make([]float32, m.numTargets)
	for i := range m.baseMargin {
		m.baseMargin[i] = margin
	}

	r.pos, r.part = h.boosterAt, h.booster+" parameters"
	switch h.booster {
	case "gbtree", "dart":
		if err := m.readLegacyTrees(r, h.booster == "dart"); err != nil {
			return nil, err
		}
	case "gblinear":
		if _, err := r.bytes(legacyLinearParam); err != nil {
			return nil, err
		}
		r.part = "gblinear weights"
		want := (m.numFeature + 1) * m.numTargets
		w, err := r.floats(want)
		if err != nil {
			return nil, err
		}
		if len(w) != want {
			return nil, r.fail("%d weights, want (num_feature+1)*groups = %d", len(w), want)
		}
		m.linear = w
	}
	if extraAttrs != 0 {
		r.part = "attributes"
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		if n > 1<<16 {
			return nil, r.fail("%d attributes", n)
		}
		for i := uint64(0); i < 2*n; i++ {
			if _, err := r.str(1 << 24); err != nil {
				return nil, err
			}
		}
	}
	if major < 1 {
		// Then, before 1.0: count:poisson's max_delta_step (a string)
		// and the evaluation metrics (a vector of strings). Neither
		// changes a prediction; they are read to check the layout.
		if m.objective == "count:poisson" {
			r.part = "max_delta_step"
			if _, err := r.str(1 << 10); err != nil {
				return nil, err
			}
		}
		if evalMetrics != 0 {
			r.part = "evaluation metrics"
			n, err := r.u64()
			if err != nil {
				return nil, err
			}
			if n > 1<<10 {
				return nil, r.fail("%d metrics", n)
			}
			for i := uint64(0); i < n; i++ {
				if _, err := r.str(1 << 10); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}

// readLegacyTrees reads the trees of a gbtree or dart booster.
func (m *model) readLegacyTrees(r *legacyReader, dart bool) error {
	gp, err := r.bytes(legacyGBTreeParam)
	if err != nil {
		return err
	}
	numTrees := int32(binary.LittleEndian.Uint32(gp[0:]))
	numRoots := int32(binary.LittleEndian.Uint32(gp[4:]))
	groups := int32(binary.LittleEndian.Uint32(gp[24:]))
	leafVector := int32(binary.LittleEndian.Uint32(gp[28:]))
	minTree := legacyTreeParam + legacyNode + legacyStat + 4
	if numTrees < 0 || int64(numTrees) > int64(len(r.b)-r.pos)/int64(minTree) {
		return r.fail("num_trees %d for %d remaining bytes", numTrees, len(r.b)-r.pos)
	}
	if numRoots > 1 {
		return r.fail("num_roots %d: multi-root trees are not supported", numRoots)
	}
	if leafVector != 0 {
		return r.fail("size_leaf_vector %d: vector-leaf trees are not supported", leafVector)
	}
	if groups > 1 && int(groups) != m.numTargets {
		return r.fail("num_output_group %d, but the learner has %d outputs", groups, m.numTargets)
	}
	m.trees = make([]tree, numTrees)
	for i := range m.trees {
		r.part = fmt.Sprintf("tree %d", i)
		nodes, err := m.readLegacyTree(r, path(fmt.Sprintf("tree %d", i)))
		if err != nil {
			return err
		}
		m.trees[i] = tree{nodes: nodes, weight: 1}
	}
	r.part = "tree_info"
	for i := range m.trees {
		g, err := r.i32()
		if err != nil {
			return err
		}
		if g < 0 || int(g) >= m.numTargets {
			return r.fail("tree %d belongs to group %d of %d", i, g, m.numTargets)
		}
		m.trees[i].target = int(g)
	}
	if dart && numTrees > 0 {
		r.part = "dart weight_drop"
		w, err := r.floats(int(numTrees))
		if err != nil {
			return err
		}
		if len(w) != int(numTrees) {
			return r.fail("%d weights for %d trees", len(w), numTrees)
		}
		for i := range m.trees {
			m.trees[i].weight = w[i]
		}
	}
	// The legacy layout does not store num_parallel_tree: a round is one
	// tree per output group.
	m.perRound = m.numTargets
	return nil
}

// readLegacyTree reads one tree: its parameters, nodes and stats.
func (m *model) readLegacyTree(r *legacyReader, p path) ([]node, error) {
	tp, err := r.bytes(legacyTreeParam)
	if err != nil {
		return nil, err
	}
	numRoots := int32(binary.LittleEndian.Uint32(tp[0:]))
	numNodes := int32(binary.LittleEndian.Uint32(tp[4:]))
	leafVector := int32(binary.LittleEndian.Uint32(tp[20:]))
	if numRoots > 1 {
		return nil, r.fail("num_roots %d: multi-root trees are not supported", numRoots)
	}
	if leafVector != 0 {
		return nil, r.fail("size_leaf_vector %d: vector-leaf trees are not supported", leafVector)
	}
	if numNodes < 1 || int64(numNodes) > int64(len(r.b)-r.pos)/(legacyNode+legacyStat) {
		return nil, r.fail("num_nodes %d for %d remaining bytes", numNodes, len(r.b)-r.pos)
	}
	n := int(numNodes)
	raw, _ := r.bytes(n * legacyNode)
	if _, err := r.bytes(n * legacyStat); err != nil {
		return nil, err
	}
	left, right, feat, dl := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	cond := make([]float32, n)
	for i := 0; i < n; i++ {
		e := raw[i*legacyNode:]
		left[i] = int64(int32(binary.LittleEndian.Uint32(e[4:])))
		right[i] = int64(int32(binary.LittleEndian.Uint32(e[8:])))
		sindex := binary.LittleEndian.Uint32(e[12:])
		cond[i] = math.Float32frombits(binary.LittleEndian.Uint32(e[16:]))
		if left[i] == -1 {
			continue // a leaf: cond is its value
		}
		// Deleted nodes (sindex all ones) are unreachable; walkTree
		// checks the reachable ones' children and features.
		feat[i] = int64(sindex & (1<<31 - 1))
		if sindex>>31 != 0 {
			dl[i] = 1
		}
	}
	nodes, err := m.walkTree(p, left, right, feat, cond, dl, nil, nil)
	if err != nil {
		return nil, &LegacyError{Offset: r.pos - n*(legacyNode+legacyStat), Part: r.part + " nodes", Err: err}
	}
	return nodes, nil
}
