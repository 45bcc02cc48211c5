package hdf5

import "math/bits"

// localHeapData returns the data segment of the local heap at addr.
func (f *File) localHeapData(addr uint64) ([]byte, error) {
	b, at, err := f.tail(addr)
	if err != nil {
		return nil, err
	}
	c := f.cursor(b, at)
	c.sig("HEAP")
	c.skip(4)
	size := c.length()
	c.length() // free list
	data := c.addr()
	if c.err != nil {
		return nil, c.err
	}
	return f.bytesAt(data, size)
}

// cstring reads a NUL-terminated string at off in b.
func (f *File) cstring(b []byte, off uint64, at uint64) (string, error) {
	if off >= uint64(len(b)) {
		return "", f.errf(at, "name offset %d outside its heap of %d bytes", off, len(b))
	}
	s := b[off:]
	if i := indexByte(s, 0); i >= 0 {
		return string(s[:i]), nil
	}
	return "", f.errf(at, "name at heap offset %d not terminated", off)
}

// btreeV1 visits the children of the leaves of the v1 B-tree at addr
// (type 0: group nodes; type 1: raw data chunks with ndims key offsets),
// calling visit with each key and child address.
func (f *File) btreeV1(addr uint64, wantType uint8, ndims int, visit func(key []byte, child uint64) error) error {
	keySize := f.sl
	if wantType == 1 {
		keySize = 8 + 8*ndims
	}
	seen := map[uint64]bool{}
	visited := 0
	var walk func(addr uint64, depth int, level int) error
	walk = func(addr uint64, depth int, wantLevel int) error {
		if depth > maxTreeDepth {
			return f.errf(addr, "v1 B-tree deeper than %d", maxTreeDepth)
		}
		if seen[addr] {
			return f.errf(addr+f.base, "v1 B-tree node at %d visited twice (a cycle)", addr)
		}
		seen[addr] = true
		b, at, err := f.tail(addr)
		if err != nil {
			return err
		}
		c := f.cursor(b, at)
		c.sig("TREE")
		typ := c.u8()
		level := int(c.u8())
		n := int(c.u16())
		c.addr()
		c.addr()
		if c.err != nil {
			return c.err
		}
		if typ != wantType {
			return f.errf(at, "v1 B-tree node of type %d, want %d", typ, wantType)
		}
		if wantLevel >= 0 && level != wantLevel {
			return f.errf(at, "v1 B-tree node at level %d, want %d", level, wantLevel)
		}
		if n > c.left()/(keySize+f.so) {
			return f.errf(at, "v1 B-tree node claims %d entries, more than its bytes hold", n)
		}
		for i := 0; i < n; i++ {
			key := c.take(keySize)
			child := c.addr()
			if c.err != nil {
				return c.err
			}
			visited++
			if visited > maxRecords {
				return f.errf(at, "v1 B-tree has more than %d entries", maxRecords)
			}
			if level > 0 {
				if err := walk(child, depth+1, level-1); err != nil {
					return err
				}
			} else if err := visit(key, child); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(addr, 0, -1)
}

// btreeV2 visits every record of the v2 B-tree at addr.
func (f *File) btreeV2(addr uint64, visit func(rec []byte) error) error {
	b, at, err := f.tail(addr)
	if err != nil {
		return err
	}
	c := f.cursor(b, at)
	c.sig("BTHD")
	c.u8()
	c.u8() // type
	nodeSize := uint64(c.u32())
	recSize := int(c.u16())
	depth := int(c.u16())
	c.skip(2)
	root := c.addr()
	rootN := int(c.u16())
	c.length()
	if c.err != nil {
		return c.err
	}
	if recSize == 0 || nodeSize < 10 || nodeSize > 1<<24 || depth > maxTreeDepth {
		return f.errf(at, "v2 B-tree with record size %d, node size %d, depth %d", recSize, nodeSize, depth)
	}
	if root == undef {
		return nil
	}
	// Sizes of the record counts in internal nodes (H5B2__hdr_init).
	maxLeaf := (nodeSize - 10) / uint64(recSize)
	maxNrecSize := encSize(maxLeaf)
	cum := []uint64{maxLeaf}
	cumSize := []int{0}
	for d := 1; d <= depth; d++ {
		per := uint64(recSize) + uint64(f.so) + uint64(maxNrecSize) + uint64(cumSize[d-1])
		mx := (nodeSize - 10) / per
		cm := (mx+1)*cum[d-1] + mx
		if mx == 0 || cm/(mx+1) < cum[d-1] {
			return f.errf(at, "v2 B-tree of depth %d with nodes of %d bytes", depth, nodeSize)
		}
		cum = append(cum, cm)
		cumSize = append(cumSize, encSize(cm))
	}
	seen := map[uint64]bool{}
	visited := 0
	var walk func(addr uint64, n int, d int) error
	walk = func(addr uint64, n int, d int) error {
		if seen[addr] {
			return f.errf(addr+f.base, "v2 B-tree node at %d visited twice (a cycle)", addr)
		}
		seen[addr] = true
		nb, nat, err := f.tail(addr)
		if err != nil {
			return err
		}
		if uint64(len(nb)) > nodeSize {
			nb = nb[:nodeSize]
		}
		c := f.cursor(nb, nat)
		if d == 0 {
			c.sig("BTLF")
		} else {
			c.sig("BTIN")
		}
		c.skip(2)
		if c.err != nil {
			return c.err
		}
		if n > c.left()/recSize {
			return f.errf(nat, "v2 B-tree node claims %d records, more than its %d bytes hold", n, nodeSize)
		}
		recs := make([][]byte, n)
		for i := range recs {
			recs[i] = c.take(recSize)
		}
		if d == 0 {
			for _, r := range recs {
				visited++
				if visited > maxRecords {
					return f.errf(nat, "v2 B-tree has more than %d records", maxRecords)
				}
				if err := visit(r); err != nil {
					return err
				}
			}
			return nil
		}
		for i := 0; i <= n; i++ {
			child := c.addr()
			cn := int(c.uint(maxNrecSize))
			if d > 1 {
				c.uint(cumSize[d-1])
			}
			if c.err != nil {
				return c.err
			}
			if err := walk(child, cn, d-1); err != nil {
				return err
			}
			if i < n {
				visited++
				if visited > maxRecords {
					return f.errf(nat, "v2 B-tree has more than %d records", maxRecords)
				}
				if err := visit(recs[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, rootN, depth)
}

// encSize is the bytes needed to encode n (H5VM_limit_enc_size).
func encSize(n uint64) int { return (bits.Len64(n)-1)/8 + 1 }

// fheap is a fractal heap header.
type fheap struct {
	at                   uint64
	idLen                int
	filterLen            int
	maxMan               uint64
	width                int
	startSize, maxDirect uint64
	maxHeapBits          int
	root                 uint64
	rootRows             int
	checksumDirect       bool
	offBytes, lenBytes   int
	blocks               []dblock // direct blocks, listed on first use
	listed               bool
}

// dblock is a direct block of a fractal heap.
type dblock struct{ addr, off, size uint64 }

func (f *File) fractalHeap(addr uint64) (*fheap, error) {
	b, at, err := f.tail(addr)
	if err != nil {
		return nil, err
	}
	c := f.cursor(b, at)
	c.sig("FRHP")
	c.u8()
	h := &fheap{at: at}
	h.idLen = int(c.u16())
	h.filterLen = int(c.u16())
	flags := c.u8()
	h.checksumDirect = flags&2 != 0
	h.maxMan = uint64(c.u32())
	c.length() // next huge id
	c.addr()   // huge btree
	c.length() // free space
	c.addr()   // free space manager
	c.length() // managed space
	c.length() // allocated
	c.length() // iterator
	c.length() // managed objects
	c.length() // huge size
	c.length() // huge count
	c.length() // tiny size
	c.length() // tiny count
	h.width = int(c.u16())
	h.startSize = c.length()
	h.maxDirect = c.length()
	h.maxHeapBits = int(c.u16())
	c.u16() // starting rows
	h.root = c.addr()
	h.rootRows = int(c.u16())
	if c.err != nil {
		return nil, c.err
	}
	if h.filterLen != 0 {
		return nil, f.unsupported("filtered fractal heap")
	}
	if h.width == 0 || h.width > 1<<16 || h.startSize == 0 || h.startSize&(h.startSize-1) != 0 ||
		h.maxDirect < h.startSize || h.maxDirect&(h.maxDirect-1) != 0 || h.maxHeapBits == 0 || h.maxHeapBits > 64 || h.rootRows > 64 {
		return nil, f.errf(at, "fractal heap with table width %d, block sizes %d..%d, %d bits", h.width, h.startSize, h.maxDirect, h.maxHeapBits)
	}
	h.offBytes = (h.maxHeapBits + 7) / 8
	dirBits := bits.Len64(h.maxDirect) - 1
	h.lenBytes = min((dirBits+7)/8, encSize(h.maxMan))
	return h, nil
}

// object returns the heap object with ID id.
func (f *File) heapObject(h *fheap, id []byte) ([]byte, error) {
	if len(id) < 1 {
		return nil, f.errf(h.at, "empty fractal heap ID")
	}
	switch (id[0] >> 4) & 3 {
	case 0: // managed
	case 2: // tiny
		n := int(id[0]&0x0f) + 1
		if n > len(id)-1 {
			return nil, f.errf(h.at, "tiny fractal heap object of %d bytes in an ID of %d", n, len(id))
		}
		return id[1 : 1+n], nil
	default:
		return nil, f.unsupported("huge fractal heap objects")
	}
	c := f.cursor(id, h.at)
	c.u8()
	off := c.uint(h.offBytes)
	n := c.uint(h.lenBytes)
	if c.err != nil {
		return nil, c.err
	}
	if !h.listed {
		h.listed = true
		err := f.heapBlocks(h, func(addr, off, size uint64) (bool, error) {
			if len(h.blocks) >= maxChunks {
				return true, f.errf(h.at, "fractal heap with more than %d blocks", maxChunks)
			}
			h.blocks = append(h.blocks, dblock{addr, off, size})
			return false, nil
		})
		if err != nil {
			h.blocks = nil
			return nil, err
		}
	}
	var found []byte
	for _, blk := range h.blocks {
		if off < blk.off || off-blk.off >= blk.size {
			continue
		}
		if n > blk.size-(off-blk.off) {
			return nil, f.errf(h.at, "fractal heap object of %d bytes at %d past its block", n, off)
		}
		b, err := f.bytesAt(blk.addr+(off-blk.off), n)
		if err != nil {
			return nil, err
		}
		found = b
		break
	}
	if found == nil {
		return nil, f.errf(h.at, "fractal heap object at offset %d not found", off)
	}
	return found, nil
}

// heapBlocks visits the direct blocks of the heap (address, heap offset,
// size) until visit returns true.
func (f *File) heapBlocks(h *fheap, visit func(addr, off, size uint64) (bool, error)) error {
	if h.root == undef {
		return nil
	}
	if h.rootRows == 0 {
		_, err := visit(h.root, 0, h.startSize)
		return err
	}
	rowSize := func(r int) uint64 {
		if r <= 1 {
			return h.startSize
		}
		if r-1 >= 64 {
			return 0
		}
		return h.startSize << (r - 1)
	}
	maxDirRows := bits.Len64(h.maxDirect) - bits.Len64(h.startSize) + 2
	seen := map[uint64]bool{}
	var walk func(addr uint64, rows int, depth int) (bool, error)
	walk = func(addr uint64, rows int, depth int) (bool, error) {
		if depth > maxTreeDepth || rows > 64 {
			return false, f.errf(addr, "fractal heap indirect blocks nested too deep")
		}
		if seen[addr] {
			return false, f.errf(addr+f.base, "fractal heap block at %d visited twice (a cycle)", addr)
		}
		seen[addr] = true
		b, at, err := f.tail(addr)
		if err != nil {
			return false, err
		}
		c := f.cursor(b, at)
		c.sig("FHIB")
		c.u8()
		c.addr()
		blockOff := c.uint(h.offBytes)
		if c.err != nil {
			return false, c.err
		}
		off := blockOff
		for r := 0; r < rows; r++ {
			size := rowSize(r)
			if size == 0 {
				return false, f.errf(at, "fractal heap row %d too large", r)
			}
			for k := 0; k < h.width; k++ {
				child := c.addr()
				if c.err != nil {
					return false, c.err
				}
				if child != undef {
					var done bool
					var err error
					if r < maxDirRows {
						done, err = visit(child, off, size)
					} else {
						// An indirect block covering size bytes has rows
						// log2(size) - log2(start*width) + 1.
						sub := bits.Len64(size) - bits.Len64(h.startSize*uint64(h.width)) + 1
						done, err = walk(child, sub, depth+1)
					}
					if done || err != nil {
						return done, err
					}
				}
				off += size
			}
		}
		return false, nil
	}
	_, err := walk(h.root, h.rootRows, 0)
	return err
}
