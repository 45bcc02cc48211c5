package torchscript

import (
	"fmt"
	"strconv"
)

// Parse parses one TorchScript source file into its classes and free
// functions. It evaluates nothing; errors are *SyntaxError.
func Parse(file, src string) (*Module, error) {
	toks, err := lex(file, src)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks}
	m := &Module{File: file}
	for p.peek().kind != tEOF {
		if p.peek().kind == tNewline {
			p.next()
			continue
		}
		st, err := p.stmt()
		if err != nil {
			return nil, err
		}
		switch s := st.(type) {
		case *ClassDef:
			m.Classes = append(m.Classes, s)
		case *Def:
			m.Funcs = append(m.Funcs, s)
		case *Import:
			m.Imports = append(m.Imports, s)
		case *Assign, *AnnDecl, *ExprStmt:
			// module-level assignments (rare) are ignored
		default:
			return nil, &SyntaxError{File: file, Line: st.pos().Line, Msg: "a statement outside a function"}
		}
	}
	return m, nil
}

type parser struct {
	file  string
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) at() Pos { return Pos{File: p.file, Line: p.peek().line} }

func (p *parser) errf(format string, a ...any) error {
	return &SyntaxError{File: p.file, Line: p.peek().line, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) isOp(s string) bool   { t := p.peek(); return t.kind == tOp && t.text == s }
func (p *parser) isName(s string) bool { t := p.peek(); return t.kind == tName && t.text == s }

func (p *parser) expectOp(s string) error {
	if !p.isOp(s) {
		return p.errf("expected %q, found %s", s, describeTok(p.peek()))
	}
	p.next()
	return nil
}

func describeTok(t token) string {
	switch t.kind {
	case tEOF:
		return "the end of the file"
	case tNewline:
		return "the end of the line"
	case tIndent:
		return "an indent"
	case tDedent:
		return "a dedent"
	case tString:
		return "a string"
	}
	return strconv.Quote(t.text)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errf("nested deeper than %d", maxDepth)
	}
	return nil
}
func (p *parser) leave() { p.depth-- }

func (p *parser) name() (string, error) {
	t := p.peek()
	if t.kind != tName {
		return "", p.errf("expected a name, found %s", describeTok(t))
	}
	p.next()
	return t.text, nil
}

func (p *parser) endLine() error {
	if p.isOp(";") {
		p.next()
	}
	t := p.peek()
	if t.kind == tNewline {
		p.next()
		return nil
	}
	if t.kind == tEOF || t.kind == tDedent {
		return nil
	}
	return p.errf("expected the end of the line, found %s", describeTok(t))
}

// block reads ":" NEWLINE INDENT stmts DEDENT, or ":" simple-stmt.
func (p *parser) block() ([]Stmt, error) {
	if err := p.expectOp(":"); err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if p.peek().kind != tNewline {
		s, err := p.simpleStmt()
		if err != nil {
			return nil, err
		}
		return []Stmt{s}, nil
	}
	p.next()
	if p.peek().kind != tIndent {
		return nil, p.errf("expected an indented block")
	}
	p.next()
	var out []Stmt
	for p.peek().kind != tDedent && p.peek().kind != tEOF {
		if p.peek().kind == tNewline {
			p.next()
			continue
		}
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if p.peek().kind == tDedent {
		p.next()
	}
	return out, nil
}

func (p *parser) stmt() (Stmt, error) {
	pos := p.at()
	t := p.peek()
	if t.kind != tName {
		return p.simpleStmt()
	}
	switch t.text {
	case "class":
		return p.classDef()
	case "def":
		return p.def()
	case "if":
		p.next()
		return p.ifRest(pos)
	case "for":
		p.next()
		target, err := p.targetList()
		if err != nil {
			return nil, err
		}
		if !p.isName("in") {
			return nil, p.errf("expected \"in\"")
		}
		p.next()
		iter, err := p.testList()
		if err != nil {
			return nil, err
		}
		body, err := p.block()
		if err != nil {
			return nil, err
		}
		return &For{P: pos, Target: target, Iter: iter, Body: body}, nil
	case "while":
		p.next()
		c, err := p.test()
		if err != nil {
			return nil, err
		}
		body, err := p.block()
		if err != nil {
			return nil, err
		}
		return &While{P: pos, Cond: c, Body: body}, nil
	case "with":
		p.next()
		item, err := p.test()
		if err != nil {
			return nil, err
		}
		if p.isName("as") {
			return nil, p.errf("with … as is not read")
		}
		body, err := p.block()
		if err != nil {
			return nil, err
		}
		return &With{P: pos, Item: item, Body: body}, nil
	}
	return p.simpleStmt()
}

func (p *parser) ifRest(pos Pos) (Stmt, error) {
	c, err := p.test()
	if err != nil {
		return nil, err
	}
	body, err := p.block()
	if err != nil {
		return nil, err
	}
	st := &If{P: pos, Cond: c, Body: body}
	switch {
	case p.isName("elif"):
		epos := p.at()
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		e, err := p.ifRest(epos)
		p.leave()
		if err != nil {
			return nil, err
		}
		st.Else = []Stmt{e}
	case p.isName("else"):
		p.next()
		st.Else, err = p.block()
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (p *parser) classDef() (Stmt, error) {
	pos := p.at()
	p.next()
	name, err := p.name()
	if err != nil {
		return nil, err
	}
	c := &ClassDef{P: pos, Name: name}
	if p.isOp("(") {
		p.next()
		for !p.isOp(")") {
			b, err := p.test()
			if err != nil {
				return nil, err
			}
			c.Bases = append(c.Bases, b)
			if p.isOp(",") {
				p.next()
			} else if !p.isOp(")") {
				return nil, p.errf("expected \",\" or \")\" in the bases of class %s", name)
			}
		}
		p.next()
	}
	body, err := p.block()
	if err != nil {
		return nil, err
	}
	for _, s := range body {
		switch s := s.(type) {
		case *Def:
			c.Methods = append(c.Methods, s)
		case *AnnDecl:
			c.Fields = append(c.Fields, s)
		case *Assign:
			c.Assigns = append(c.Assigns, s)
		case *Simple, *ExprStmt:
		default:
			return nil, &SyntaxError{File: p.file, Line: s.pos().Line, Msg: "unexpected statement in class " + name}
		}
	}
	return c, nil
}

func (p *parser) def() (Stmt, error) {
	pos := p.at()
	p.next()
	name, err := p.name()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	d := &Def{P: pos, Name: name}
	for !p.isOp(")") {
		if p.isOp("*") {
			p.next()
			if p.isOp(",") {
				p.next()
				continue
			}
		}
		pn, err := p.name()
		if err != nil {
			return nil, err
		}
		prm := Param{Name: pn}
		if p.isOp(":") {
			p.next()
			if prm.Type, err = p.test(); err != nil {
				return nil, err
			}
		}
		if p.isOp("=") {
			p.next()
			if prm.Default, err = p.test(); err != nil {
				return nil, err
			}
		}
		d.Params = append(d.Params, prm)
		if p.isOp(",") {
			p.next()
		} else if !p.isOp(")") {
			return nil, p.errf("expected \",\" or \")\" in the parameters of %s", name)
		}
	}
	p.next()
	if p.isOp("->") {
		p.next()
		if d.Returns, err = p.test(); err != nil {
			return nil, err
		}
	}
	if d.Body, err = p.block(); err != nil {
		return nil, err
	}
	return d, nil
}

func (p *parser) simpleStmt() (Stmt, error) {
	pos := p.at()
	t := p.peek()
	if t.kind == tName {
		switch t.text {
		case "pass", "break", "continue":
			p.next()
			return &Simple{P: pos, Word: t.text}, p.endLine()
		case "return":
			p.next()
			var v Expr
			if p.peek().kind != tNewline && p.peek().kind != tEOF && p.peek().kind != tDedent {
				var err error
				if v, err = p.testList(); err != nil {
					return nil, err
				}
			}
			return &Return{P: pos, Value: v}, p.endLine()
		case "raise":
			p.next()
			var v Expr
			if p.peek().kind != tNewline {
				var err error
				if v, err = p.test(); err != nil {
					return nil, err
				}
			}
			return &Raise{P: pos, X: v}, p.endLine()
		case "assert":
			p.next()
			x, err := p.test()
			if err != nil {
				return nil, err
			}
			a := &Assert{P: pos, X: x}
			if p.isOp(",") {
				p.next()
				if a.Msg, err = p.test(); err != nil {
					return nil, err
				}
			}
			return a, p.endLine()
		case "import", "from":
			text := ""
			for p.peek().kind != tNewline && p.peek().kind != tEOF {
				text += p.next().text + " "
			}
			return &Import{P: pos, Text: text}, p.endLine()
		case "global", "nonlocal", "del", "lambda", "yield", "async", "await", "try":
			return nil, p.errf("%q is not part of TorchScript", t.text)
		}
	}
	x, err := p.testList()
	if err != nil {
		return nil, err
	}
	switch {
	case p.isOp("="):
		p.next()
		v, err := p.testList()
		if err != nil {
			return nil, err
		}
		a := &Assign{P: pos, Target: x, Value: v}
		// chained a = b = c: the rightmost value, the first target
		for p.isOp("=") {
			p.next()
			if a.Value, err = p.testList(); err != nil {
				return nil, err
			}
		}
		return a, p.endLine()
	case p.isOp(":"):
		p.next()
		typ, err := p.test()
		if err != nil {
			return nil, err
		}
		var v Expr
		if p.isOp("=") {
			p.next()
			if v, err = p.testList(); err != nil {
				return nil, err
			}
		}
		if n, ok := x.(*Name); ok {
			if v == nil {
				return &AnnDecl{P: pos, Name: n.ID, Type: typ}, p.endLine()
			}
			return &Assign{P: pos, Target: x, Type: typ, Value: v}, p.endLine()
		}
		return nil, p.errf("an annotation on something other than a name")
	case p.peek().kind == tOp && len(p.peek().text) >= 2 && p.peek().text[len(p.peek().text)-1] == '=' &&
		p.peek().text != "==" && p.peek().text != "!=" && p.peek().text != "<=" && p.peek().text != ">=":
		op := p.next().text
		v, err := p.testList()
		if err != nil {
			return nil, err
		}
		return &AugAssign{P: pos, Target: x, Op: op[:len(op)-1], Value: v}, p.endLine()
	}
	return &ExprStmt{P: pos, X: x}, p.endLine()
}

// targetList reads the target of a for loop (names, tuples), stopping at
// "in".
func (p *parser) targetList() (Expr, error) {
	pos := p.at()
	var elts []Expr
	trailing := false
	for {
		x, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, x)
		if !p.isOp(",") {
			break
		}
		p.next()
		trailing = true
		if p.isName("in") {
			break
		}
		trailing = false
	}
	if len(elts) == 1 && !trailing {
		return elts[0], nil
	}
	return &Tuple{P: pos, Elts: elts}, nil
}

// testList reads a, b, … (a tuple without brackets when there is a
// comma).
func (p *parser) testList() (Expr, error) {
	pos := p.at()
	x, err := p.test()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return x, nil
	}
	elts := []Expr{x}
	for p.isOp(",") {
		p.next()
		if p.endsList() {
			break
		}
		y, err := p.test()
		if err != nil {
			return nil, err
		}
		elts = append(elts, y)
	}
	return &Tuple{P: pos, Elts: elts}, nil
}

func (p *parser) endsList() bool {
	t := p.peek()
	if t.kind == tNewline || t.kind == tEOF || t.kind == tDedent {
		return true
	}
	return t.kind == tOp && (t.text == "=" || t.text == ")" || t.text == "]" || t.text == "}" || t.text == ":" || t.text == ";")
}

func (p *parser) test() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	pos := p.at()
	x, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if p.isName("if") {
		p.next()
		c, err := p.orTest()
		if err != nil {
			return nil, err
		}
		if !p.isName("else") {
			return nil, p.errf("expected \"else\" in a conditional expression")
		}
		p.next()
		b, err := p.test()
		if err != nil {
			return nil, err
		}
		return &Cond{P: pos, C: c, A: x, B: b}, nil
	}
	return x, nil
}

func (p *parser) orTest() (Expr, error) { return p.wordChain("or", p.andTest) }

func (p *parser) andTest() (Expr, error) { return p.wordChain("and", p.notTest) }

// wordChain parses sub (word sub)*, left-associative: the `or` and `and`
// levels.
func (p *parser) wordChain(word string, sub func() (Expr, error)) (Expr, error) {
	x, err := sub()
	if err != nil {
		return nil, err
	}
	for p.isName(word) {
		pos := p.at()
		p.next()
		y, err := sub()
		if err != nil {
			return nil, err
		}
		x = &Binary{P: pos, Op: word, X: x, Y: y}
	}
	return x, nil
}

func (p *parser) notTest() (Expr, error) {
	if p.isName("not") {
		pos := p.at()
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.notTest()
		if err != nil {
			return nil, err
		}
		return &Unary{P: pos, Op: "not", X: x}, nil
	}
	return p.comparison()
}

func (p *parser) comparison() (Expr, error) {
	x, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	for {
		pos := p.at()
		op := ""
		t := p.peek()
		switch {
		case t.kind == tOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="):
			op = t.text
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("is"):
			p.next()
			op = "is"
			if p.isName("not") {
				p.next()
				op = "is not"
			}
		case p.isName("not") && p.peekAt(1).kind == tName && p.peekAt(1).text == "in":
			p.next()
			p.next()
			op = "not in"
		default:
			return x, nil
		}
		y, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		x = &Binary{P: pos, Op: op, X: x, Y: y}
	}
}

// binary levels, lowest first
var levels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}}

func (p *parser) orExpr() (Expr, error) { return p.binLevel(0) }

func (p *parser) binLevel(l int) (Expr, error) {
	if l == len(levels) {
		return p.unary()
	}
	x, err := p.binLevel(l + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		found := ""
		if t.kind == tOp {
			for _, o := range levels[l] {
				if t.text == o {
					found = o
				}
			}
		}
		if found == "" {
			return x, nil
		}
		pos := p.at()
		p.next()
		y, err := p.binLevel(l + 1)
		if err != nil {
			return nil, err
		}
		x = &Binary{P: pos, Op: found, X: x, Y: y}
	}
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		pos := p.at()
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Unary{P: pos, Op: t.text, X: x}, nil
	}
	x, err := p.power()
	if err != nil {
		return nil, err
	}
	return x, nil
}

func (p *parser) power() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.isOp("**") {
		pos := p.at()
		p.next()
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Binary{P: pos, Op: "**", X: x, Y: y}, nil
	}
	return x, nil
}

func (p *parser) primary() (Expr, error) {
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	for n := 0; ; n++ {
		if n > 10000 {
			return nil, p.errf("a chain of more than 10000 calls or attributes")
		}
		pos := p.at()
		switch {
		case p.isOp("."):
			p.next()
			name, err := p.name()
			if err != nil {
				return nil, err
			}
			x = &Attr{P: pos, X: x, Name: name}
		case p.isOp("("):
			p.next()
			c := &Call{P: pos, Fn: x}
			for !p.isOp(")") {
				if p.peek().kind == tName && p.peekAt(1).kind == tOp && p.peekAt(1).text == "=" {
					k := p.next().text
					p.next()
					v, err := p.test()
					if err != nil {
						return nil, err
					}
					c.Kw = append(c.Kw, Keyword{Name: k, Value: v})
				} else {
					if p.isOp("*") {
						return nil, p.errf("star arguments are not read")
					}
					v, err := p.test()
					if err != nil {
						return nil, err
					}
					c.Args = append(c.Args, v)
				}
				if p.isOp(",") {
					p.next()
				} else if !p.isOp(")") {
					return nil, p.errf("expected \",\" or \")\" in a call, found %s", describeTok(p.peek()))
				}
			}
			p.next()
			x = c
		case p.isOp("["):
			p.next()
			idx, err := p.subscript()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("]"); err != nil {
				return nil, err
			}
			x = &Subscript{P: pos, X: x, Index: idx}
		default:
			return x, nil
		}
	}
}

func (p *parser) subscript() (Expr, error) {
	pos := p.at()
	var elts []Expr
	for {
		e, err := p.sliceItem()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
		if !p.isOp(",") {
			break
		}
		p.next()
		if p.isOp("]") {
			break
		}
	}
	if len(elts) == 1 {
		return elts[0], nil
	}
	return &Tuple{P: pos, Elts: elts}, nil
}

func (p *parser) sliceItem() (Expr, error) {
	pos := p.at()
	var lo Expr
	var err error
	if !p.isOp(":") {
		if lo, err = p.test(); err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return lo, nil
		}
	}
	s := &Slice{P: pos, Lo: lo}
	p.next()
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		if s.Hi, err = p.test(); err != nil {
			return nil, err
		}
	}
	if p.isOp(":") {
		p.next()
		if !p.isOp("]") && !p.isOp(",") {
			if s.Step, err = p.test(); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func (p *parser) atom() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	pos := p.at()
	t := p.peek()
	switch t.kind {
	case tName:
		p.next()
		switch t.text {
		case "None":
			return &Const{P: pos, Val: nil}, nil
		case "True":
			return &Const{P: pos, Val: true}, nil
		case "False":
			return &Const{P: pos, Val: false}, nil
		}
		return &Name{P: pos, ID: t.text}, nil
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.text, 0, 64)
		if err != nil {
			return nil, &SyntaxError{File: p.file, Line: t.line, Msg: fmt.Sprintf("integer %s out of range", t.text)}
		}
		return &Const{P: pos, Val: v}, nil
	case tFloat:
		p.next()
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, &SyntaxError{File: p.file, Line: t.line, Msg: fmt.Sprintf("bad number %s", t.text)}
		}
		return &Const{P: pos, Val: v}, nil
	case tString:
		s := ""
		for p.peek().kind == tString { // adjacent literals concatenate
			s += p.next().text
		}
		return &Const{P: pos, Val: s}, nil
	case tOp:
		switch t.text {
		case "(":
			p.next()
			if p.isOp(")") {
				p.next()
				return &Tuple{P: pos}, nil
			}
			x, err := p.test()
			if err != nil {
				return nil, err
			}
			if p.isOp(")") {
				p.next()
				return x, nil
			}
			elts := []Expr{x}
			for p.isOp(",") {
				p.next()
				if p.isOp(")") {
					break
				}
				y, err := p.test()
				if err != nil {
					return nil, err
				}
				elts = append(elts, y)
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return &Tuple{P: pos, Elts: elts}, nil
		case "[":
			p.next()
			l := &List{P: pos}
			for !p.isOp("]") {
				y, err := p.test()
				if err != nil {
					return nil, err
				}
				if p.isName("for") {
					return nil, p.errf("list comprehensions are not read")
				}
				l.Elts = append(l.Elts, y)
				if p.isOp(",") {
					p.next()
				} else if !p.isOp("]") {
					return nil, p.errf("expected \",\" or \"]\" in a list")
				}
			}
			p.next()
			return l, nil
		case "{":
			p.next()
			d := &Dict{P: pos}
			for !p.isOp("}") {
				k, err := p.test()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.test()
				if err != nil {
					return nil, err
				}
				d.Keys = append(d.Keys, k)
				d.Values = append(d.Values, v)
				if p.isOp(",") {
					p.next()
				} else if !p.isOp("}") {
					return nil, p.errf("expected \",\" or \"}\" in a dict")
				}
			}
			p.next()
			return d, nil
		case "...":
			p.next()
			return &Const{P: pos, Val: nil}, nil
		}
	}
	return nil, p.errf("unexpected %s", describeTok(t))
}
