package tflite

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND and HASHTABLE_SIZE: TFLite's
// static hash tables. HASHTABLE names a table by its table_id (the
// interpreter keeps one table per id across subgraphs); HASHTABLE_IMPORT
// fills it once, usually in the initialization subgraph CALL_ONCE runs,
// keeping the first value of a repeated key; HASHTABLE_FIND looks keys up,
// the first element of its default value where a key is absent;
// HASHTABLE_SIZE counts the keys. The interpreter takes int64 keys with
// string values and string keys with int64 values. The importer reads the
// imported keys and values at conversion time, so they must be constants:
// FIND becomes an ai.onnx.ml LabelEncoder holding them, SIZE a constant.

// maxTableEntries bounds the keys a table may hold.
const maxTableEntries = 1 << 20

// hashTable is one table: its types and, once imported, its entries.
type hashTable struct {
	id               int32
	keyType, valType fb.TensorType
	imported         bool
	intKeys          []int64
	strKeys          []string
	intVals          []int64
	strVals          []string
}

// tableKey is the handle key of table id (c.handles).
func tableKey(id int32) string { return "hashtable/" + strconv.Itoa(int(id)) }

func (c *converter) hashtable(o *operator) error {
	if len(o.outputs) != 1 {
		return fmt.Errorf("%d outputs, want 1", len(o.outputs))
	}
	opt, err := options[fb.HashtableOptions](o, fb.BuiltinOptionsHashtableOptions)
	if err != nil {
		return err
	}
	k, v := opt.KeyDtype(), opt.ValueDtype()
	if !(k == fb.TensorTypeINT64 && v == fb.TensorTypeSTRING) && !(k == fb.TensorTypeSTRING && v == fb.TensorTypeINT64) {
		return fmt.Errorf("table %d maps %s to %s: TFLite's tables map INT64 to STRING or STRING to INT64", opt.TableId(), k, v)
	}
	id := opt.TableId()
	if t, ok := c.st.tables[id]; ok {
		if t.keyType != k || t.valType != v {
			return fmt.Errorf("table %d is created as %s to %s and earlier as %s to %s", id, k, v, t.keyType, t.valType)
		}
	} else {
		c.st.tables[id] = &hashTable{id: id, keyType: k, valType: v}
	}
	c.handles[int(o.outputs[0])] = tableKey(id)
	return nil
}

// table returns the table whose handle tensor idx holds.
func (c *converter) table(idx int32) (*hashTable, error) {
	if idx < 0 {
		return nil, fmt.Errorf("the table handle input is omitted")
	}
	key, ok := c.handles[int(idx)]
	if ok {
		for id, t := range c.st.tables {
			if tableKey(id) == key {
				return t, nil
			}
		}
	}
	return nil, fmt.Errorf("resource %q does not come from a HASHTABLE of this subgraph", c.tensor(idx).name)
}

func (c *converter) hashtableImport(o *operator) error {
	if len(o.inputs) != 3 {
		return fmt.Errorf("%d inputs, want 3 (table, keys, values)", len(o.inputs))
	}
	if c.inBody {
		return fmt.Errorf("importing into a hash table inside an IF branch or WHILE body is not supported")
	}
	t, err := c.table(o.inputs[0])
	if err != nil {
		return err
	}
	if t.imported {
		return nil // the interpreter ignores every import after the first
	}
	if o.inputs[1] < 0 || o.inputs[2] < 0 {
		return fmt.Errorf("keys or values input is omitted")
	}
	keys, vals := c.tensor(o.inputs[1]), c.tensor(o.inputs[2])
	if keys.data == nil || vals.data == nil {
		return fmt.Errorf("table %d: keys %q and values %q must be constants (the importer writes the table's contents into the ONNX model)", t.id, keys.name, vals.name)
	}
	if keys.typ != t.keyType || vals.typ != t.valType {
		return fmt.Errorf("table %d maps %s to %s: keys %q are %s, values %q %s", t.id, t.keyType, t.valType, keys.name, keys.typ, vals.name, vals.typ)
	}
	var ik, iv []int64
	var sk, sv []string
	if t.keyType == fb.TensorTypeINT64 {
		if ik, err = c.constInts(o.inputs[1]); err != nil {
			return err
		}
		if sv, err = tfliteStrings(vals.data); err != nil {
			return fmt.Errorf("values %q: %w", vals.name, err)
		}
	} else {
		if sk, err = tfliteStrings(keys.data); err != nil {
			return fmt.Errorf("keys %q: %w", keys.name, err)
		}
		if iv, err = c.constInts(o.inputs[2]); err != nil {
			return err
		}
	}
	n := max(len(ik), len(sk))
	if n != max(len(iv), len(sv)) {
		return fmt.Errorf("table %d: %d keys and %d values", t.id, n, max(len(iv), len(sv)))
	}
	if n > maxTableEntries {
		return fmt.Errorf("table %d: %d keys, more than %d", t.id, n, maxTableEntries)
	}
	// The first value of a repeated key wins (std::unordered_map::insert).
	seenI, seenS := map[int64]bool{}, map[string]bool{}
	for i := 0; i < n; i++ {
		if ik != nil {
			if seenI[ik[i]] {
				continue
			}
			seenI[ik[i]] = true
			t.intKeys, t.strVals = append(t.intKeys, ik[i]), append(t.strVals, sv[i])
			continue
		}
		if seenS[sk[i]] {
			continue
		}
		seenS[sk[i]] = true
		t.strKeys, t.intVals = append(t.strKeys, sk[i]), append(t.intVals, iv[i])
	}
	t.imported = true
	return nil
}

func (c *converter) hashtableFind(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	t, err := c.table(o.inputs[0])
	if err != nil {
		return err
	}
	if !t.imported {
		return fmt.Errorf("table %d is looked up before any HASHTABLE_IMPORT fills it", t.id)
	}
	keys, def := c.tensor(o.inputs[1]), c.tensor(o.inputs[2])
	if keys.typ != t.keyType || def.typ != t.valType {
		return fmt.Errorf("table %d maps %s to %s: keys %q are %s, default %q %s", t.id, t.keyType, t.valType, keys.name, keys.typ, def.name, def.typ)
	}
	if def.data == nil {
		return fmt.Errorf("default value %q must be a constant", def.name)
	}
	attrs := []*canonical.Attribute{}
	if t.keyType == fb.TensorTypeINT64 {
		d, err := tfliteStrings(def.data)
		if err != nil || len(d) == 0 {
			return fmt.Errorf("default value %q: no string (%v)", def.name, err)
		}
		attrs = append(attrs, canonical.IntsAttr("keys_int64s", t.intKeys...), canonical.StringsAttr("values_strings", t.strVals...), canonical.StringAttr("default_string", d[0]))
	} else {
		d, err := c.constInts(o.inputs[2])
		if err != nil || len(d) == 0 {
			return fmt.Errorf("default value %q: no integer (%v)", def.name, err)
		}
		attrs = append(attrs, canonical.StringsAttr("keys_strings", t.strKeys...), canonical.IntsAttr("values_int64s", t.intVals...), canonical.IntAttr("default_int64", d[0]))
	}
	if len(t.intKeys)+len(t.strKeys) == 0 {
		return fmt.Errorf("table %d is empty (an ONNX LabelEncoder needs at least one key)", t.id)
	}
	x, err := c.rawValue(int(o.inputs[1]), native)
	if err != nil {
		return err
	}
	c.b.Import(canonical.MLDomain, 2)
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.b.NodeIn(canonical.MLDomain, "LabelEncoder", y, []string{x}, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) hashtableSize(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	t, err := c.table(o.inputs[0])
	if err != nil {
		return err
	}
	if !t.imported {
		return fmt.Errorf("table %d is sized before any HASHTABLE_IMPORT fills it", t.id)
	}
	if out := c.tensor(o.outputs[0]); out.typ != fb.TensorTypeINT64 {
		return fmt.Errorf("output %q is %s, want INT64", out.name, out.typ)
	}
	n := int64(len(t.intKeys) + len(t.strKeys))
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Identity", []string{c.constI64Dims(c.unique(y+"_size"), []int64{1}, []int64{n})}, []string{y})
		return nil
	})
}

// tfliteStrings decodes a TFLite string tensor's buffer: the count N, N+1
// offsets from the buffer's start, then the bytes.
func tfliteStrings(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("string buffer of %d bytes", len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b)))
	if n < 0 || 4+4*(n+1) > int64(len(b)) {
		return nil, fmt.Errorf("string buffer of %d bytes cannot hold %d strings", len(b), n)
	}
	out := make([]string, n)
	for i := int64(0); i < n; i++ {
		lo := int64(int32(binary.LittleEndian.Uint32(b[4+4*i:])))
		hi := int64(int32(binary.LittleEndian.Uint32(b[8+4*i:])))
		if lo < 4+4*(n+1) || hi < lo || hi > int64(len(b)) {
			return nil, fmt.Errorf("string %d spans bytes [%d, %d) of %d", i, lo, hi, len(b))
		}
		out[i] = string(b[lo:hi])
	}
	return out, nil
}
