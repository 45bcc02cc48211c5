package hdf5

// DefaultMaxTotal is the default bound on the bytes all reads of a file of
// size bytes decode to together: 128 MiB, or 16 times the file, whichever
// is more (a real weights file is read about once; compressed datasets
// expand a few times).
func DefaultMaxTotal(size uint64) uint64 {
	return max(128<<20, 16*size)
}

// charge counts n more decoded bytes of the object at path, or returns a
// *LimitError when the file's reads together pass maxTotal.
func (f *File) charge(path string, n uint64) error {
	total := f.decoded.Add(n)
	if total > f.maxTotal || total < n {
		f.decoded.Add(-n)
		return &LimitError{File: f.name, Path: path, Bytes: total, Limit: f.maxTotal, Total: true}
	}
	return nil
}

// Addr is the address of the object's header: two links to one object
// give the same Addr.
func (o *Object) Addr() uint64 { return o.h.addr }
