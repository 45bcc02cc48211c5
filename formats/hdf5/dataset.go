package hdf5

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// Dataset describes a dataset: its element type and shape.
type Dataset struct {
	o     *Object
	Type  *Datatype
	Shape []int
	dims  []uint64
}

// Dataset returns o as a dataset.
func (o *Object) Dataset() (*Dataset, error) {
	f := o.f
	tm, sm := o.h.find(msgDatatype), o.h.find(msgDataspace)
	if o.h.find(msgLayout) == nil || tm == nil || sm == nil {
		return nil, &FormatError{File: f.name, What: fmt.Sprintf("%s is a %s, not a dataset", o.path, o.Kind())}
	}
	if tm.flags&2 != 0 {
		return nil, f.unsupported("%s: committed (shared) datatype", o.path)
	}
	t, _, err := f.datatype(tm.data, tm.at, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	dims, null, err := f.dataspace(sm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	if null {
		dims = []uint64{0}
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		if d > 1<<40 {
			return nil, &LimitError{File: f.name, Path: o.path, Bytes: d, Limit: f.maxBytes}
		}
		shape[i] = int(d)
	}
	if len(dims) == 0 {
		shape = nil
	}
	return &Dataset{o: o, Type: t, Shape: shape, dims: dims}, nil
}

// filter is one stage of a filter pipeline.
type filter struct {
	id     uint16
	name   string
	params []uint32
}

func (f *File) filters(m *message) ([]filter, error) {
	c := f.cursor(m.data, m.at)
	version := c.u8()
	n := int(c.u8())
	if version == 1 {
		c.skip(6)
	} else if version != 2 && c.err == nil {
		return nil, f.unsupported("filter pipeline version %d", version)
	}
	var out []filter
	for i := 0; i < n && c.err == nil; i++ {
		var fl filter
		fl.id = c.u16()
		nameLen := 0
		if version == 1 || fl.id >= 256 {
			nameLen = int(c.u16())
		}
		c.u16() // flags
		nv := int(c.u16())
		if version == 1 {
			nameLen = (nameLen + 7) &^ 7
		}
		name := c.take(nameLen)
		if i := indexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		fl.name = string(name)
		if nv > c.left()/4 {
			c.fail("filter with %d parameters", nv)
		}
		for k := 0; k < nv && c.err == nil; k++ {
			fl.params = append(fl.params, c.u32())
		}
		if version == 1 && nv%2 == 1 {
			c.skip(4)
		}
		out = append(out, fl)
	}
	if c.err != nil {
		return nil, c.err
	}
	return out, nil
}

// Read reads the whole dataset.
func (d *Dataset) Read() (*Value, error) {
	o, f := d.o, d.o.f
	v, size, err := f.value(o.path, d.Type, d.dims)
	if err != nil {
		return nil, err
	}
	if err := f.charge(o.path, size); err != nil {
		return nil, err
	}
	lm := o.h.find(msgLayout)
	c := f.cursor(lm.data, lm.at)
	version := c.u8()
	var fls []filter
	if m := o.h.find(msgFilters); m != nil {
		if fls, err = f.filters(m); err != nil {
			return nil, fmt.Errorf("%s: %w", o.path, err)
		}
	}
	fail := func(err error) (*Value, error) { return nil, fmt.Errorf("%s: %w", o.path, err) }
	if version < 3 {
		if version < 1 && c.err == nil {
			return fail(f.unsupported("data layout version %d", version))
		}
		nd := int(c.u8())
		class := c.u8()
		c.skip(5)
		if c.err != nil {
			return fail(c.err)
		}
		switch class {
		case 1:
			addr := c.addr()
			if c.err != nil {
				return fail(c.err)
			}
			return d.contiguous(v, addr, size)
		case 0:
			c.skip(4 * nd)
			n := uint64(c.u32())
			b := c.take(int(min(n, uint64(c.left()))))
			if c.err != nil {
				return fail(c.err)
			}
			return d.compact(v, b, size)
		}
		return fail(f.unsupported("chunked data layout version %d", version))
	}
	class := c.u8()
	switch {
	case class == 0: // compact
		n := int(c.u16())
		b := c.take(n)
		if c.err != nil {
			return fail(c.err)
		}
		return d.compact(v, b, size)
	case class == 1:
		addr := c.addr()
		c.length()
		if c.err != nil {
			return fail(c.err)
		}
		return d.contiguous(v, addr, size)
	case class == 2 && version == 3:
		nd := int(c.u8())
		addr := c.addr()
		if c.err == nil && (nd < 1 || nd > maxRank+1) {
			return fail(f.errf(lm.at, "chunk dimensionality %d", nd))
		}
		cdims := make([]uint64, nd)
		for i := range cdims {
			cdims[i] = uint64(c.u32())
		}
		if c.err != nil {
			return fail(c.err)
		}
		return d.chunked(v, size, cdims, fls, func(visit func(off []uint64, addr, n uint64, mask uint32) error) error {
			if addr == undef {
				return nil
			}
			return f.btreeV1(addr, 1, nd, func(key []byte, child uint64) error {
				kc := f.cursor(key, 0)
				n := uint64(kc.u32())
				mask := kc.u32()
				off := make([]uint64, nd)
				for i := range off {
					off[i] = kc.uint(8)
				}
				return visit(off, child, n, mask)
			})
		})
	case class == 2 && version == 4:
		flags := c.u8()
		nd := int(c.u8())
		encLen := int(c.u8())
		if c.err == nil && (nd < 1 || nd > maxRank+1 || encLen < 1 || encLen > 8) {
			return fail(f.errf(lm.at, "chunk dimensionality %d, dimension size %d", nd, encLen))
		}
		cdims := make([]uint64, nd)
		for i := range cdims {
			cdims[i] = c.uint(encLen)
		}
		index := c.u8()
		switch index {
		case 1: // single chunk
			n, mask := uint64(0), uint32(0)
			filtered := flags&2 != 0
			if filtered {
				n = c.length()
				mask = c.u32()
			}
			addr := c.addr()
			if c.err != nil {
				return fail(c.err)
			}
			return d.chunked(v, size, cdims, fls, func(visit func([]uint64, uint64, uint64, uint32) error) error {
				if addr == undef {
					return nil
				}
				if !filtered {
					n = chunkBytes(cdims)
				}
				return visit(make([]uint64, nd), addr, n, mask)
			})
		case 2: // implicit: chunks stored in order, unfiltered
			addr := c.addr()
			if c.err != nil {
				return fail(c.err)
			}
			return d.chunked(v, size, cdims, nil, func(visit func([]uint64, uint64, uint64, uint32) error) error {
				if addr == undef {
					return nil
				}
				return implicitChunks(d.dims, cdims, addr, visit)
			})
		case 3: // fixed array
			c.u8() // page bits
			addr := c.addr()
			if c.err != nil {
				return fail(c.err)
			}
			return d.chunked(v, size, cdims, fls, func(visit func([]uint64, uint64, uint64, uint32) error) error {
				if addr == undef {
					return nil
				}
				return f.fixedArray(addr, d.dims, cdims, flags&2 != 0 || len(fls) > 0, visit)
			})
		}
		return fail(f.unsupported("chunk index type %d (use h5repack or save with libver='earliest')", index))
	}
	if c.err != nil {
		return fail(c.err)
	}
	return fail(f.unsupported("data layout version %d class %d", version, class))
}

func chunkBytes(cdims []uint64) uint64 {
	n := uint64(1)
	for _, x := range cdims {
		n *= x
	}
	return n
}

func implicitChunks(dims, cdims []uint64, addr uint64, visit func([]uint64, uint64, uint64, uint32) error) error {
	r := len(dims)
	cb := chunkBytes(cdims)
	idx := make([]uint64, r)
	for k := 0; ; k++ {
		if k > maxChunks {
			return errors.New("too many chunks")
		}
		off := make([]uint64, r+1)
		for i := range idx {
			off[i] = idx[i] * cdims[i]
		}
		if err := visit(off, addr+uint64(k)*cb, cb, 0); err != nil {
			return err
		}
		i := r - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i]*cdims[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

func (d *Dataset) compact(v *Value, b []byte, size uint64) (*Value, error) {
	if uint64(len(b)) < size {
		return nil, d.o.f.errf(0, "%s: compact data of %d bytes, the dataset needs %d", d.o.path, len(b), size)
	}
	v.raw = b[:size]
	return v, nil
}

func (d *Dataset) contiguous(v *Value, addr, size uint64) (*Value, error) {
	if addr == undef {
		v.raw = make([]byte, size) // never written: the fill value, zeros
		return v, nil
	}
	b, err := d.o.f.bytesAt(addr, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.o.path, err)
	}
	v.raw = b
	return v, nil
}

// chunked assembles a chunked dataset from the chunks each yields.
func (d *Dataset) chunked(v *Value, size uint64, cdims []uint64, fls []filter,
	each func(visit func(off []uint64, addr, n uint64, mask uint32) error) error) (*Value, error) {
	f := d.o.f
	r := len(d.dims)
	es := uint64(d.Type.Size)
	if len(cdims) != r+1 || cdims[r] != es {
		return nil, f.errf(0, "%s: chunk dimensions %v for a dataset of shape %v and %d-byte elements", d.o.path, cdims, d.dims, es)
	}
	for _, x := range cdims[:r] {
		if x == 0 {
			return nil, f.errf(0, "%s: chunk dimension 0", d.o.path)
		}
	}
	cn, ok := count(cdims, f.maxBytes)
	if !ok || cn > f.maxBytes {
		return nil, &LimitError{File: f.name, Path: d.o.path, Bytes: cn, Limit: f.maxBytes}
	}
	out := make([]byte, size)
	nchunks := 0
	err := each(func(off []uint64, addr, n uint64, mask uint32) error {
		nchunks++
		if nchunks > maxChunks {
			return f.errf(0, "more than %d chunks", maxChunks)
		}
		for i := 0; i < r; i++ {
			if off[i] >= d.dims[i] || off[i]%cdims[i] != 0 {
				return f.errf(addr, "chunk at %v outside the dataset of shape %v", off[:r], d.dims)
			}
		}
		raw, err := f.bytesAt(addr, n)
		if err != nil {
			return err
		}
		for i := len(fls) - 1; i >= 0; i-- {
			if mask&(1<<uint(i)) != 0 {
				continue
			}
			if raw, err = f.unfilter(fls[i], raw, cn); err != nil {
				return err
			}
		}
		if uint64(len(raw)) < cn {
			return f.errf(addr, "chunk decodes to %d bytes, want %d", len(raw), cn)
		}
		copyChunk(out, raw, d.dims, cdims[:r], off[:r], es)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.o.path, err)
	}
	v.raw = out
	return v, nil
}

// copyChunk copies the part of chunk (shape cdims at off) inside the
// dataset (shape dims) into out.
func copyChunk(out, chunk []byte, dims, cdims, off []uint64, es uint64) {
	r := len(dims)
	if r == 0 {
		copy(out, chunk[:es])
		return
	}
	// Elements of the last dimension copied per run.
	run := min(cdims[r-1], dims[r-1]-off[r-1]) * es
	idx := make([]uint64, r-1)
	for {
		// Positions of this row in the chunk and the dataset.
		var ci, di uint64
		inside := true
		for i := 0; i < r-1; i++ {
			if off[i]+idx[i] >= dims[i] {
				inside = false
			}
			ci = ci*cdims[i] + idx[i]
			di = di*dims[i] + off[i] + idx[i]
		}
		if inside {
			ci = ci * cdims[r-1] * es
			di = (di*dims[r-1] + off[r-1]) * es
			copy(out[di:di+run], chunk[ci:ci+run])
		}
		i := r - 2
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < cdims[i] && off[i]+idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// unfilter undoes one filter; want bounds the decoded size.
func (f *File) unfilter(fl filter, b []byte, want uint64) ([]byte, error) {
	switch fl.id {
	case 1: // deflate
		zr, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, f.errf(0, "deflate: %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, int64(want)+1))
		if err != nil {
			return nil, f.errf(0, "deflate: %v", err)
		}
		if uint64(len(out)) > want {
			return nil, f.errf(0, "deflate: a chunk decodes to more than its %d bytes", want)
		}
		return out, nil
	case 2: // shuffle
		es := 1
		if len(fl.params) > 0 {
			es = int(fl.params[0])
		}
		n := 0
		if es > 0 {
			n = len(b) / es
		}
		// As H5Z's shuffle: with one element or none, or bytes of one
		// byte, the chunk is as stored (the loops below would otherwise
		// run es times for a parameter up to 2³²).
		if es <= 1 || n <= 1 {
			return b, nil
		}
		out := make([]byte, len(b))
		for j := 0; j < es; j++ {
			for i := 0; i < n; i++ {
				out[i*es+j] = b[j*n+i]
			}
		}
		copy(out[n*es:], b[n*es:])
		return out, nil
	case 3: // fletcher32: the checksum is the last 4 bytes
		if len(b) < 4 {
			return nil, f.errf(0, "fletcher32 chunk of %d bytes", len(b))
		}
		return b[:len(b)-4], nil
	}
	name := fl.name
	if name == "" {
		name = map[uint16]string{4: "szip", 5: "nbit", 6: "scaleoffset", 32001: "blosc", 32004: "lz4", 32015: "zstd"}[fl.id]
	}
	return nil, f.unsupported("filter %d (%s)", fl.id, name)
}

// fixedArray visits the chunks of a fixed array chunk index.
func (f *File) fixedArray(addr uint64, dims, cdims []uint64, filtered bool, visit func([]uint64, uint64, uint64, uint32) error) error {
	b, at, err := f.tail(addr)
	if err != nil {
		return err
	}
	c := f.cursor(b, at)
	c.sig("FAHD")
	c.u8()
	client := c.u8()
	entry := int(c.u8())
	pageBits := int(c.u8())
	n := c.length()
	dblock := c.addr()
	if c.err != nil {
		return c.err
	}
	if (client == 1) != filtered || entry < f.so || entry > f.so+8+4 || pageBits > 32 || n > maxChunks {
		return f.errf(at, "fixed array index with client %d, entries of %d bytes, %d entries", client, entry, n)
	}
	r := len(dims)
	// Chunks per dimension, row-major.
	grid := make([]uint64, r)
	total := uint64(1)
	for i := 0; i < r; i++ {
		grid[i] = (dims[i] + cdims[i] - 1) / cdims[i]
		total *= grid[i]
	}
	if total > n {
		return f.errf(at, "fixed array of %d entries for %d chunks", n, total)
	}
	db, dat, err := f.tail(dblock)
	if err != nil {
		return err
	}
	dc := f.cursor(db, dat)
	dc.sig("FADB")
	dc.skip(2)
	dc.addr()
	pageSize := uint64(1) << pageBits
	paged := n > pageSize
	if paged {
		npages := (n + pageSize - 1) / pageSize
		dc.skip(int((npages+7)/8) + 4)
	}
	cb := chunkBytes(cdims)
	for k := uint64(0); k < total; k++ {
		if paged && k > 0 && k%pageSize == 0 {
			dc.skip(4) // the previous page's checksum
		}
		a := dc.addr()
		size, mask := cb, uint32(0)
		if filtered {
			size = dc.uint(entry - f.so - 4)
			mask = dc.u32()
		}
		if dc.err != nil {
			return dc.err
		}
		if a == undef {
			continue
		}
		off := make([]uint64, r+1)
		rem := k
		for i := r - 1; i >= 0; i-- {
			off[i] = (rem % grid[i]) * cdims[i]
			rem /= grid[i]
		}
		if err := visit(off, a, size, mask); err != nil {
			return err
		}
	}
	return nil
}
