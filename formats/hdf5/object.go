package hdf5

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is what an object is.
type Kind int

// Object kinds.
const (
	KindGroup Kind = iota
	KindDataset
	KindDatatype // a committed (named) datatype
)

func (k Kind) String() string {
	return [...]string{"group", "dataset", "datatype"}[k]
}

// Object is a group, dataset or named datatype of a file.
type Object struct {
	f    *File
	path string
	h    *header
}

// Link is a named member of a group.
type Link struct {
	Name string
	// Addr is the object header address of a hard link; Soft holds the
	// target of a soft link and External is set for an external link.
	Addr     uint64
	Soft     string
	External bool
}

// Root returns the root group.
func (f *File) Root() (*Object, error) {
	h, err := f.header(f.root)
	if err != nil {
		return nil, fmt.Errorf("root group: %w", err)
	}
	return &Object{f: f, path: "/", h: h}, nil
}

// Get returns the object at the slash-separated path from the root ("" or
// "/" is the root). Only hard links are followed.
func (f *File) Get(path string) (*Object, error) {
	o, err := f.Root()
	if err != nil {
		return nil, err
	}
	return o.Get(path)
}

// Path is the object's path from the root.
func (o *Object) Path() string { return o.path }

// File is the file holding the object.
func (o *Object) File() *File { return o.f }

// Kind says whether o is a group, a dataset or a named datatype.
func (o *Object) Kind() Kind {
	switch {
	case o.h.find(msgLayout) != nil:
		return KindDataset
	case o.h.find(msgDatatype) != nil && o.h.find(msgDataspace) == nil:
		return KindDatatype
	}
	return KindGroup
}

// Get follows path (relative to o, slash-separated) through hard links.
func (o *Object) Get(path string) (*Object, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > maxPathDepth {
		return nil, &FormatError{File: o.f.name, What: fmt.Sprintf("path %q deeper than %d", path, maxPathDepth)}
	}
	cur := o
	for _, p := range parts {
		if p == "" || p == "." {
			continue
		}
		next, err := cur.Child(p)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

func join(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// Child opens the member name of group o.
func (o *Object) Child(name string) (*Object, error) {
	links, err := o.Links()
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(links), func(i int) bool { return links[i].Name >= name })
	if i == len(links) || links[i].Name != name {
		return nil, &NotFoundError{File: o.f.name, Path: join(o.path, name)}
	}
	l := links[i]
	p := join(o.path, name)
	if l.Soft != "" || l.External {
		return nil, &UnsupportedError{File: o.f.name, What: fmt.Sprintf("%s is a soft or external link", p)}
	}
	h, err := o.f.header(l.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &Object{f: o.f, path: p, h: h}, nil
}

// Links lists the members of group o, sorted by name (empty for a
// dataset).
func (o *Object) Links() ([]Link, error) {
	f := o.f
	var links []Link
	if m := o.h.find(msgSymbolTable); m != nil {
		c := f.cursor(m.data, m.at)
		tree, heap := c.addr(), c.addr()
		if c.err != nil {
			return nil, c.err
		}
		names, err := f.localHeapData(heap)
		if err != nil {
			return nil, fmt.Errorf("%s: group name heap: %w", o.path, err)
		}
		err = f.btreeV1(tree, 0, 0, func(_ []byte, snod uint64) error {
			b, at, err := f.tail(snod)
			if err != nil {
				return err
			}
			c := f.cursor(b, at)
			c.sig("SNOD")
			c.skip(2)
			n := int(c.u16())
			if c.err != nil {
				return c.err
			}
			entry := 2*f.so + 24
			if n > c.left()/entry {
				return f.errf(at, "symbol table node claims %d entries, more than its bytes hold", n)
			}
			for i := 0; i < n; i++ {
				nameOff := c.length()
				addr := c.addr()
				c.skip(24)
				if c.err != nil {
					return c.err
				}
				name, err := f.cstring(names, nameOff, at)
				if err != nil {
					return err
				}
				links = append(links, Link{Name: name, Addr: addr})
				if len(links) > maxRecords {
					return f.errf(at, "group has more than %d members", maxRecords)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: group: %w", o.path, err)
		}
	}
	for _, m := range o.h.all(msgLink) {
		l, err := f.link(m.data, m.at)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.path, err)
		}
		links = append(links, l)
	}
	if m := o.h.find(msgLinkInfo); m != nil {
		heapAddr, tree, err := f.denseIndex(m, 8)
		if err != nil {
			return nil, err
		}
		if heapAddr != undef {
			h, err := f.fractalHeap(heapAddr)
			if err != nil {
				return nil, fmt.Errorf("%s: link heap: %w", o.path, err)
			}
			err = f.btreeV2(tree, func(rec []byte) error {
				if len(rec) < 4+h.idLen {
					return f.errf(h.at, "link name record of %d bytes, heap IDs of %d", len(rec), h.idLen)
				}
				obj, err := f.heapObject(h, rec[4:4+h.idLen])
				if err != nil {
					return err
				}
				l, err := f.link(obj, h.at)
				if err != nil {
					return err
				}
				links = append(links, l)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: dense links: %w", o.path, err)
			}
		}
	}
	sort.Slice(links, func(i, j int) bool { return links[i].Name < links[j].Name })
	for i := 1; i < len(links); i++ {
		if links[i].Name == links[i-1].Name {
			return nil, &FormatError{File: f.name, What: fmt.Sprintf("%s: two members named %q", o.path, links[i].Name)}
		}
	}
	return links, nil
}

// link parses a link message.
func (f *File) link(b []byte, at uint64) (Link, error) {
	c := f.cursor(b, at)
	if v := c.u8(); v != 1 && c.err == nil {
		return Link{}, f.errf(at, "link message version %d", v)
	}
	flags := c.u8()
	typ := uint8(0)
	if flags&0x08 != 0 {
		typ = c.u8()
	}
	if flags&0x04 != 0 {
		c.skip(8)
	}
	if flags&0x10 != 0 {
		c.skip(1)
	}
	n := c.uint(1 << (flags & 3))
	if c.err == nil && n > uint64(c.left()) {
		return Link{}, f.errf(at, "link name of %d bytes in a message of %d", n, len(b))
	}
	name := string(c.take(int(n)))
	l := Link{Name: name}
	switch typ {
	case 0:
		l.Addr = c.addr()
	case 1:
		ln := int(c.u16())
		l.Soft = string(c.take(ln))
		if l.Soft == "" {
			l.Soft = "."
		}
	case 64:
		l.External = true
	default:
		return Link{}, f.errf(at, "link %q of type %d", name, typ)
	}
	if c.err != nil {
		return Link{}, c.err
	}
	if name == "" || strings.Contains(name, "/") {
		return Link{}, f.errf(at, "link name %q", name)
	}
	return l, nil
}

// Walk visits o and every object below it through hard links, depth
// first in name order, each object once (a group reachable twice, or a
// cycle, is visited once). visit's error stops the walk.
func (o *Object) Walk(visit func(*Object) error) error {
	seen := map[uint64]bool{}
	var walk func(x *Object, depth int) error
	walk = func(x *Object, depth int) error {
		if depth > maxPathDepth {
			return &FormatError{File: o.f.name, What: fmt.Sprintf("%s: groups nested deeper than %d", x.path, maxPathDepth)}
		}
		if seen[x.h.addr] {
			return nil
		}
		seen[x.h.addr] = true
		if err := visit(x); err != nil {
			return err
		}
		if x.Kind() != KindGroup {
			return nil
		}
		links, err := x.Links()
		if err != nil {
			return err
		}
		for _, l := range links {
			if l.Soft != "" || l.External || seen[l.Addr] {
				continue
			}
			h, err := x.f.header(l.Addr)
			if err != nil {
				return fmt.Errorf("%s: %w", join(x.path, l.Name), err)
			}
			child := &Object{f: x.f, path: join(x.path, l.Name), h: h}
			if err := walk(child, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(o, 0)
}

// Attribute is a named value attached to an object.
type Attribute struct {
	Name string
	Value
}

// Attrs returns the attributes of o, sorted by name.
func (o *Object) Attrs() ([]*Attribute, error) {
	f := o.f
	var out []*Attribute
	for _, m := range o.h.all(msgAttribute) {
		a, err := o.attribute(m.data, m.at, m.flags)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if m := o.h.find(msgAttrInfo); m != nil {
		heapAddr, tree, err := f.denseIndex(m, 2)
		if err != nil {
			return nil, err
		}
		if heapAddr != undef {
			h, err := f.fractalHeap(heapAddr)
			if err != nil {
				return nil, fmt.Errorf("%s: attribute heap: %w", o.path, err)
			}
			err = f.btreeV2(tree, func(rec []byte) error {
				if len(rec) < 8 {
					return f.errf(h.at, "attribute name record of %d bytes", len(rec))
				}
				obj, err := f.heapObject(h, rec[:8])
				if err != nil {
					return err
				}
				var mflags uint8
				if len(rec) > 8 {
					mflags = rec[8]
				}
				a, err := o.attribute(obj, h.at, mflags)
				if err != nil {
					return err
				}
				out = append(out, a)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: dense attributes: %w", o.path, err)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Attr returns the attribute name of o.
func (o *Object) Attr(name string) (*Attribute, error) {
	attrs, err := o.Attrs()
	if err != nil {
		return nil, err
	}
	for _, a := range attrs {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, &NotFoundError{File: o.f.name, Path: o.path + "@" + name}
}

// attribute parses an attribute message.
func (o *Object) attribute(b []byte, at uint64, msgFlags uint8) (*Attribute, error) {
	f := o.f
	c := f.cursor(b, at)
	version := c.u8()
	flags := c.u8()
	nameLen := int(c.u16())
	typeLen := int(c.u16())
	spaceLen := int(c.u16())
	pad := func(n int) int { return n }
	switch version {
	case 1:
		pad = func(n int) int { return (n + 7) &^ 7 }
	case 2:
	case 3:
		c.skip(1) // name encoding
	default:
		if c.err == nil {
			return nil, f.unsupported("%s: attribute message version %d", o.path, version)
		}
	}
	if flags&3 != 0 || msgFlags&2 != 0 {
		return nil, f.unsupported("%s: attribute with a shared datatype or dataspace", o.path)
	}
	name := c.take(pad(nameLen))
	tb := c.take(pad(typeLen))
	tat := at + uint64(c.pos-len(tb))
	sb := c.take(pad(spaceLen))
	sat := at + uint64(c.pos-len(sb))
	if c.err != nil {
		return nil, fmt.Errorf("%s: attribute: %w", o.path, c.err)
	}
	if i := indexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	a := &Attribute{Name: string(name)}
	p := o.path + "@" + a.Name
	t, _, err := f.datatype(tb, tat, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	dims, null, err := f.dataspace(&message{data: sb, at: sat})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if null {
		dims = []uint64{0}
	}
	v, size, err := f.value(p, t, dims)
	if err != nil {
		return nil, err
	}
	if size > uint64(c.left()) {
		return nil, f.errf(at, "%s: %d bytes of data, the message holds %d", p, size, c.left())
	}
	v.raw = c.take(int(size))
	a.Value = *v
	return a, nil
}

// value makes a Value of type t and shape dims without data, and returns
// the size of its data, checked against the limit.
func (f *File) value(path string, t *Datatype, dims []uint64) (*Value, uint64, error) {
	n, ok := count(dims, f.maxBytes)
	total := n * uint64(t.Size)
	if !ok || (n != 0 && total/n != uint64(t.Size)) {
		total = undef
	}
	if total > f.maxBytes {
		return nil, 0, &LimitError{File: f.name, Path: path, Bytes: total, Limit: f.maxBytes}
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		shape[i] = int(d)
	}
	if len(dims) == 0 {
		shape = nil
	}
	return &Value{Type: t, Shape: shape, f: f, path: path}, total, nil
}

// denseIndex reads the fractal heap and v2 B-tree addresses of a Link Info
// or Attribute Info message: version, flags, a counter of counter bytes
// when flags bit 0 is set, then the two addresses.
func (f *File) denseIndex(m *message, counter int) (heapAddr, tree uint64, err error) {
	c := f.cursor(m.data, m.at)
	c.u8()
	if c.u8()&1 != 0 {
		c.skip(counter)
	}
	heapAddr, tree = c.addr(), c.addr()
	return heapAddr, tree, c.err
}
