package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Hash tables: a HashTable node is a handle; its contents come from the
// LookupTableImport or InitializeTable node that fills it (in the graph,
// or in the initializer graph TF.js models keep apart) with constant keys
// and values; LookupTableFind becomes an ai.onnx.ml LabelEncoder of them.

func tableOps() map[string]opFunc {
	return map[string]opFunc{
		"HashTable":           (*converter).hashTable,
		"HashTableV2":         (*converter).hashTable,
		"LookupTableImport":   func(*converter, *Node) error { return nil },
		"LookupTableImportV2": func(*converter, *Node) error { return nil },
		"InitializeTable":     func(*converter, *Node) error { return nil },
		"InitializeTableV2":   func(*converter, *Node) error { return nil },
		"LookupTableFind":     (*converter).tableFind,
		"LookupTableFindV2":   (*converter).tableFind,
		"LookupTableSize":     (*converter).tableSize,
		"LookupTableSizeV2":   (*converter).tableSize,
	}
}

func (c *converter) hashTable(n *Node) error {
	c.set(n, 0, &value{table: n, rank: 0, dt: canonical.Undefined})
	return nil
}

// tableName is what identifies a table across the graph and the
// initializer graph: its shared_name, else its node name.
func tableName(n *Node) string {
	if a, ok := n.Attrs["shared_name"]; ok && len(a.S) > 0 {
		return string(a.S)
	}
	return n.Name
}

// root is the top converter (library functions convert in children).
func (c *converter) root() *converter {
	r := c
	for r.parent != nil {
		r = r.parent
	}
	return r
}

// constTensor is the value of Const node name among nodes.
func (c *converter) constTensor(nodes map[string]*Node, ref string) (*canonical.Tensor, error) {
	k, ok := tensorKey(ref)
	if !ok {
		return nil, fmt.Errorf("%q is a control input", ref)
	}
	nm, _ := splitKey(k)
	for p := c; p != nil; p = p.parent {
		if t := p.g.Consts[nm]; t != nil {
			return t, nil
		}
	}
	n := nodes[nm]
	if n == nil || n.Op != "Const" {
		return nil, fmt.Errorf("%q is not a constant", nm)
	}
	if a, ok := n.Attrs["value"]; ok && a.Tensor != nil {
		return a.Tensor, nil
	}
	return nil, fmt.Errorf("constant %q has no value", nm)
}

// tableContents finds the keys and values that fill table t.
func (c *converter) tableContents(t *Node) (*canonical.Tensor, *canonical.Tensor, error) {
	r := c.root()
	want := tableName(t)
	for _, nodes := range [][]Node{r.g.Nodes, r.g.Init} {
		byName := make(map[string]*Node, len(nodes))
		for i := range nodes {
			byName[nodes[i].Name] = &nodes[i]
		}
		for i := range nodes {
			n := &nodes[i]
			switch n.Op {
			case "LookupTableImport", "LookupTableImportV2", "InitializeTable", "InitializeTableV2":
			default:
				continue
			}
			if len(n.Inputs) < 3 {
				continue
			}
			k, _ := tensorKey(n.Inputs[0])
			nm, _ := splitKey(k)
			h := byName[nm]
			if h == nil || (h.Op != "HashTable" && h.Op != "HashTableV2") || tableName(h) != want {
				continue
			}
			keys, err := c.constTensor(byName, n.Inputs[1])
			if err != nil {
				return nil, nil, fmt.Errorf("table %q: keys: %w", want, err)
			}
			vals, err := c.constTensor(byName, n.Inputs[2])
			if err != nil {
				return nil, nil, fmt.Errorf("table %q: values: %w", want, err)
			}
			return keys, vals, nil
		}
	}
	return nil, nil, fmt.Errorf("table %q is filled by no LookupTableImport or InitializeTable of constant keys and values", want)
}

func (c *converter) tableIn(n *Node) (*Node, error) {
	v, err := c.in(n, 0)
	if err != nil {
		return nil, err
	}
	if v.table == nil {
		return nil, errors.New("input 0 is not a hash table")
	}
	return v.table, nil
}

// tableFind maps LookupTableFind to LabelEncoder (int64, float or
// string keys and values; the default from the default_value constant).
func (c *converter) tableFind(n *Node) error {
	t, err := c.tableIn(n)
	if err != nil {
		return err
	}
	keys, vals, err := c.tableContents(t)
	if err != nil {
		return err
	}
	kv, kn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	dv, err := c.in(n, 2)
	if err != nil {
		return err
	}
	if dv.konst == nil {
		return errors.New("the default value must be a constant")
	}
	var attrs []*canonical.Attribute
	in := kn
	switch {
	case keys.DataType == canonical.String:
		s, err := keys.Strings()
		if err != nil {
			return err
		}
		attrs = append(attrs, canonical.StringsAttr("keys_strings", strs(s)...))
	case isInt(keys.DataType):
		k, err := keys.Int64s()
		if err != nil {
			return err
		}
		attrs = append(attrs, ints64("keys_int64s", k))
		if kv.dt != canonical.Int64 {
			in = c.castTo(n.Name+"_keys", kn, canonical.Int64)
		}
	default:
		k, err := keys.Float32s()
		if err != nil {
			return err
		}
		attrs = append(attrs, canonical.FloatsAttr("keys_floats", k...))
		if kv.dt != canonical.Float {
			in = c.castTo(n.Name+"_keys", kn, canonical.Float)
		}
	}
	outDT := vals.DataType
	switch {
	case vals.DataType == canonical.String:
		s, err := vals.Strings()
		if err != nil {
			return err
		}
		d, err := dv.konst.Strings()
		if err != nil || len(d) != 1 {
			return errors.New("the default value must be one string")
		}
		attrs = append(attrs, canonical.StringsAttr("values_strings", strs(s)...), canonical.StringAttr("default_string", string(d[0])))
	case isInt(vals.DataType):
		v, err := vals.Int64s()
		if err != nil {
			return err
		}
		d, err := dv.konst.Int64s()
		if err != nil || len(d) != 1 {
			return errors.New("the default value must be one number")
		}
		attrs = append(attrs, ints64("values_int64s", v), canonical.IntAttr("default_int64", d[0]))
	default:
		v, err := vals.Float32s()
		if err != nil {
			return err
		}
		d, err := dv.konst.Float32s()
		if err != nil || len(d) != 1 {
			return errors.New("the default value must be one number")
		}
		attrs = append(attrs, canonical.FloatsAttr("values_floats", v...), canonical.FloatAttr("default_float", d[0]))
	}
	y := c.b.OpIn(canonical.MLDomain, "LabelEncoder", n.Name+"_encoded", []string{in}, attrs...)
	c.b.Import(canonical.MLDomain, 2)
	if isInt(outDT) && outDT != canonical.Int64 {
		y = c.castTo(n.Name, y, outDT)
	} else if outDT == canonical.Double {
		y = c.castTo(n.Name, y, outDT)
	}
	c.setNHWC(n, 0, y, kv.rank, outDT)
	return nil
}

func ints64(name string, v []int64) *canonical.Attribute { return canonical.IntsAttr(name, v...) }

func (c *converter) tableSize(n *Node) error {
	t, err := c.tableIn(n)
	if err != nil {
		return err
	}
	keys, _, err := c.tableContents(t)
	if err != nil {
		return err
	}
	cnt, err := keys.NumElements()
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.I64(n.Name, nil, []int64{cnt}), 0, canonical.Int64)
	return nil
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i, x := range b {
		out[i] = string(x)
	}
	return out
}
