package onnxtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokIdent          // [A-Za-z_][A-Za-z0-9_]*
	tokString         // "..." with backslash escapes
	tokNumber         // -?digits[.digits][e[+-]digits] or -?(inf|infinity|nan)
	tokPunct          // one of ( ) [ ] { } < > = , : @ ? . and the two-byte =>
)

// maxNumberLen bounds the length of a numeric literal.
const maxNumberLen = 512

type token struct {
	kind tokKind
	text string // identifier, punctuation or number text; decoded contents of a string
	pos  int    // byte offset of the first byte
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIdent:
		return fmt.Sprintf("identifier %q", t.text)
	case tokString:
		s := t.text
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return fmt.Sprintf("string %q", s)
	case tokNumber:
		return fmt.Sprintf("number %s", t.text)
	default:
		return fmt.Sprintf("%q", t.text)
	}
}

// lexer splits the input into tokens on demand. It never panics and
// stops at the first error.
type lexer struct {
	src []byte
	off int
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// lexError is an error found at a byte offset.
type lexError struct {
	pos int
	msg string
}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case isSpace(c):
			l.off++
		case c == '#':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.off++
			}
		default:
			return
		}
	}
}

// next scans the next token.
func (l *lexer) next() (token, *lexError) {
	l.skipSpace()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: l.off}, nil
	}
	start := l.off
	c := l.src[start]
	switch {
	case isAlpha(c) || c == '_':
		l.off++
		for l.off < len(l.src) && (isAlpha(l.src[l.off]) || isDigit(l.src[l.off]) || l.src[l.off] == '_') {
			l.off++
		}
		return token{kind: tokIdent, text: string(l.src[start:l.off]), pos: start}, nil
	case c == '"':
		return l.scanString()
	case isDigit(c) || c == '-':
		return l.scanNumber()
	case c == '=':
		l.off++
		if l.off < len(l.src) && l.src[l.off] == '>' {
			l.off++
			return token{kind: tokPunct, text: "=>", pos: start}, nil
		}
		return token{kind: tokPunct, text: "=", pos: start}, nil
	case strings.IndexByte("()[]{}<>,:@?.", c) >= 0:
		l.off++
		return token{kind: tokPunct, text: string(c), pos: start}, nil
	}
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRune(l.src[start:])
		if r == utf8.RuneError && size <= 1 {
			return token{}, &lexError{start, "invalid UTF-8 byte in input"}
		}
		return token{}, &lexError{start, fmt.Sprintf("unexpected character %q (quote identifiers that are not plain ASCII)", r)}
	}
	return token{}, &lexError{start, fmt.Sprintf("unexpected character %q", rune(c))}
}

func (l *lexer) scanString() (token, *lexError) {
	start := l.off
	l.off++ // opening quote
	// Fast path: no escapes and plain ASCII.
	for i := l.off; i < len(l.src); i++ {
		c := l.src[i]
		if c == '"' {
			s := string(l.src[l.off:i])
			l.off = i + 1
			return token{kind: tokString, text: s, pos: start}, nil
		}
		if c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	var b strings.Builder
	for {
		if l.off >= len(l.src) {
			return token{}, &lexError{start, "unterminated string literal"}
		}
		c := l.src[l.off]
		switch {
		case c == '"':
			l.off++
			s := b.String()
			return token{kind: tokString, text: s, pos: start}, nil
		case c == '\\':
			l.off++
			if l.off >= len(l.src) {
				return token{}, &lexError{start, "unterminated string literal"}
			}
			c = l.src[l.off]
			fallthrough
		default:
			if c < utf8.RuneSelf {
				b.WriteByte(c)
				l.off++
				continue
			}
			r, size := utf8.DecodeRune(l.src[l.off:])
			if r == utf8.RuneError && size <= 1 {
				return token{}, &lexError{l.off, "invalid UTF-8 in string literal"}
			}
			b.Write(l.src[l.off : l.off+size])
			l.off += size
		}
	}
}

func (l *lexer) scanNumber() (token, *lexError) {
	start := l.off
	if l.src[l.off] == '-' {
		l.off++
	}
	if l.off < len(l.src) && isAlpha(l.src[l.off]) {
		// -inf, -infinity, -nan
		w := l.off
		for l.off < len(l.src) && (isAlpha(l.src[l.off]) || isDigit(l.src[l.off]) || l.src[l.off] == '_') {
			l.off++
		}
		if !isSpecialFloat(string(l.src[w:l.off])) {
			return token{}, &lexError{start, fmt.Sprintf("invalid number %q", l.src[start:l.off])}
		}
		return token{kind: tokNumber, text: string(l.src[start:l.off]), pos: start}, nil
	}
	digits := l.off
	for l.off < len(l.src) && isDigit(l.src[l.off]) {
		l.off++
	}
	if l.off == digits {
		return token{}, &lexError{start, "expected a digit after '-'"}
	}
	if l.off < len(l.src) && l.src[l.off] == '.' {
		l.off++
		for l.off < len(l.src) && isDigit(l.src[l.off]) {
			l.off++
		}
	}
	if l.off < len(l.src) && (l.src[l.off] == 'e' || l.src[l.off] == 'E') {
		l.off++
		if l.off < len(l.src) && (l.src[l.off] == '+' || l.src[l.off] == '-') {
			l.off++
		}
		exp := l.off
		for l.off < len(l.src) && isDigit(l.src[l.off]) {
			l.off++
		}
		if l.off == exp {
			return token{}, &lexError{start, "expected digits in exponent"}
		}
	}
	if l.off-start > maxNumberLen {
		return token{}, &lexError{start, fmt.Sprintf("numeric literal longer than %d characters", maxNumberLen)}
	}
	return token{kind: tokNumber, text: string(l.src[start:l.off]), pos: start}, nil
}

// isSpecialFloat reports whether s (without sign) names inf or nan.
func isSpecialFloat(s string) bool {
	switch len(s) {
	case 3:
		return strings.EqualFold(s, "inf") || strings.EqualFold(s, "nan")
	case 8:
		return strings.EqualFold(s, "infinity")
	}
	return false
}

// isFloatLiteral reports whether a number token is a float (not an integer) literal.
func isFloatLiteral(s string) bool {
	return strings.ContainsAny(s, ".eEiInN")
}

// lineCol converts a byte offset into 1-based line and column (columns count runes).
func lineCol(src []byte, pos int) (int, int) {
	if pos > len(src) {
		pos = len(src)
	}
	line, col := 1, 1
	for i := 0; i < pos; {
		if src[i] == '\n' {
			line++
			col = 1
			i++
			continue
		}
		_, size := utf8.DecodeRune(src[i:])
		i += size
		col++
	}
	return line, col
}
