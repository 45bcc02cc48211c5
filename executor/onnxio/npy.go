package onnxio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

var npyTypes = map[string]canonical.DataType{
	"f4": canonical.Float, "f8": canonical.Double, "f2": canonical.Float16,
	"i1": canonical.Int8, "i2": canonical.Int16, "i4": canonical.Int32, "i8": canonical.Int64,
	"u1": canonical.Uint8, "u2": canonical.Uint16, "u4": canonical.Uint32, "u8": canonical.Uint64,
	"b1": canonical.Bool,
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([<>|=])([a-z]\d+)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// ReadNpy reads a little-endian, C-ordered NumPy .npy array.
func ReadNpy(path string) (*canonical.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading npy: %w", err)
	}
	if len(b) < 10 || !bytes.Equal(b[:6], []byte("\x93NUMPY")) {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	var hlen, off int
	if b[6] == 1 {
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	} else {
		if len(b) < 12 {
			return nil, fmt.Errorf("%s: truncated header", path)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	if off+hlen > len(b) {
		return nil, fmt.Errorf("%s: truncated header", path)
	}
	hdr := string(b[off : off+hlen])
	data := b[off+hlen:]
	d := reDescr.FindStringSubmatch(hdr)
	if d == nil {
		return nil, fmt.Errorf("%s: unsupported dtype in header %q", path, hdr)
	}
	if d[1] == ">" {
		return nil, fmt.Errorf("%s: big-endian arrays are not supported", path)
	}
	dt, ok := npyTypes[d[2]]
	if !ok {
		return nil, fmt.Errorf("%s: unsupported dtype %s", path, d[2])
	}
	if o := reOrder.FindStringSubmatch(hdr); o != nil && o[1] == "True" {
		return nil, fmt.Errorf("%s: Fortran-ordered arrays are not supported", path)
	}
	s := reShape.FindStringSubmatch(hdr)
	if s == nil {
		return nil, fmt.Errorf("%s: no shape in header", path)
	}
	var dims []int64
	for _, p := range strings.Split(s[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: bad shape %q", path, s[1])
		}
		dims = append(dims, v)
	}
	n, err := canonical.NumElements(dims)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := n * int64(canonical.ElemBits(dt)/8)
	if int64(len(data)) != want {
		return nil, fmt.Errorf("%s: holds %d data bytes, shape %v needs %d", path, len(data), dims, want)
	}
	return canonical.NewTensor(strings.TrimSuffix(path, ".npy"), dt, dims, data), nil
}
