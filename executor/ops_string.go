package executor

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/onnxconv/onnxconv/canonical"
)

// String operators of ai.onnx, as host kernels.

func registerString(r registry) {
	r.host(strNormalizer, "StringNormalizer")
	r.host(strConcat, "StringConcat")
	r.host(strSplit, "StringSplit")
	r.host(strRegexFullMatch, "RegexFullMatch")
	r.host(strTfIdfVectorizer, "TfIdfVectorizer")
	for _, op := range []string{"StringNormalizer", "StringConcat", "StringSplit", "RegexFullMatch", "TfIdfVectorizer"} {
		r.impl("", op).preferHost = true
	}
}

// strInput returns input i, which must be a string tensor.
func strInput(c *lctx, i int) (*htensor, []string, error) {
	h, err := c.H(i)
	if err != nil {
		return nil, nil, err
	}
	s, ok := h.data.([]string)
	if !ok {
		return nil, nil, fmt.Errorf("input %d has type %v, expected string", i, h.dt)
	}
	return h, s, nil
}

func strTensor(shape []int, v []string) *htensor {
	return &htensor{dt: canonical.String, shape: append([]int{}, shape...), data: v}
}

func strNormalizer(c *lctx) error {
	x, xs, err := strInput(c, 0)
	if err != nil {
		return err
	}
	twoD := len(x.shape) == 2
	switch {
	case len(x.shape) == 1:
	case twoD && x.shape[0] == 1:
	default:
		return fmt.Errorf("StringNormalizer takes a [C] or [1, C] tensor, got shape %v", x.shape)
	}
	action := c.AStr("case_change_action", "NONE")
	if action != "NONE" && action != "LOWER" && action != "UPPER" {
		return fmt.Errorf("unknown case_change_action %q", action)
	}
	sensitive := c.AInt("is_case_sensitive", 0) != 0
	stop := map[string]bool{}
	for _, w := range c.n.AttrStrings("stopwords", nil) {
		if !sensitive {
			w = strings.ToLower(w)
		}
		stop[w] = true
	}
	var out []string
	for _, s := range xs {
		k := s
		if !sensitive {
			k = strings.ToLower(s)
		}
		if stop[k] {
			continue
		}
		switch action {
		case "LOWER":
			s = strings.ToLower(s)
		case "UPPER":
			s = strings.ToUpper(s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = []string{""}
	}
	shape := []int{len(out)}
	if twoD {
		shape = []int{1, len(out)}
	}
	c.OutH(0, strTensor(shape, out))
	return nil
}

func strConcat(c *lctx) error {
	a, as, err := strInput(c, 0)
	if err != nil {
		return err
	}
	b, bs, err := strInput(c, 1)
	if err != nil {
		return err
	}
	shape, err := bcastShape(a.shape, b.shape)
	if err != nil {
		return err
	}
	ia, ib := bcastIdx(shape, a.shape), bcastIdx(shape, b.shape)
	out := make([]string, numel(shape))
	for i := range out {
		out[i] = as[ia[i]] + bs[ib[i]]
	}
	c.OutH(0, strTensor(shape, out))
	return nil
}

// strSplitWS splits s on runs of white space like Python's str.split()
// (maxsplit < 0: no limit).
func strSplitWS(s string, maxsplit int) []string {
	parts := []string{}
	skip := func(i int) int {
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		return i
	}
	i := skip(0)
	for i < len(s) {
		if maxsplit >= 0 && len(parts) == maxsplit {
			parts = append(parts, s[i:])
			break
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		parts = append(parts, s[i:j])
		i = skip(j)
	}
	return parts
}

func strSplit(c *lctx) error {
	x, xs, err := strInput(c, 0)
	if err != nil {
		return err
	}
	delim := c.AStr("delimiter", "")
	maxsplit := -1
	if c.HasAttr("maxsplit") {
		maxsplit = int(c.AInt("maxsplit", -1))
	}
	parts := make([][]string, len(xs))
	width := 0
	for i, s := range xs {
		if delim == "" {
			parts[i] = strSplitWS(s, maxsplit)
		} else {
			parts[i] = strings.SplitN(s, delim, maxsplit+1)
			if maxsplit < 0 {
				parts[i] = strings.Split(s, delim)
			}
		}
		width = max(width, len(parts[i]))
	}
	y := make([]string, len(xs)*width)
	z := make([]int64, len(xs))
	for i, p := range parts {
		copy(y[i*width:], p)
		z[i] = int64(len(p))
	}
	c.OutH(0, strTensor(append(append([]int{}, x.shape...), width), y))
	c.OutH(1, fromI64(canonical.Int64, x.shape, z))
	return nil
}

func strRegexFullMatch(c *lctx) error {
	x, xs, err := strInput(c, 0)
	if err != nil {
		return err
	}
	pat := c.AStr("pattern", "")
	re, err := regexp.Compile(`\A(?:` + pat + `)\z`)
	if err != nil {
		return fmt.Errorf("RegexFullMatch: pattern %q: %w", pat, err)
	}
	out := newH(canonical.Bool, x.shape)
	o := out.data.([]bool)
	for i, s := range xs {
		o[i] = re.MatchString(s)
	}
	c.OutH(0, out)
	return nil
}

// strTrie is an n-gram trie over int64 or string tokens; id is the output
// index + 1 of the n-gram ending at the node (0: none).
type strTrie struct {
	id   int
	next map[any]*strTrie
}

func (t *strTrie) child(k any) *strTrie {
	if t.next == nil {
		return nil
	}
	return t.next[k]
}

func strTfIdfVectorizer(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	minN, maxN := int(c.AInt("min_gram_length", 1)), int(c.AInt("max_gram_length", 1))
	maxSkip := int(c.AInt("max_skip_count", 0))
	mode := c.AStr("mode", "TF")
	counts := c.AInts("ngram_counts", nil)
	indexes := c.AInts("ngram_indexes", nil)
	weights := c.AFloats("weights", nil)
	if minN < 1 || maxN < minN || maxSkip < 0 {
		return fmt.Errorf("TfIdfVectorizer: bad gram lengths [%d, %d] or skip count %d", minN, maxN, maxSkip)
	}
	if mode != "TF" && mode != "IDF" && mode != "TFIDF" {
		return fmt.Errorf("TfIdfVectorizer: unknown mode %q", mode)
	}
	// Pool of tokens.
	var pool []any
	strPool := c.HasAttr("pool_strings")
	if strPool {
		for _, s := range c.n.AttrStrings("pool_strings", nil) {
			pool = append(pool, s)
		}
	} else {
		for _, v := range c.AInts("pool_int64s", nil) {
			pool = append(pool, v)
		}
	}
	if (x.dt == canonical.String) != strPool {
		return fmt.Errorf("TfIdfVectorizer: input of type %v does not match the pool", x.dt)
	}
	outSize := 0
	for _, i := range indexes {
		if i < 0 {
			return fmt.Errorf("TfIdfVectorizer: negative ngram index %d", i)
		}
		outSize = max(outSize, int(i)+1)
	}
	if len(weights) != 0 && len(weights) < outSize {
		return fmt.Errorf("TfIdfVectorizer: %d weights for %d outputs", len(weights), outSize)
	}
	root := &strTrie{}
	ng := 0
	for g := 0; g < len(counts); g++ {
		n := g + 1
		start := int(counts[g])
		end := len(pool)
		if g+1 < len(counts) {
			end = int(counts[g+1])
		}
		if start < 0 || end > len(pool) || start > end || (end-start)%n != 0 {
			return fmt.Errorf("TfIdfVectorizer: ngram_counts %v do not fit a pool of %d", counts, len(pool))
		}
		for p := start; p < end; p += n {
			if ng >= len(indexes) {
				return fmt.Errorf("TfIdfVectorizer: more n-grams than ngram_indexes")
			}
			t := root
			for _, tok := range pool[p : p+n] {
				if t.next == nil {
					t.next = map[any]*strTrie{}
				}
				if t.next[tok] == nil {
					t.next[tok] = &strTrie{}
				}
				t = t.next[tok]
			}
			t.id = int(indexes[ng]) + 1
			ng++
		}
	}
	// Tokens of the input.
	var toks []any
	if xs, ok := x.data.([]string); ok {
		for _, s := range xs {
			toks = append(toks, s)
		}
	} else {
		for _, v := range x.i64() {
			toks = append(toks, v)
		}
	}
	var rows, rowLen int
	var outShape []int
	switch len(x.shape) {
	case 1:
		rows, rowLen = 1, x.shape[0]
		outShape = []int{outSize}
	case 2:
		rows, rowLen = x.shape[0], x.shape[1]
		outShape = []int{rows, outSize}
	default:
		return fmt.Errorf("TfIdfVectorizer takes a [C] or [N, C] input, got shape %v", x.shape)
	}
	freq := make([]float64, rows*outSize)
	for r := 0; r < rows; r++ {
		row := toks[r*rowLen : (r+1)*rowLen]
		f := freq[r*outSize : (r+1)*outSize]
		startN := minN
		for skip := 1; skip <= maxSkip+1; skip++ {
			for s := 0; s < len(row); s++ {
				if s+skip*(startN-1) >= len(row) {
					break
				}
				t := root
				for n, it := 1, s; t.next != nil && n <= maxN && it < len(row); n, it = n+1, it+skip {
					t = t.child(row[it])
					if t == nil {
						break
					}
					if n >= startN && t.id != 0 {
						f[t.id-1]++
					}
				}
			}
			// Unigrams are counted once: skips do not change them.
			if startN == 1 {
				startN = 2
				if startN > maxN {
					break
				}
			}
		}
	}
	for i, v := range freq {
		j := i % max(outSize, 1)
		switch mode {
		case "IDF":
			if v > 0 {
				v = 1
				if len(weights) > 0 {
					v = float64(weights[j])
				}
			}
		case "TFIDF":
			if len(weights) > 0 {
				v *= float64(weights[j])
			}
		}
		freq[i] = v
	}
	c.OutH(0, fromF64(canonical.Float, outShape, freq))
	return nil
}
