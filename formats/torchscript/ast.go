package torchscript

// The AST of TorchScript source (code/__torch__/….py): a small, typed
// subset of Python as torch.jit.save prints it. Nothing here is evaluated;
// the importer walks it to build a graph.

// Pos is a line in a source file, for messages.
type Pos struct {
	File string
	Line int
}

// Expr is an expression node.
type Expr interface{ pos() Pos }

// Stmt is a statement node.
type Stmt interface{ pos() Pos }

type (
	// Name is an identifier.
	Name struct {
		P  Pos
		ID string
	}
	// Const is a literal: int64, float64, string, bool or nil (None).
	Const struct {
		P   Pos
		Val any
	}
	// Attr is X.Name.
	Attr struct {
		P    Pos
		X    Expr
		Name string
	}
	// Call is Fn(Args..., Kw...).
	Call struct {
		P    Pos
		Fn   Expr
		Args []Expr
		Kw   []Keyword
	}
	// Subscript is X[Index]; Index may be a *Slice or a *Tuple.
	Subscript struct {
		P     Pos
		X     Expr
		Index Expr
	}
	// Slice is lo:hi:step inside a subscript; absent parts are nil.
	Slice struct {
		P            Pos
		Lo, Hi, Step Expr
	}
	// Tuple is (a, b, …).
	Tuple struct {
		P    Pos
		Elts []Expr
	}
	// List is [a, b, …].
	List struct {
		P    Pos
		Elts []Expr
	}
	// Dict is {k: v, …}.
	Dict struct {
		P            Pos
		Keys, Values []Expr
	}
	// Unary is Op X: "-", "+", "not", "~".
	Unary struct {
		P  Pos
		Op string
		X  Expr
	}
	// Binary is X Op Y: arithmetic, comparisons, "and", "or", "is",
	// "is not", "in", "not in".
	Binary struct {
		P    Pos
		Op   string
		X, Y Expr
	}
	// Cond is A if C else B.
	Cond struct {
		P       Pos
		C, A, B Expr
	}
)

// Keyword is name=value in a call.
type Keyword struct {
	Name  string
	Value Expr
}

type (
	// Assign is Targets = Value (a tuple target unpacks); Type is an
	// annotation (x : T = v) or nil.
	Assign struct {
		P      Pos
		Target Expr
		Type   Expr
		Value  Expr
	}
	// AugAssign is Target Op= Value.
	AugAssign struct {
		P      Pos
		Target Expr
		Op     string
		Value  Expr
	}
	// AnnDecl is a class-level field declaration "name : T" (Value nil)
	// or a Final constant "name : Final[T] = v".
	AnnDecl struct {
		P     Pos
		Name  string
		Type  Expr
		Value Expr
	}
	// ExprStmt is an expression evaluated for its effect.
	ExprStmt struct {
		P Pos
		X Expr
	}
	// If is if Cond: Body else: Else.
	If struct {
		P          Pos
		Cond       Expr
		Body, Else []Stmt
	}
	// For is for Target in Iter: Body.
	For struct {
		P      Pos
		Target Expr
		Iter   Expr
		Body   []Stmt
	}
	// While is while Cond: Body.
	While struct {
		P    Pos
		Cond Expr
		Body []Stmt
	}
	// With is with Item: Body.
	With struct {
		P    Pos
		Item Expr
		Body []Stmt
	}
	// Return is return Value (nil: None).
	Return struct {
		P     Pos
		Value Expr
	}
	// Simple is pass, break or continue.
	Simple struct {
		P    Pos
		Word string
	}
	// Raise is raise X.
	Raise struct {
		P Pos
		X Expr
	}
	// Assert is assert X, Msg.
	Assert struct {
		P      Pos
		X, Msg Expr
	}
	// Import is an import statement (recorded, never followed).
	Import struct {
		P    Pos
		Text string
	}
	// Def is a function or method.
	Def struct {
		P       Pos
		Name    string
		Params  []Param
		Returns Expr
		Body    []Stmt
	}
	// ClassDef is a class: its bases, field declarations, constants and
	// methods.
	ClassDef struct {
		P      Pos
		Name   string
		Bases  []Expr
		Fields []*AnnDecl
		// Assigns are class-level assignments (__parameters__ = [...]).
		Assigns []*Assign
		Methods []*Def
	}
)

// Param is one parameter of a Def.
type Param struct {
	Name    string
	Type    Expr
	Default Expr
}

func (x *Name) pos() Pos      { return x.P }
func (x *Const) pos() Pos     { return x.P }
func (x *Attr) pos() Pos      { return x.P }
func (x *Call) pos() Pos      { return x.P }
func (x *Subscript) pos() Pos { return x.P }
func (x *Slice) pos() Pos     { return x.P }
func (x *Tuple) pos() Pos     { return x.P }
func (x *List) pos() Pos      { return x.P }
func (x *Dict) pos() Pos      { return x.P }
func (x *Unary) pos() Pos     { return x.P }
func (x *Binary) pos() Pos    { return x.P }
func (x *Cond) pos() Pos      { return x.P }
func (x *Assign) pos() Pos    { return x.P }
func (x *AugAssign) pos() Pos { return x.P }
func (x *AnnDecl) pos() Pos   { return x.P }
func (x *ExprStmt) pos() Pos  { return x.P }
func (x *If) pos() Pos        { return x.P }
func (x *For) pos() Pos       { return x.P }
func (x *While) pos() Pos     { return x.P }
func (x *With) pos() Pos      { return x.P }
func (x *Return) pos() Pos    { return x.P }
func (x *Simple) pos() Pos    { return x.P }
func (x *Raise) pos() Pos     { return x.P }
func (x *Assert) pos() Pos    { return x.P }
func (x *Import) pos() Pos    { return x.P }
func (x *Def) pos() Pos       { return x.P }
func (x *ClassDef) pos() Pos  { return x.P }

// PosOf returns where a node is.
func PosOf(n interface{ pos() Pos }) Pos { return n.pos() }

// Module is one parsed source file: its classes and free functions.
type Module struct {
	File    string
	Classes []*ClassDef
	Funcs   []*Def
	Imports []*Import
}
