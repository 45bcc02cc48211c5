package sklearn

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"path"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/formats/pickle"
)

// skops files (skops.io.dump) are zip archives: schema.json describes the
// object tree, node by node, and the numeric arrays are .npy members. The
// schema is read into the same inert values the pickle reader makes, with
// every class and function name put through the same allow-list, so the
// estimator readers and predictors are shared. Nothing is called.

// Limits on skops files.
const (
	// maxSkopsDepth bounds the nesting of schema nodes.
	maxSkopsDepth = 200
	// maxSkopsNodes bounds the nodes of a schema.
	maxSkopsNodes = 1 << 22
	// maxSkopsMembers bounds the members of the zip.
	maxSkopsMembers = 1 << 16
	// maxSkopsRatio bounds a deflated member's expansion (deflate itself
	// cannot exceed about 1032:1).
	maxSkopsRatio = 1100
)

// SkopsError is a malformed or hostile skops file: Member names the zip
// member (schema.json for the schema), Node the schema path of the node
// ("DecisionTreeClassifier.tree_.nodes"), when known.
type SkopsError struct {
	Member, Node string
	Err          error
}

func (e *SkopsError) Error() string {
	s := "skops"
	if e.Member != "" {
		s += " member " + strconv.Quote(e.Member)
	}
	if e.Node != "" {
		s += " node " + e.Node
	}
	return s + ": " + e.Err.Error()
}

func (e *SkopsError) Unwrap() error { return e.Err }

// skopsReader holds the zip of one skops file while its schema is read.
type skopsReader struct {
	files    map[string]*zip.File
	loaded   map[string]*Array
	budget   int64 // bytes that member decompression may still produce
	total    int64 // the whole budget
	fileSize int64
	memo     map[string]pickle.Value
	inFlight map[string]bool
	nodes    int
	protocol int64
}

// loadSkops reads a skops zip into pickle values, executing nothing.
func loadSkops(data []byte) (pickle.Value, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &SkopsError{Err: fmt.Errorf("not a readable zip: %w", err)}
	}
	if len(zr.File) > maxSkopsMembers {
		return nil, &SkopsError{Err: fmt.Errorf("%d members, more than %d", len(zr.File), maxSkopsMembers)}
	}
	// The members may expand to 200 times the file plus 64 MiB (real
	// files are stored, or deflated a few times), at most MaxDecompressed.
	budget := min(int64(MaxDecompressed), 200*int64(len(data))+64<<20)
	r := &skopsReader{files: map[string]*zip.File{}, loaded: map[string]*Array{}, budget: budget, total: budget, fileSize: int64(len(data)),
		memo: map[string]pickle.Value{}, inFlight: map[string]bool{}}
	for _, f := range zr.File {
		if err := checkMemberName(f.Name); err != nil {
			return nil, &SkopsError{Member: f.Name, Err: err}
		}
		if _, dup := r.files[f.Name]; dup {
			return nil, &SkopsError{Member: f.Name, Err: errors.New("the zip holds two members of this name")}
		}
		r.files[f.Name] = f
	}
	raw, err := r.member("schema.json")
	if err != nil {
		return nil, err
	}
	schema, err := parseOrderedJSON(raw)
	if err != nil {
		return nil, &SkopsError{Member: "schema.json", Err: err}
	}
	top, ok := schema.(*jsonObject)
	if !ok {
		return nil, &SkopsError{Member: "schema.json", Err: errors.New("the schema is not a JSON object")}
	}
	pv, ok := top.get("protocol")
	if !ok {
		return nil, &SkopsError{Member: "schema.json", Err: errors.New("no \"protocol\": not a schema of skops.io (0.3 on); load and re-save the model with a current skops")}
	}
	p, ok := pv.(json.Number)
	n, err := p.Int64()
	if !ok || err != nil || n < 0 || n > 2 {
		return nil, &SkopsError{Member: "schema.json", Err: fmt.Errorf("skops protocol %v not supported (0 to 2 are: skops 0.3 to 0.13)", pv)}
	}
	r.protocol = n
	v, err := r.node(top, "", 0)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// checkMemberName refuses names that could escape a folder if the zip
// were extracted, as skops's own files never have.
func checkMemberName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return errors.New("unsafe member name")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return errors.New("member name with \"..\"")
		}
	}
	if len(name) > 1 && name[1] == ':' {
		return errors.New("member name with a drive letter")
	}
	return nil
}

// member reads a whole member within the decompression budget.
func (r *skopsReader) member(name string) ([]byte, error) {
	f, ok := r.files[path.Clean(name)]
	if !ok || path.Clean(name) != name {
		return nil, &SkopsError{Member: name, Err: errors.New("the schema names a member the zip does not have")}
	}
	size := f.UncompressedSize64
	if size > uint64(r.budget) {
		return nil, &SkopsError{Member: name, Err: fmt.Errorf("declares %d bytes; the members of this %d-byte file may expand to %d bytes in all and %d remain (a zip bomb?)", size, r.fileSize, r.total, r.budget)}
	}
	if f.Method != zip.Store && size > 1<<20 && size/max(f.CompressedSize64, 1) > maxSkopsRatio {
		return nil, &SkopsError{Member: name, Err: fmt.Errorf("expands %d bytes to %d (a zip bomb?)", f.CompressedSize64, size)}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, &SkopsError{Member: name, Err: err}
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(size)+1))
	if err != nil {
		return nil, &SkopsError{Member: name, Err: fmt.Errorf("reading: %w", err)}
	}
	if uint64(len(b)) != size {
		return nil, &SkopsError{Member: name, Err: fmt.Errorf("holds more or fewer bytes than the %d it declares", size)}
	}
	r.budget -= int64(len(b))
	return b, nil
}

// array reads an .npy member once; later references share it.
func (r *skopsReader) array(name, at string) (*Array, error) {
	if a, ok := r.loaded[name]; ok {
		return a, nil
	}
	b, err := r.member(name)
	if err != nil {
		return nil, err
	}
	a, err := readNpy(b)
	if err != nil {
		return nil, &SkopsError{Member: name, Node: at, Err: err}
	}
	r.loaded[name] = a
	return a, nil
}

func (r *skopsReader) errf(at, format string, args ...any) error {
	return &SkopsError{Member: "schema.json", Node: at, Err: fmt.Errorf(format, args...)}
}

func child(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// str reads a string field of a node.
func (r *skopsReader) str(n *jsonObject, key, at string) (string, error) {
	v, ok := n.get(key)
	s, ok2 := v.(string)
	if !ok || !ok2 {
		return "", r.errf(at, "no string %q", key)
	}
	return s, nil
}

// obj reads an object field of a node.
func (r *skopsReader) objField(n *jsonObject, key, at string) (*jsonObject, error) {
	v, ok := n.get(key)
	o, ok2 := v.(*jsonObject)
	if !ok || !ok2 {
		return nil, r.errf(at, "no node %q", key)
	}
	return o, nil
}

// allowed resolves module.name through the allow-list, as a pickle GLOBAL.
func (r *skopsReader) allowed(module, name string) (*pickle.Global, error) {
	if module == "" || name == "" || len(module) > 256 || len(name) > 256 {
		return nil, errors.New("bad class or function name")
	}
	if err := allow(module, name); err != nil {
		return nil, &pickle.RefusedError{Module: module, Name: name, Err: err}
	}
	return &pickle.Global{Module: module, Name: name}, nil
}

// node reads one schema node. at is its path, for messages.
func (r *skopsReader) node(n *jsonObject, at string, depth int) (pickle.Value, error) {
	if depth > maxSkopsDepth {
		return nil, r.errf(at, "nodes nested more than %d deep", maxSkopsDepth)
	}
	if r.nodes++; r.nodes > maxSkopsNodes {
		return nil, r.errf(at, "more than %d nodes", maxSkopsNodes)
	}
	// A node whose __id__ was read before is the same object (skops's
	// memo); one that refers to a node still being read is a cycle.
	id := ""
	if iv, ok := n.get("__id__"); ok {
		num, ok := iv.(json.Number)
		if !ok {
			return nil, r.errf(at, "__id__ is not a number")
		}
		id = num.String()
		if r.inFlight[id] {
			return nil, r.errf(at, "__id__ %s refers to a node that contains it (a cycle)", id)
		}
		if v, ok := r.memo[id]; ok {
			return v, nil
		}
		r.inFlight[id] = true
		defer delete(r.inFlight, id)
	}
	v, err := r.build(n, at, depth)
	if err != nil {
		return nil, err
	}
	if id != "" {
		r.memo[id] = v
	}
	return v, nil
}

func (r *skopsReader) build(n *jsonObject, at string, depth int) (pickle.Value, error) {
	loader, err := r.str(n, "__loader__", at)
	if err != nil {
		return nil, err
	}
	module, _ := n.get("__module__")
	class, _ := n.get("__class__")
	mod, _ := module.(string)
	cls, _ := class.(string)
	if at == "" {
		at = cls
	}
	children := func(key string) ([]pickle.Value, error) {
		cv, ok := n.get(key)
		list, ok2 := cv.([]any)
		if !ok || !ok2 {
			return nil, r.errf(at, "%s without its %q list", loader, key)
		}
		out := make([]pickle.Value, len(list))
		for i, c := range list {
			co, ok := c.(*jsonObject)
			if !ok {
				return nil, r.errf(at, "%s item %d is not a node", loader, i)
			}
			v, err := r.node(co, fmt.Sprintf("%s[%d]", at, i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch loader {
	case "JsonNode":
		s, err := r.str(n, "content", at)
		if err != nil {
			return nil, err
		}
		v, err := jsonScalar(s)
		if err != nil {
			return nil, r.errf(at, "%v", err)
		}
		return v, nil
	case "ListNode":
		items, err := children("content")
		if err != nil {
			return nil, err
		}
		return &pickle.List{Items: items}, nil
	case "TupleNode":
		items, err := children("content")
		if err != nil {
			return nil, err
		}
		return &pickle.Tuple{Items: items}, nil
	case "SetNode":
		items, err := children("content")
		if err != nil {
			return nil, err
		}
		return &pickle.Set{Items: items, Frozen: cls == "frozenset"}, nil
	case "DictNode":
		return r.dict(n, at, depth)
	case "NdArrayNode":
		return r.ndarray(n, mod, cls, at, depth)
	case "DTypeNode":
		c, err := r.objField(n, "content", at)
		if err != nil {
			return nil, err
		}
		v, err := r.node(c, child(at, "dtype"), depth+1)
		if err != nil {
			return nil, err
		}
		a, ok := v.(*Array)
		if !ok {
			return nil, r.errf(at, "DTypeNode without its array")
		}
		return dtypeObject(a)
	case "TypeNode":
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return g, nil
	case "FunctionNode":
		if r.protocol == 0 {
			c, err := r.objField(n, "content", at)
			if err != nil {
				return nil, err
			}
			if mod, err = r.str(c, "module_path", at); err != nil {
				return nil, err
			}
			if cls, err = r.str(c, "function", at); err != nil {
				return nil, err
			}
		}
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return g, nil
	case "MethodNode":
		c, err := r.objField(n, "content", at)
		if err != nil {
			return nil, err
		}
		fn, _ := c.get("func")
		name, _ := fn.(string)
		return nil, fmt.Errorf("%s: %w", at, &pickle.RefusedError{Module: mod, Name: cls + "." + name,
			Err: errors.New("a bound method is code; skops files holding one are not converted")})
	case "ObjectNode":
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		o := &pickle.Object{Op: "NEWOBJ", Callable: g}
		if cv, ok := n.get("content"); ok && cv != nil {
			c, ok := cv.(*jsonObject)
			if !ok {
				return nil, r.errf(at, "ObjectNode content is not a node")
			}
			st, err := r.node(c, at, depth+1)
			if err != nil {
				var re *pickle.RefusedError
				if cls == "FunctionTransformer" && errors.As(err, &re) && re.Module != "" {
					return nil, &FunctionTransformerError{Func: re.Module + "." + re.Name, Err: err}
				}
				return nil, err
			}
			o.State, o.Built = st, true
		}
		return o, nil
	case "ReduceNode", "TreeNode", "LossNode":
		if loader == "TreeNode" && cls != "Tree" {
			return nil, r.errf(at, "TreeNode of class %q", cls)
		}
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		red, err := r.objField(n, "__reduce__", at)
		if err != nil {
			return nil, err
		}
		an, err := r.objField(red, "args", at)
		if err != nil {
			return nil, err
		}
		args, err := r.node(an, child(at, "__reduce__"), depth+1)
		if err != nil {
			return nil, err
		}
		t, ok := args.(*pickle.Tuple)
		if !ok {
			return nil, r.errf(at, "%s arguments are not a tuple", loader)
		}
		o := &pickle.Object{Op: "REDUCE", Callable: g, Args: t.Items}
		if c, err := r.objField(n, "content", at); err == nil {
			st, err := r.node(c, at, depth+1)
			if err != nil {
				return nil, err
			}
			o.State, o.Built = st, true
		}
		return o, nil
	case "ConstructorFromReduceNode":
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		c, err := r.objField(n, "content", at)
		if err != nil {
			return nil, err
		}
		args, err := r.node(c, at, depth+1)
		if err != nil {
			return nil, err
		}
		t, ok := args.(*pickle.Tuple)
		if !ok {
			return nil, r.errf(at, "constructor arguments are not a tuple")
		}
		return &pickle.Object{Op: "REDUCE", Callable: g, Args: t.Items}, nil
	case "SliceNode":
		g, err := r.allowed("builtins", "slice")
		if err != nil {
			return nil, err
		}
		c, err := r.objField(n, "content", at)
		if err != nil {
			return nil, err
		}
		var args []pickle.Value
		for _, k := range []string{"start", "stop", "step"} {
			v, _ := c.get(k)
			if v == nil {
				args = append(args, nil)
				continue
			}
			num, ok := v.(json.Number)
			i, err := num.Int64()
			if !ok || err != nil {
				return nil, r.errf(at, "slice %s is not an integer", k)
			}
			args = append(args, i)
		}
		return &pickle.Object{Op: "REDUCE", Callable: g, Args: args}, nil
	case "RandomStateNode", "RandomGeneratorNode":
		// The estimator's random state: kept as the pickle reader keeps
		// it (a recorded construction), never used to predict.
		name := "__randomstate_ctor"
		if loader == "RandomGeneratorNode" {
			name = "__generator_ctor"
		}
		g, err := r.allowed("numpy.random._pickle", name)
		if err != nil {
			return nil, err
		}
		return &pickle.Object{Op: "REDUCE", Callable: g}, nil
	case "BytesNode", "BytearrayNode":
		f, err := r.str(n, "file", at)
		if err != nil {
			return nil, err
		}
		b, err := r.member(f)
		if err != nil {
			return nil, err
		}
		return pickle.Bytes(b), nil
	case "_DictWithDeprecatedKeysNode", "DefaultDictNode":
		c, err := r.objField(n, "content", at)
		if err != nil {
			return nil, err
		}
		m, err := r.objField(c, "main", at)
		if err != nil {
			return nil, err
		}
		return r.node(m, at, depth+1)
	case "SparseMatrixNode", "MaskedArrayNode", "PartialNode", "OperatorFuncNode":
		// Put through the allow-list, which names what it refuses
		// (the pickle reader refuses these classes the same way).
		g, err := r.allowed(mod, cls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return nil, r.errf(at, "%s of %s is not supported", loader, g)
	}
	return nil, r.errf(at, "unknown skops node type %q (class %s.%s)", loader, mod, cls)
}

// dict reads a DictNode: content maps keys to nodes, key_types lists each
// key's type (str or int) in the same order.
func (r *skopsReader) dict(n *jsonObject, at string, depth int) (pickle.Value, error) {
	cv, ok := n.get("content")
	content, ok2 := cv.(*jsonObject)
	if !ok || !ok2 {
		return nil, r.errf(at, "DictNode without its content")
	}
	var kinds []string
	if kt, ok := n.get("key_types"); ok {
		ko, ok := kt.(*jsonObject)
		if !ok {
			return nil, r.errf(at, "key_types is not a node")
		}
		lv, _ := ko.get("content")
		list, ok := lv.([]any)
		if !ok || len(list) != len(content.keys) {
			return nil, r.errf(at, "key_types lists %d types for %d keys", len(list), len(content.keys))
		}
		for _, t := range list {
			to, ok := t.(*jsonObject)
			if !ok {
				return nil, r.errf(at, "key type is not a node")
			}
			c, _ := to.get("__class__")
			s, _ := c.(string)
			kinds = append(kinds, s)
		}
	}
	d := &pickle.Dict{Items: make([]pickle.DictItem, 0, len(content.keys))}
	for i, k := range content.keys {
		var key pickle.Value = k
		if kinds != nil {
			switch kinds[i] {
			case "str":
			case "int":
				v, err := strconv.ParseInt(k, 10, 64)
				if err != nil {
					return nil, r.errf(at, "key %q is not an int", k)
				}
				key = v
			default:
				return nil, r.errf(at, "key %q of type %q (str and int keys are supported)", k, kinds[i])
			}
		}
		vo, ok := content.vals[i].(*jsonObject)
		if !ok {
			return nil, r.errf(child(at, k), "value is not a node")
		}
		v, err := r.node(vo, child(at, k), depth+1)
		if err != nil {
			return nil, err
		}
		d.Items = append(d.Items, pickle.DictItem{Key: key, Value: v})
	}
	return d, nil
}

// ndarray reads an NdArrayNode: a numeric array in an .npy member, or an
// object array as a list of nodes and a shape; a numpy scalar type
// (float64, int64, …) is a 0-d array.
func (r *skopsReader) ndarray(n *jsonObject, mod, cls, at string, depth int) (pickle.Value, error) {
	if mod != "numpy" || cls != "ndarray" {
		if _, err := r.allowed(mod, cls); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
	}
	typ, err := r.str(n, "type", at)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "numpy":
		f, err := r.str(n, "file", at)
		if err != nil {
			return nil, err
		}
		a, err := r.array(f, at)
		if err != nil {
			return nil, err
		}
		if cls != "ndarray" && len(a.Shape) != 0 {
			return nil, r.errf(at, "numpy scalar %s with shape %v", cls, a.Shape)
		}
		return a, nil
	case "json":
		cv, _ := n.get("content")
		list, ok := cv.([]any)
		if !ok {
			return nil, r.errf(at, "object array without its content list")
		}
		objs := make([]pickle.Value, len(list))
		for i, c := range list {
			co, ok := c.(*jsonObject)
			if !ok {
				return nil, r.errf(at, "object array item %d is not a node", i)
			}
			if objs[i], err = r.node(co, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return nil, err
			}
		}
		so, err := r.objField(n, "shape", at)
		if err != nil {
			return nil, err
		}
		sv, err := r.node(so, child(at, "shape"), depth+1)
		if err != nil {
			return nil, err
		}
		shape, err := parseShape(sv)
		if err != nil {
			return nil, r.errf(at, "%v", err)
		}
		// tolist() nests the items by dimension: flatten them in C order.
		flat, err := flattenObjects(objs, shape)
		if err != nil {
			return nil, r.errf(at, "object array of shape %v: %v", shape, err)
		}
		return &Array{Shape: shape, Kind: 'O', Objects: flat}, nil
	}
	return nil, r.errf(at, "array type %q not supported", typ)
}

// flattenObjects flattens the nested lists of an object array's tolist()
// (one level per dimension) in C order, checking them against shape.
func flattenObjects(items []pickle.Value, shape []int) ([]pickle.Value, error) {
	if len(shape) == 0 {
		if len(items) != 1 {
			return nil, fmt.Errorf("%d items for a 0-d array", len(items))
		}
		return items, nil
	}
	if len(items) != shape[0] {
		return nil, fmt.Errorf("%d items where the shape has %d", len(items), shape[0])
	}
	if len(shape) == 1 {
		return items, nil
	}
	var out []pickle.Value
	for _, it := range items {
		l, ok := it.(*pickle.List)
		if !ok {
			return nil, fmt.Errorf("an item where a list of %d was expected", shape[1])
		}
		sub, err := flattenObjects(l.Items, shape[1:])
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// dtypeObject is a numpy dtype as the pickle reader records it:
// numpy.dtype(str, False, True) with the byte order in its state.
func dtypeObject(a *Array) (pickle.Value, error) {
	var s string
	switch a.Kind {
	case 'f', 'i', 'u', 'b':
		s = fmt.Sprintf("%c%d", a.Kind, a.dt.size)
	default:
		return nil, fmt.Errorf("numpy dtype of kind %q not supported", a.Kind)
	}
	return &pickle.Object{Op: "REDUCE", Callable: &pickle.Global{Module: "numpy", Name: "dtype"},
		Args:  []pickle.Value{s, false, true},
		State: &pickle.Tuple{Items: []pickle.Value{int64(3), "<", nil, nil, nil, int64(-1), int64(-1), int64(0)}}, Built: true}, nil
}

// jsonScalar decodes a JsonNode's content: JSON text of a str, int,
// float, bool or None (Python's json writes NaN and Infinity bare).
func jsonScalar(s string) (pickle.Value, error) {
	switch strings.TrimSpace(s) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	v, err := parseOrderedJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("JsonNode content: %w", err)
	}
	return jsonToPickle(v, 0)
}

func jsonToPickle(v any, depth int) (pickle.Value, error) {
	if depth > maxSkopsDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	switch v := v.(type) {
	case nil, bool, string:
		return v, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if len(s) > 1000 {
				return nil, errors.New("integer of more than 1000 digits")
			}
			b, ok := new(big.Int).SetString(s, 10)
			if ok {
				return b, nil
			}
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("bad number %q", s)
		}
		return f, nil
	case []any:
		l := &pickle.List{Items: make([]pickle.Value, len(v))}
		for i, x := range v {
			p, err := jsonToPickle(x, depth+1)
			if err != nil {
				return nil, err
			}
			l.Items[i] = p
		}
		return l, nil
	case *jsonObject:
		d := &pickle.Dict{}
		for i, k := range v.keys {
			p, err := jsonToPickle(v.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			d.Items = append(d.Items, pickle.DictItem{Key: k, Value: p})
		}
		return d, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

// jsonObject is a JSON object with its keys in order (DictNode's
// key_types are listed in the order of its keys).
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// parseOrderedJSON decodes JSON keeping object key order; numbers stay
// json.Number. Duplicate keys are refused.
func parseOrderedJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := jsonValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func jsonValue(dec *json.Decoder, depth int) (any, error) {
	if depth > 4*maxSkopsDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jsonObject{}
			var seen map[string]bool
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				if seen == nil {
					seen = map[string]bool{}
				}
				if seen[k] {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				seen[k] = true
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, k), append(o.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			out := []any{}
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return out, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return t, nil
}
