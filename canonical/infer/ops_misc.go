package infer

import (
	"github.com/onnxconv/onnxconv/canonical"
)

func registerMisc(h map[string]handler, reg func(handler, ...string)) {
	reg(dft, "DFT")
	reg(stft, "STFT")
	reg(window, "HannWindow", "HammingWindow", "BlackmanWindow")
	reg(melWeight, "MelWeightMatrix")
	reg(tfidf, "TfIdfVectorizer")
	reg(stringSplit, "StringSplit")
	reg(imageDecoder, "ImageDecoder")
	reg(nms, "NonMaxSuppression")
	h["ai.onnx.preview:FlexAttention"] = flexAttention
	for _, op := range []string{"Adam", "Adagrad", "Momentum"} {
		h["ai.onnx.preview.training:"+op] = optimizer
	}
	h["ai.onnx.preview.training:Gradient"] = gradient
	ml := func(f handler, ops ...string) {
		for _, op := range ops {
			h["ai.onnx.ml:"+op] = f
		}
	}
	ml(sameShape, "Binarizer", "Imputer", "Scaler", "Normalizer")
	ml(labelEncoder, "LabelEncoder", "CategoryMapper")
	ml(treeEnsemble, "TreeEnsemble")
	ml(treeRegressor, "TreeEnsembleRegressor", "LinearRegressor")
	ml(classifier, "TreeEnsembleClassifier", "LinearClassifier", "SVMClassifier")
	ml(arrayFeatureExtractor, "ArrayFeatureExtractor")
	ml(oneHotEncoder, "OneHotEncoder")
	ml(castMap, "CastMap")
	ml(dictVectorizer, "DictVectorizer")
	ml(featureVectorizer, "FeatureVectorizer")
	ml(svmRegressor, "SVMRegressor")
	ml(zipMap, "ZipMap")
}

func dft(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() < 2 {
		return
	}
	r := x.rank()
	var ax int
	axisKnown := true
	if c.ver < 20 {
		ax = normAxis(c.attrI("axis", 1), r)
	} else if c.has(2) {
		a, ok := c.ints(2)
		if ok && len(a) == 1 {
			ax = normAxis(a[0], r)
		} else {
			axisKnown = false
		}
	} else {
		ax = normAxis(-2, r)
	}
	out := copyDims(x.dims)
	out[r-1] = kd(2)
	if !axisKnown || !validAxis(ax, r-1) {
		c.setShape(0, ranked(unknownDims(r)))
		return
	}
	n := x.dims[ax]
	onesided, inverse := c.attrI("onesided", 0) != 0, c.attrI("inverse", 0) != 0
	if c.has(1) {
		if v, ok := c.ints(1); ok && len(v) == 1 {
			n = kd(v[0])
		} else {
			n = dim{}
		}
	} else if onesided && inverse {
		n = dimMul(kd(2), dimSub(n, kd(1)))
	}
	if onesided && inverse {
		out[r-1] = kd(1)
	}
	if onesided && !inverse {
		if n.Known {
			n = kd(n.Value/2 + 1)
		} else {
			n = dim{}
		}
	}
	out[ax] = n
	c.setShape(0, ranked(out))
}

func stft(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() != 3 {
		return
	}
	step, ok := c.ints(1)
	if !ok || len(step) != 1 || step[0] <= 0 {
		return
	}
	fl := dim{}
	if c.has(3) {
		if v, ok := c.ints(3); ok && len(v) == 1 {
			fl = kd(v[0])
		}
	} else if c.has(2) {
		if w := c.shp(2); w.ranked && w.rank() == 1 {
			fl = w.dims[0]
		}
	}
	frames, bins := dim{}, dim{}
	if fl.Known && x.dims[1].Known {
		frames = kd((x.dims[1].Value-fl.Value)/step[0] + 1)
	}
	if fl.Known {
		bins = fl
		if c.attrI("onesided", 1) != 0 {
			bins = kd(fl.Value/2 + 1)
		}
	}
	c.setShape(0, ranked([]dim{x.dims[0], frames, bins, kd(2)}))
}

func window(c *nctx) {
	dt := canonical.DataType(c.attrI("output_datatype", int64(canonical.Float)))
	n := dim{}
	if v, ok := c.ints(0); ok && len(v) == 1 {
		n = kd(v[0])
	}
	c.set(0, dt, ranked([]dim{n}))
}

func melWeight(c *nctx) {
	dt := canonical.DataType(c.attrI("output_datatype", int64(canonical.Float)))
	bins, l := dim{}, dim{}
	if v, ok := c.ints(0); ok && len(v) == 1 {
		bins = kd(v[0])
	}
	if v, ok := c.ints(1); ok && len(v) == 1 {
		l = kd(v[0]/2 + 1)
	}
	c.set(0, dt, ranked([]dim{l, bins}))
}

func tfidf(c *nctx) {
	x := c.shp(0)
	idx := c.attrInts("ngram_indexes")
	var m int64 = -1
	for _, v := range idx {
		m = max(m, v)
	}
	w := kd(m + 1)
	if !x.ranked {
		return
	}
	switch x.rank() {
	case 1:
		c.set(0, canonical.Float, ranked([]dim{w}))
	case 2:
		c.set(0, canonical.Float, ranked([]dim{x.dims[0], w}))
	}
}

func stringSplit(c *nctx) {
	x := c.shp(0)
	if !x.ranked {
		return
	}
	c.set(0, canonical.String, ranked(append(copyDims(x.dims), c.inf.newDim())))
	c.set(1, canonical.Int64, x)
}

func imageDecoder(c *nctx) {
	mode := c.attrS("pixel_format", "RGB")
	ch := kd(3)
	if mode == "Grayscale" {
		ch = kd(1)
	}
	c.set(0, canonical.Uint8, ranked([]dim{c.inf.newDim(), c.inf.newDim(), ch}))
}

func nms(c *nctx) {
	c.set(0, canonical.Int64, ranked([]dim{c.inf.newDim(), kd(3)}))
}

func flexAttention(c *nctx) {
	q, v := c.shp(0), c.shp(2)
	if !q.ranked || !v.ranked || q.rank() != 4 || v.rank() != 4 {
		return
	}
	c.setShape(0, ranked([]dim{q.dims[0], q.dims[1], q.dims[2], v.dims[3]}))
}

// optimizer handles Adam, Adagrad and Momentum: each output has the type
// of the input it updates.
func optimizer(c *nctx) {
	per := 3
	if c.n.OpType == "Adam" {
		per = 4
	}
	n := (len(c.n.Inputs) - 2) / per
	if n <= 0 {
		return
	}
	for i := range c.out {
		blk, k := i/n, i%n
		inBlk := blk
		if blk > 0 {
			inBlk = blk + 1 // skip the gradients
		}
		j := 2 + inBlk*n + k
		if t := c.inType(j); t != nil {
			c.setType(i, t)
		}
	}
}

func labelEncoder(c *nctx) {
	dt := canonical.DataType(0)
	switch {
	case c.hasAttr("values_tensor") && c.n.Attr("values_tensor").T != nil:
		dt = c.n.Attr("values_tensor").T.DataType
	case c.hasAttr("values_int64s"):
		dt = canonical.Int64
	case c.hasAttr("values_strings"):
		dt = canonical.String
	case c.hasAttr("values_floats"):
		dt = canonical.Float
	case c.n.OpType == "CategoryMapper":
		if c.dt(0) == canonical.String {
			dt = canonical.Int64
		} else {
			dt = canonical.String
		}
	}
	c.set(0, dt, c.shp(0))
}

func treeEnsemble(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() == 0 {
		return
	}
	c.setShape(0, ranked([]dim{x.dims[0], kd(c.attrI("n_targets", 1))}))
}

func treeRegressor(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() == 0 {
		return
	}
	n := c.attrI("n_targets", 1)
	if c.n.OpType == "LinearRegressor" {
		n = c.attrI("targets", 1)
	}
	c.set(0, canonical.Float, ranked([]dim{x.dims[0], kd(n)}))
}

func classifier(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() == 0 {
		return
	}
	n := x.dims[0]
	if x.rank() == 1 {
		n = kd(1)
	}
	ldt := canonical.Int64
	nc := int64(len(c.attrInts("classlabels_ints")))
	if s := c.n.AttrStrings("classlabels_strings", nil); len(s) > 0 {
		ldt, nc = canonical.String, int64(len(s))
	}
	c.set(0, ldt, ranked([]dim{n}))
	scores := dim{}
	if nc > 0 {
		scores = kd(nc)
		if nc == 2 && c.n.OpType != "TreeEnsembleClassifier" {
			scores = dim{}
		}
	}
	c.set(1, canonical.Float, ranked([]dim{n, scores}))
}

func arrayFeatureExtractor(c *nctx) {
	x, y := c.shp(0), c.shp(1)
	if !x.ranked || !y.ranked {
		return
	}
	k := prod(y.dims)
	if x.rank() == 1 {
		c.setShape(0, ranked([]dim{kd(1), k}))
		return
	}
	out := copyDims(x.dims[:x.rank()-1])
	c.setShape(0, ranked(append(out, k)))
}

func oneHotEncoder(c *nctx) {
	x := c.shp(0)
	n := int64(len(c.attrInts("cats_int64s")) + len(c.n.AttrStrings("cats_strings", nil)))
	if !x.ranked {
		return
	}
	c.set(0, canonical.Float, ranked(append(copyDims(x.dims), kd(n))))
}

// gradient gives each output the type of the value it is the gradient
// of (attribute xs).
func gradient(c *nctx) {
	for i, name := range c.n.AttrStrings("xs", nil) {
		if v := c.n.Graph.Lookup(name); v != nil && v.Type != nil {
			c.setType(i, v.Type)
		}
	}
}

func castMap(c *nctx) {
	dt := canonical.Float
	switch c.attrS("cast_to", "TO_FLOAT") {
	case "TO_STRING":
		dt = canonical.String
	case "TO_INT64":
		dt = canonical.Int64
	}
	last := dim{}
	if c.attrS("map_form", "DENSE") == "SPARSE" {
		last = kd(c.attrI("max_map", 1))
	}
	c.set(0, dt, ranked([]dim{kd(1), last}))
}

func dictVectorizer(c *nctx) {
	n := len(c.attrInts("int64_vocabulary")) + len(c.n.AttrStrings("string_vocabulary", nil))
	dt := canonical.DataType(0)
	if mt := c.inType(0).GetMapType(); mt != nil {
		dt, _, _ = tensorOf(mt.ValueType)
	}
	c.set(0, dt, ranked([]dim{{}, kd(int64(n))}))
}

func featureVectorizer(c *nctx) {
	var total int64
	for _, d := range c.attrInts("inputdimensions") {
		total += d
	}
	n := dim{}
	if s := c.shp(0); s.ranked && s.rank() > 0 {
		n = s.dims[0]
	}
	c.set(0, canonical.Float, ranked([]dim{n, kd(total)}))
}

func svmRegressor(c *nctx) {
	x := c.shp(0)
	n := dim{}
	if x.ranked && x.rank() > 0 {
		n = x.dims[0]
	}
	c.set(0, canonical.Float, ranked([]dim{n, kd(1)}))
}

func zipMap(c *nctx) {
	key := canonical.Int64
	if len(c.n.AttrStrings("classlabels_strings", nil)) > 0 {
		key = canonical.String
	}
	c.setType(0, seqTP(mapTP(key, tensorTP(canonical.Float, unranked))))
}
