package node

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// FrameJS is the script side of the framed protocol, to be put before a
// runner script: it defines `frame` with readRequest() (the request on
// stdin as {head, take(n)}, or null after answering a protocol error),
// reply(header, blobs) (the answer on stdout) and fail(kind, error, extra)
// (an answer {"ok": false, kind, error, ...extra}).
//
//go:embed frame.js
var FrameJS string

// Frame encodes a message of the framed protocol: a 4-byte little-endian
// length, head as JSON of that length, then blobs in order.
func Frame(head any, blobs ...[]byte) ([]byte, error) {
	hj, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	n := 4 + len(hj)
	for _, b := range blobs {
		n += len(b)
	}
	out := make([]byte, 0, n)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	for _, b := range blobs {
		out = append(out, b...)
	}
	return out, nil
}

// Unframe decodes the header of a framed message into head and returns
// the bytes after it.
func Unframe(b []byte, head any) ([]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("no answer from the runner")
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, errors.New("truncated answer header")
	}
	if err := json.Unmarshal(b[4:4+n], head); err != nil {
		return nil, fmt.Errorf("bad answer header: %w", err)
	}
	return b[4+n:], nil
}
