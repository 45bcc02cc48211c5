package torchscript

import (
	"fmt"
	"strconv"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tName
	tInt
	tFloat
	tString
	tOp
	tNewline
	tIndent
	tDedent
)

type token struct {
	kind tokKind
	text string // the name, operator, or the decoded string
	line int
}

// SyntaxError is source the parser does not read: the file, the line and
// what was expected.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Limits of the parser, so that hostile source is an error, not a hang or
// a stack overflow.
const (
	MaxSourceBytes = 64 << 20
	maxTokens      = 16 << 20
	maxDepth       = 200
)

var ops3 = []string{"**=", "//=", ">>=", "<<=", "..."}
var ops2 = []string{"==", "!=", "<=", ">=", "->", "//", "**", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"}

// lex splits src into tokens with Python's indentation rules.
func lex(file, src string) ([]token, error) {
	if len(src) > MaxSourceBytes {
		return nil, &SyntaxError{File: file, Line: 1, Msg: fmt.Sprintf("source of %d bytes, more than %d", len(src), MaxSourceBytes)}
	}
	var toks []token
	indents := []int{0}
	line := 1
	depth := 0 // bracket nesting: newlines inside are joined
	atLineStart := true
	i := 0
	errf := func(format string, a ...any) error {
		return &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	for i < len(src) {
		if len(toks) > maxTokens {
			return nil, errf("more than %d tokens", maxTokens)
		}
		if atLineStart && depth == 0 {
			// measure indentation; skip blank and comment lines
			col := 0
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				if src[j] == '\t' {
					col = (col/8 + 1) * 8
				} else {
					col++
				}
				j++
			}
			if j >= len(src) {
				i = j
				break
			}
			if src[j] == '\n' || src[j] == '\r' || src[j] == '#' {
				for j < len(src) && src[j] != '\n' {
					j++
				}
				if j < len(src) {
					j++
					line++
				}
				i = j
				continue
			}
			i = j
			atLineStart = false
			switch top := indents[len(indents)-1]; {
			case col > top:
				indents = append(indents, col)
				toks = append(toks, token{kind: tIndent, line: line})
			case col < top:
				for col < indents[len(indents)-1] {
					indents = indents[:len(indents)-1]
					toks = append(toks, token{kind: tDedent, line: line})
				}
				if col != indents[len(indents)-1] {
					return nil, errf("inconsistent dedent")
				}
			}
		}
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 {
				toks = append(toks, token{kind: tNewline, line: line})
				atLineStart = true
			}
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			line++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && (word == "r" || word == "b" || word == "rb" || word == "br") {
				s, n, err := lexString(src[j:], strings.Contains(word, "r"))
				if err != nil {
					return nil, errf("%v", err)
				}
				line += strings.Count(src[j:j+n], "\n")
				toks = append(toks, token{kind: tString, text: s, line: line})
				i = j + n
				continue
			}
			toks = append(toks, token{kind: tName, text: word, line: line})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			isFloat := false
			if c == '0' && j+1 < len(src) && (src[j+1] == 'x' || src[j+1] == 'X') {
				j += 2
				for j < len(src) && strings.IndexByte("0123456789abcdefABCDEF_", src[j]) >= 0 {
					j++
				}
			} else {
				for j < len(src) {
					d := src[j]
					if d >= '0' && d <= '9' || d == '_' {
						j++
					} else if d == '.' || d == 'e' || d == 'E' {
						isFloat = true
						j++
						if (d == 'e' || d == 'E') && j < len(src) && (src[j] == '-' || src[j] == '+') {
							j++
						}
					} else {
						break
					}
				}
			}
			if j < len(src) && (src[j] == 'j' || src[j] == 'J') {
				return nil, errf("complex literals are not read")
			}
			k := tInt
			if isFloat {
				k = tFloat
			}
			toks = append(toks, token{kind: k, text: src[i:j], line: line})
			i = j
		case c == '"' || c == '\'':
			s, n, err := lexString(src[i:], false)
			if err != nil {
				return nil, errf("%v", err)
			}
			line += strings.Count(src[i:i+n], "\n")
			toks = append(toks, token{kind: tString, text: s, line: line})
			i += n
		default:
			op := ""
			for _, o := range ops3 {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				for _, o := range ops2 {
					if strings.HasPrefix(src[i:], o) {
						op = o
						break
					}
				}
			}
			if op == "" {
				if strings.IndexByte("()[]{}:,.;@=+-*/%<>&|^~", c) < 0 {
					return nil, errf("unexpected character %q", c)
				}
				op = string(c)
			}
			switch op {
			case "(", "[", "{":
				depth++
				if depth > maxDepth {
					return nil, errf("brackets nested deeper than %d", maxDepth)
				}
			case ")", "]", "}":
				if depth == 0 {
					return nil, errf("unbalanced %q", op)
				}
				depth--
			}
			toks = append(toks, token{kind: tOp, text: op, line: line})
			i += len(op)
		}
	}
	if depth != 0 {
		return nil, errf("unclosed bracket at the end of the file")
	}
	if len(toks) > 0 && toks[len(toks)-1].kind != tNewline && toks[len(toks)-1].kind != tDedent {
		toks = append(toks, token{kind: tNewline, line: line})
	}
	for len(indents) > 1 {
		indents = indents[:len(indents)-1]
		toks = append(toks, token{kind: tDedent, line: line})
	}
	toks = append(toks, token{kind: tEOF, line: line})
	return toks, nil
}

// lexString reads a quoted string at the start of s and returns its
// value and length in s.
func lexString(s string, raw bool) (string, int, error) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	i := len(q)
	var b strings.Builder
	for {
		if i >= len(s) {
			return "", 0, fmt.Errorf("unterminated string")
		}
		if strings.HasPrefix(s[i:], q) {
			return b.String(), i + len(q), nil
		}
		c := s[i]
		if c == '\n' && len(q) == 1 {
			return "", 0, fmt.Errorf("newline in a string")
		}
		if c == '\\' && i+1 < len(s) {
			if raw {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			e := s[i+1]
			i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '\n':
			case 'x':
				if i+2 > len(s) {
					return "", 0, fmt.Errorf("bad \\x escape")
				}
				v, err := strconv.ParseUint(s[i:i+2], 16, 8)
				if err != nil {
					return "", 0, fmt.Errorf("bad \\x escape")
				}
				b.WriteByte(byte(v))
				i += 2
			case 'u':
				if i+4 > len(s) {
					return "", 0, fmt.Errorf("bad \\u escape")
				}
				v, err := strconv.ParseUint(s[i:i+4], 16, 32)
				if err != nil {
					return "", 0, fmt.Errorf("bad \\u escape")
				}
				b.WriteRune(rune(v))
				i += 4
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
		i++
	}
}
