package catboost

// A flatbuffer may point many fields (a vector of tables, say) at one
// large vector: each read copies it, so a small file could ask for a copy
// per reference. fbDecoded bounds what the reads of one buffer decode
// together, in proportion to the buffer: a real model reads each vector
// about once.

// Decoding budget: 64 MiB, or 8 times the buffer, whichever is more.
const (
	minFBDecoded   = 64 << 20
	fbDecodedRatio = 8
)

type fbDecoded struct {
	used, limit int64
}

func newFBDecoded(size int) *fbDecoded {
	return &fbDecoded{limit: max(minFBDecoded, fbDecodedRatio*int64(size))}
}

// take counts n more bytes read from the vector of field i, or refuses.
// A table made without a budget (nil) takes anything.
func (d *fbDecoded) take(n int64, i int) error {
	if d == nil {
		return nil
	}
	d.used += n
	if d.used > d.limit {
		return fbErr("vector of field %d: the buffer's reads decode more than %d bytes together (vectors referenced many times?)", i, d.limit)
	}
	return nil
}
