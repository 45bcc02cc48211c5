package protocol

import (
	"bytes"
	"path/filepath"
	"strings"
)

// HeadSize is how many leading bytes of a file Detect is given.
const HeadSize = 4096

// MatchMagic reports whether head (the first bytes of a file) holds one of
// the patterns.
func MatchMagic(head []byte, patterns []Magic) bool {
	for _, m := range patterns {
		end := m.Offset + int64(len(m.Bytes))
		if len(m.Bytes) > 0 && m.Offset >= 0 && end <= int64(len(head)) && bytes.Equal(head[m.Offset:end], m.Bytes) {
			return true
		}
	}
	return false
}

// MatchExtension returns the length of the longest of exts that path ends
// with, ignoring case, or 0 if none does.
func MatchExtension(path string, exts []string) int {
	lower := strings.ToLower(filepath.Base(path))
	best := 0
	for _, e := range exts {
		if e != "" && len(e) > best && strings.HasSuffix(lower, strings.ToLower(e)) {
			best = len(e)
		}
	}
	return best
}
