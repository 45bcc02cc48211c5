// Package recovered is the error a reader or a pass returns for a panic
// it recovered from: a bug of onnxconv's on that input, not a fault of
// the input. Callers and tests tell it from an input's own error with
// errors.As, never by its text.
package recovered

import (
	"errors"
	"fmt"
)

// Error is a recovered panic. Pkg names the package ("tflite"), Doing
// what it was doing ("converting the model"; may be empty), Value the
// panic's value, and Stack the panicking goroutine's stack (nil when
// not kept).
type Error struct {
	Pkg, Doing string
	Value      any
	Stack      []byte
}

func (e *Error) Error() string {
	doing := ""
	if e.Doing != "" {
		doing = " " + e.Doing
	}
	s := fmt.Sprintf("%s: internal error%s (please report): %v", e.Pkg, doing, e.Value)
	if len(e.Stack) > 0 {
		s += "\n" + string(e.Stack)
	}
	return s
}

// Unwrap returns the panic's value when it is an error (a runtime error,
// say).
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// In reports whether err is, or wraps, a recovered panic.
func In(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
