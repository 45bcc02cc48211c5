package pickle

// Sniff tells the protocol of a pickle from its first bytes: 2 to 5 from
// the PROTO opcode, 0 or 1 from the opcodes themselves, -1 for anything
// else. A head without PROTO is a protocol 0 or 1 pickle only when every
// opcode in it (to STOP or to the end of the head, where a last argument
// may be cut) is one those protocols define, with a well-formed argument
// and a consistent stack, and one of them is a GLOBAL or INST naming a
// module: a text file does not pass by chance.
func Sniff(head []byte) int {
	if len(head) >= 2 && head[0] == 0x80 {
		if head[1] <= 5 {
			return int(head[1])
		}
		return -1
	}
	const maxWalk = 4096
	if len(head) > maxWalk {
		head = head[:maxWalk]
	}
	proto, stack, globals, ops := 0, 0, 0, 0
	var marks []int
	pos := 0
	// line returns the text up to '\n'; ok is false at the end of head.
	line := func() (string, bool) {
		for i := pos; i < len(head); i++ {
			if head[i] == '\n' {
				s := string(head[pos:i])
				pos = i + 1
				return s, true
			}
		}
		pos = len(head)
		return "", false
	}
	fixed := func(n int) ([]byte, bool) {
		if n > len(head)-pos {
			pos = len(head)
			return nil, false
		}
		b := head[pos : pos+n]
		pos += n
		return b, true
	}
	pop := func(n int) bool {
		base := 0
		if len(marks) > 0 {
			base = marks[len(marks)-1]
		}
		if stack-n < base {
			return false
		}
		stack -= n
		return true
	}
	popMark := func() bool {
		if len(marks) == 0 {
			return false
		}
		stack = marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		return true
	}
	for pos < len(head) {
		op := head[pos]
		pos++
		ops++
		ok := true
		switch op {
		case '(':
			marks = append(marks, stack)
		case '.': // STOP
			if !pop(1) || stack != 0 || len(marks) != 0 {
				return -1
			}
			if globals == 0 {
				return -1
			}
			return proto
		case '0':
			if len(marks) > 0 && marks[len(marks)-1] == stack {
				marks = marks[:len(marks)-1]
			} else {
				ok = pop(1)
			}
		case '1':
			ok = popMark()
		case '2':
			ok = pop(1)
			stack += 2
		case 'N', ')', ']', '}':
			if op != 'N' {
				proto = 1
			}
			stack++
		case 'I', 'L':
			s, full := line()
			if full && !isDecimal(s, op == 'L') {
				return -1
			}
			stack++
		case 'F':
			s, full := line()
			if full && !isFloatText(s) {
				return -1
			}
			stack++
		case 'S':
			s, full := line()
			if full && (len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0]) {
				return -1
			}
			stack++
		case 'V', 'P':
			line()
			stack++
		case 'p', 'g':
			s, full := line()
			if full && !isDecimal(s, false) {
				return -1
			}
			if op == 'g' {
				stack++
			} else {
				ok = pop(1)
				stack++
			}
		case 'c', 'i':
			mod, full1 := line()
			name, full2 := line()
			if (full1 && !isDotted(mod)) || (full2 && !isDotted(name)) {
				return -1
			}
			if full1 && full2 {
				globals++
			}
			if op == 'i' {
				ok = popMark()
			}
			stack++
		case 'K', 'M', 'J', 'G', 'q', 'h', 'r', 'j':
			proto = 1
			n := map[byte]int{'K': 1, 'M': 2, 'J': 4, 'G': 8, 'q': 1, 'h': 1, 'r': 4, 'j': 4}[op]
			fixed(n)
			if op == 'q' || op == 'r' {
				ok = pop(1)
			}
			stack++
		case 'U', 'T', 'X':
			proto = 1
			w := 4
			if op == 'U' {
				w = 1
			}
			b, full := fixed(w)
			if full {
				var n uint64
				for i := w - 1; i >= 0; i-- {
					n = n<<8 | uint64(b[i])
				}
				if n > uint64(len(head)-pos) {
					pos = len(head) // the argument goes past the head
				} else {
					pos += int(n)
				}
			}
			stack++
		case 'Q':
			proto = 1
			ok = pop(1)
			stack++
		case 'a', 'R', 'b':
			ok = pop(2)
			stack++
		case 's':
			ok = pop(3)
			stack++
		case 'e', 'u':
			proto = 1
			ok = popMark() && pop(1)
			stack++
		case 't', 'l', 'd':
			ok = popMark()
			stack++
		case 'o':
			proto = 1
			ok = popMark()
			stack++
		default:
			return -1
		}
		if !ok || len(marks) > 1000 {
			return -1
		}
	}
	if globals == 0 || ops < 4 {
		return -1
	}
	return proto
}

func isDecimal(s string, long bool) bool {
	if long && len(s) > 0 && s[len(s)-1] == 'L' {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isFloatText(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+' && c != 'n' && c != 'a' && c != 'i' && c != 'f' {
			return false
		}
	}
	return true
}

// isDotted is a Python dotted name: identifiers joined by dots.
func isDotted(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			start = false
		case c >= '0' && c <= '9':
			if start {
				return false
			}
		case c == '.':
			if start {
				return false
			}
			start = true
		default:
			return false
		}
	}
	return !start
}
