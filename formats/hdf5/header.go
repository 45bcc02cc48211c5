package hdf5

// Object header message types.
const (
	msgNil          = 0x00
	msgDataspace    = 0x01
	msgLinkInfo     = 0x02
	msgDatatype     = 0x03
	msgLayout       = 0x08
	msgFilters      = 0x0B
	msgAttribute    = 0x0C
	msgContinuation = 0x10
	msgSymbolTable  = 0x11
	msgLink         = 0x06
	msgAttrInfo     = 0x15
)

// message is one object header message.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
	at    uint64 // file offset of data
}

// header is a parsed object header.
type header struct {
	addr uint64
	msgs []message
}

func (h *header) find(typ uint16) *message {
	for i := range h.msgs {
		if h.msgs[i].typ == typ {
			return &h.msgs[i]
		}
	}
	return nil
}

func (h *header) all(typ uint16) []message {
	var out []message
	for _, m := range h.msgs {
		if m.typ == typ {
			out = append(out, m)
		}
	}
	return out
}

// block is an object header continuation block.
type block struct{ addr, n uint64 }

// header reads the object header at addr (v1 or v2) with its
// continuation blocks.
func (f *File) header(addr uint64) (*header, error) {
	b, at, err := f.tail(addr)
	if err != nil {
		return nil, err
	}
	h := &header{addr: addr}
	var pending []block
	seen := map[uint64]bool{}
	v2 := len(b) >= 4 && string(b[:4]) == "OHDR"
	var flags uint8
	if v2 {
		c := f.cursor(b, at)
		c.skip(4)
		if v := c.u8(); v != 2 && c.err == nil {
			return nil, f.errf(at+4, "object header version %d, want 2", v)
		}
		flags = c.u8()
		if flags&0x20 != 0 {
			c.skip(16)
		}
		if flags&0x10 != 0 {
			c.skip(4)
		}
		size := c.uint(1 << (flags & 3))
		if c.err != nil {
			return nil, c.err
		}
		start := uint64(c.pos)
		if size > uint64(len(b))-start {
			return nil, f.errf(at, "object header chunk of %d bytes runs past the end of the file", size)
		}
		if err := f.messagesV2(h, b[start:start+size], at+start, flags, &pending); err != nil {
			return nil, err
		}
	} else {
		c := f.cursor(b, at)
		if v := c.u8(); v != 1 && c.err == nil {
			return nil, f.errf(at, "object header version %d, want 1 (or a v2 \"OHDR\" header)", v)
		}
		c.skip(1)
		c.u16() // message count
		c.u32() // reference count
		size := uint64(c.u32())
		if c.err != nil {
			return nil, c.err
		}
		if len(b) < 16 || size > uint64(len(b))-16 {
			return nil, f.errf(at, "object header of %d bytes runs past the end of the file", size)
		}
		if err := f.messagesV1(h, b[16:16+size], at+16, &pending); err != nil {
			return nil, err
		}
	}
	seen[addr] = true
	for len(pending) > 0 {
		blk := pending[0]
		pending = pending[1:]
		if seen[blk.addr] {
			return nil, f.errf(blk.addr+f.base, "object header continuation block at %d visited twice (a cycle)", blk.addr)
		}
		seen[blk.addr] = true
		if len(seen) > maxHeaderBlocks {
			return nil, f.errf(at, "object header has more than %d continuation blocks", maxHeaderBlocks)
		}
		data, err := f.bytesAt(blk.addr, blk.n)
		if err != nil {
			return nil, err
		}
		babs := blk.addr + f.base
		if v2 {
			if len(data) < 8 || string(data[:4]) != "OCHK" {
				return nil, f.errf(babs, "object header continuation block without \"OCHK\" signature")
			}
			if err := f.messagesV2(h, data[4:len(data)-4], babs+4, flags, &pending); err != nil {
				return nil, err
			}
		} else if err := f.messagesV1(h, data, babs, &pending); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (f *File) addMessage(h *header, m message, pending *[]block) error {
	if len(h.msgs) >= maxMessages {
		return f.errf(m.at, "object header has more than %d messages", maxMessages)
	}
	if m.typ == msgContinuation {
		c := f.cursor(m.data, m.at)
		a, n := c.addr(), c.length()
		if c.err != nil {
			return c.err
		}
		*pending = append(*pending, block{a, n})
		return nil
	}
	h.msgs = append(h.msgs, m)
	return nil
}

func (f *File) messagesV1(h *header, b []byte, at uint64, pending *[]block) error {
	c := f.cursor(b, at)
	for c.left() >= 8 {
		typ := c.u16()
		size := int(c.u16())
		flags := c.u8()
		c.skip(3)
		dat := c.take(size)
		if c.err != nil {
			return c.err
		}
		if err := f.addMessage(h, message{typ: typ, flags: flags, data: dat, at: at + uint64(c.pos-size)}, pending); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) messagesV2(h *header, b []byte, at uint64, hflags uint8, pending *[]block) error {
	c := f.cursor(b, at)
	hs := 4
	if hflags&0x04 != 0 {
		hs = 6
	}
	for c.left() >= hs {
		typ := uint16(c.u8())
		size := int(c.u16())
		flags := c.u8()
		if hflags&0x04 != 0 {
			c.skip(2)
		}
		dat := c.take(size)
		if c.err != nil {
			return c.err
		}
		if err := f.addMessage(h, message{typ: typ, flags: flags, data: dat, at: at + uint64(c.pos-size)}, pending); err != nil {
			return err
		}
	}
	return nil
}
