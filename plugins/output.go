package plugins

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// graphField is the field number of ModelProto.graph.
const graphField = 7

// checkModelFile checks that path holds a protobuf ModelProto: its
// top-level fields are well formed, fit in the file, and include a graph.
// It reads only the field headers, seeking over their payloads, so it is
// cheap on models of many gigabytes.
func checkModelFile(path string) error {
	if err := checkNonEmpty(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	hasGraph := false
	for off < size {
		tag, n, err := readUvarint(r)
		if err != nil {
			return fmt.Errorf("not an ONNX model: bad field tag at byte %d", off)
		}
		off += n
		num, typ := tag>>3, tag&7
		if num == 0 {
			return fmt.Errorf("not an ONNX model: field number 0 at byte %d", off-n)
		}
		var skip int64
		switch typ {
		case 0: // varint
			_, n, err := readUvarint(r)
			if err != nil {
				return fmt.Errorf("not an ONNX model: truncated varint at byte %d", off)
			}
			off += n
		case 1:
			skip = 8
		case 5:
			skip = 4
		case 2:
			l, n, err := readUvarint(r)
			if err != nil {
				return fmt.Errorf("not an ONNX model: truncated length at byte %d", off)
			}
			off += n
			if l > uint64(size-off) {
				return fmt.Errorf("not an ONNX model: field %d at byte %d is %d bytes long, past the end of the file (%d bytes)", num, off, l, size)
			}
			skip = int64(l)
			if num == graphField {
				hasGraph = true
			}
		default:
			return fmt.Errorf("not an ONNX model: wire type %d at byte %d", typ, off-n)
		}
		if skip > 0 {
			if skip > size-off {
				return fmt.Errorf("not an ONNX model: truncated field at byte %d", off)
			}
			if skip <= int64(r.Buffered()) {
				if _, err := r.Discard(int(skip)); err != nil {
					return err
				}
			} else {
				if _, err := f.Seek(off+skip, io.SeekStart); err != nil {
					return err
				}
				r.Reset(f)
			}
			off += skip
		}
	}
	if !hasGraph {
		return errors.New("not an ONNX model: it has no graph")
	}
	return nil
}

func readUvarint(r *bufio.Reader) (uint64, int64, error) {
	var n int64
	cr := countingByteReader{r: r, n: &n}
	v, err := binary.ReadUvarint(cr)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return v, n, err
}

type countingByteReader struct {
	r *bufio.Reader
	n *int64
}

func (c countingByteReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		*c.n++
	}
	return b, err
}
