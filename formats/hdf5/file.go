// Package hdf5 is a small read-only reader of HDF5 files, enough for the
// weight files of Keras 2 (.h5) and Keras 3 (model.weights.h5 inside a
// .keras zip) and for files written by h5py with any library version
// bound: superblocks v0 to v3, object headers v1 and v2, groups by symbol
// table (v1 B-tree and local heap) and by link messages (compact, or dense
// in a fractal heap indexed by a v2 B-tree), contiguous, compact and
// chunked datasets (v1 B-tree, single-chunk and implicit indexes) with the
// deflate, shuffle and fletcher32 filters, and attributes (compact or
// dense) of numeric, fixed-length string and variable-length string types.
//
// The file is treated as hostile: every address, size, count and depth is
// checked before use, cycles are detected, and the bytes a dataset may
// decode to are bounded (Options.MaxBytes). A fault is a *FormatError that
// names the file, the byte offset and what is wrong; a feature this reader
// does not implement is an *UnsupportedError. Nothing panics.
//
// The whole file is held in memory (Parse takes the bytes; Open reads
// them). A File is immutable once parsed and safe for concurrent use.
package hdf5

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Limits that hold whatever a file claims.
const (
	// DefaultMaxBytes bounds the bytes one dataset or attribute decodes
	// to unless Options.MaxBytes says otherwise.
	DefaultMaxBytes = 2 << 30
	maxRank         = 32
	maxMessages     = 1 << 16 // per object header
	maxHeaderBlocks = 1 << 12 // continuation blocks per object header
	maxTreeDepth    = 64      // B-tree levels, fractal heap indirection
	maxTypeDepth    = 16      // datatype nesting
	maxPathDepth    = 256     // path components
	maxChunks       = 1 << 22
	maxRecords      = 1 << 24 // B-tree records visited per traversal
)

// undef is the undefined address.
const undef = ^uint64(0)

// signature is the HDF5 format signature.
var signature = []byte("\x89HDF\r\n\x1a\n")

// FormatError is a file that breaks the HDF5 format (or lies about its
// sizes): File names it, Offset is the byte offset of the fault (from the
// start of the file), What says what is wrong.
type FormatError struct {
	File   string
	Offset uint64
	What   string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: HDF5 format error at byte %d: %s", e.File, e.Offset, e.What)
}

// UnsupportedError is a valid HDF5 feature this reader does not read.
type UnsupportedError struct {
	File string
	What string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: HDF5 feature not supported by onnxconv's reader: %s", e.File, e.What)
}

// NotFoundError is a path that names no object or attribute.
type NotFoundError struct {
	File string
	Path string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: HDF5 object %q not found", e.File, e.Path)
}

// LimitError is a dataset or attribute larger than the reader decodes.
type LimitError struct {
	File  string
	Path  string
	Bytes uint64
	Limit uint64
	// Total is set when the reads of the file together passed the limit
	// (Options.MaxTotal), not one object.
	Total bool
}

func (e *LimitError) Error() string {
	if e.Bytes == undef {
		return fmt.Sprintf("%s: HDF5 object %q would decode to more than 2**64 bytes (limit %d)", e.File, e.Path, e.Limit)
	}
	if e.Total {
		return fmt.Sprintf("%s: reading HDF5 object %q brings the bytes decoded from the file to %d, more than the limit of %d for a file of this size (one dataset linked or named many times, or compressed far beyond what real weights allow?)", e.File, e.Path, e.Bytes, e.Limit)
	}
	return fmt.Sprintf("%s: HDF5 object %q would decode to %d bytes, more than the limit of %d", e.File, e.Path, e.Bytes, e.Limit)
}

// Options bound what a File decodes.
type Options struct {
	// MaxBytes bounds the decoded bytes of one dataset or attribute
	// (default DefaultMaxBytes). The bound is also at most 1100 times
	// the file size plus 1 MiB, as deflate expands at most about 1032
	// times.
	MaxBytes uint64
	// MaxTotal bounds the bytes all dataset reads of the file decode to
	// together, so that one dataset linked from many groups, or read for
	// many weight names, is not decoded without end (default
	// DefaultMaxTotal for the file's size).
	MaxTotal uint64
}

// File is a parsed HDF5 file.
type File struct {
	name     string
	data     []byte
	base     uint64
	so, sl   int // size of offsets, size of lengths
	super    int // superblock version
	root     uint64
	maxBytes uint64
	// maxTotal bounds the bytes every Read of the file decodes to,
	// together; decoded counts them (see budget.go).
	maxTotal uint64
	decoded  atomic.Uint64
}

// Open reads and parses the file at path with default options.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("hdf5: reading %s: %w", path, err)
	}
	return Parse(path, data, Options{})
}

// IsHDF5 reports whether head starts with the HDF5 signature (the
// superblock at byte 0, as in every file written by h5py).
func IsHDF5(head []byte) bool { return bytes.HasPrefix(head, signature) }

// Parse parses data, the whole file; name is used in errors.
func Parse(name string, data []byte, opts Options) (*File, error) {
	f := &File{name: name, data: data}
	f.maxBytes = opts.MaxBytes
	if f.maxBytes == 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if lim := uint64(len(data))*1100 + 1<<20; lim < f.maxBytes {
		f.maxBytes = lim
	}
	f.maxTotal = opts.MaxTotal
	if f.maxTotal == 0 {
		f.maxTotal = DefaultMaxTotal(uint64(len(data)))
	}
	// The superblock is at 0, 512, 1024, 2048, ...
	at := -1
	for off := 0; off+len(signature) <= len(data); {
		if bytes.Equal(data[off:off+len(signature)], signature) {
			at = off
			break
		}
		if off == 0 {
			off = 512
		} else {
			off *= 2
		}
	}
	if at < 0 {
		return nil, &FormatError{File: name, What: "no HDF5 signature (not an HDF5 file)"}
	}
	if err := f.superblock(uint64(at)); err != nil {
		return nil, err
	}
	return f, nil
}

// Name is the name the file was parsed with.
func (f *File) Name() string { return f.name }

// SuperblockVersion is the version of the file's superblock (0 to 3).
func (f *File) SuperblockVersion() int { return f.super }

func (f *File) errf(off uint64, format string, args ...any) error {
	return &FormatError{File: f.name, Offset: off, What: fmt.Sprintf(format, args...)}
}

func (f *File) unsupported(format string, args ...any) error {
	return &UnsupportedError{File: f.name, What: fmt.Sprintf(format, args...)}
}

// abs turns a file address into an offset in data, checking n bytes fit.
func (f *File) abs(addr uint64, n uint64) (uint64, error) {
	if addr == undef {
		return 0, f.errf(0, "undefined address used")
	}
	a := addr + f.base
	if a < addr || a > uint64(len(f.data)) || n > uint64(len(f.data))-a {
		return 0, f.errf(a, "%d bytes at address %d run past the end of the file (%d bytes)", n, addr, len(f.data))
	}
	return a, nil
}

// bytesAt returns n bytes at file address addr.
func (f *File) bytesAt(addr, n uint64) ([]byte, error) {
	a, err := f.abs(addr, n)
	if err != nil {
		return nil, err
	}
	return f.data[a : a+n], nil
}

// tail returns the bytes from addr to the end of the file.
func (f *File) tail(addr uint64) ([]byte, uint64, error) {
	a, err := f.abs(addr, 0)
	if err != nil {
		return nil, 0, err
	}
	return f.data[a:], a, nil
}

// cur reads little-endian fields from a byte slice with a sticky error:
// reading past the end sets err and yields zeros.
type cur struct {
	f   *File
	b   []byte
	pos int
	at  uint64 // file offset of b[0], for messages
	err error
}

func (f *File) cursor(b []byte, at uint64) *cur { return &cur{f: f, b: b, at: at} }

func (c *cur) fail(format string, args ...any) {
	if c.err == nil {
		c.err = c.f.errf(c.at+uint64(c.pos), format, args...)
	}
}

func (c *cur) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b)-c.pos {
		c.fail("need %d bytes, only %d left in the structure", n, len(c.b)-c.pos)
		return nil
	}
	s := c.b[c.pos : c.pos+n]
	c.pos += n
	return s
}

func (c *cur) skip(n int) { c.take(n) }

func (c *cur) left() int { return len(c.b) - c.pos }

func (c *cur) uint(n int) uint64 {
	s := c.take(n)
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

func (c *cur) u8() uint8   { return uint8(c.uint(1)) }
func (c *cur) u16() uint16 { return uint16(c.uint(2)) }
func (c *cur) u32() uint32 { return uint32(c.uint(4)) }

// addr reads an address of the file's offset size (all ones: undef).
func (c *cur) addr() uint64 {
	n := c.f.so
	v := c.uint(n)
	if n < 8 && v == 1<<(8*n)-1 {
		return undef
	}
	return v
}

// length reads a length of the file's length size.
func (c *cur) length() uint64 { return c.uint(c.f.sl) }

func (c *cur) sig(s string) {
	b := c.take(len(s))
	if c.err == nil && string(b) != s {
		c.fail("expected signature %q, found %q", s, b)
	}
}

func (f *File) superblock(at uint64) error {
	c := f.cursor(f.data[at:], at)
	c.skip(8)
	f.super = int(c.u8())
	switch f.super {
	case 0, 1:
		c.skip(4) // free-space, root group, reserved, shared header versions
		f.so, f.sl = int(c.u8()), int(c.u8())
		if err := f.checkSizes(at); err != nil {
			return err
		}
		c.skip(1 + 2 + 2 + 4) // reserved, leaf K, internal K, flags
		if f.super == 1 {
			c.skip(4)
		}
		f.base = c.addr()
		c.addr() // free space info
		c.addr() // end of file
		c.addr() // driver info
		// Root group symbol table entry.
		c.addr() // link name offset
		f.root = c.addr()
	case 2, 3:
		f.so, f.sl = int(c.u8()), int(c.u8())
		if err := f.checkSizes(at); err != nil {
			return err
		}
		c.skip(1) // flags
		f.base = c.addr()
		c.addr() // superblock extension
		c.addr() // end of file
		f.root = c.addr()
	default:
		return f.unsupported("superblock version %d", f.super)
	}
	if c.err != nil {
		return fmt.Errorf("superblock: %w", c.err)
	}
	if f.base == undef || f.base > uint64(len(f.data)) {
		return f.errf(at, "base address %d outside the file", f.base)
	}
	if f.root == undef {
		return f.errf(at, "no root group")
	}
	return nil
}

func (f *File) checkSizes(at uint64) error {
	ok := func(n int) bool { return n == 2 || n == 4 || n == 8 }
	if !ok(f.so) || !ok(f.sl) {
		return f.errf(at, "size of offsets %d / lengths %d not 2, 4 or 8", f.so, f.sl)
	}
	return nil
}

// asFormat reports whether err is one of this package's error types.
func asFormat(err error) bool {
	var fe *FormatError
	var ue *UnsupportedError
	return errors.As(err, &fe) || errors.As(err, &ue)
}
