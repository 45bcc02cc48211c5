// Package scrub keeps private temporary paths out of error messages: the
// host and the SDK pass models through temporary files the user never
// named, and an error should name the user's files only.
package scrub

import (
	"path/filepath"
	"strings"
)

// pathEnd holds the bytes that end a path inside a message.
const pathEnd = " \t\r\n\"'`,;:)]}"

// String replaces in s every path that starts with one of dirs (the
// folder itself or anything under it) by repl.
func String(s, repl string, dirs ...string) string {
	for _, dir := range dirs {
		if dir == "" || dir == string(filepath.Separator) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, dir)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:i])
			b.WriteString(repl)
			rest = rest[i+len(dir):]
			if j := strings.IndexAny(rest, pathEnd); j >= 0 {
				rest = rest[j:]
			} else {
				rest = ""
			}
		}
		s = b.String()
	}
	return s
}

// Error returns err with the paths under dirs in its message replaced by
// repl (see String). The result unwraps to err, so errors.Is and errors.As
// still classify it. nil, and an error whose message names none of dirs,
// are returned as they are.
func Error(err error, repl string, dirs ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := String(msg, repl, dirs...)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
