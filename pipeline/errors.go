package pipeline

import (
	"errors"
	"fmt"
)

// Kind classifies a pipeline error.
type Kind int

const (
	// KindUsage is a bad option or argument: nothing was read.
	KindUsage Kind = iota + 1
	// KindInput is an input that cannot be read, imported or run.
	KindInput
	// KindInvalid is a model that is invalid, that the requested opset or
	// target cannot express, or a result that is not equivalent.
	KindInvalid
)

func (k Kind) String() string {
	switch k {
	case KindUsage:
		return "usage"
	case KindInput:
		return "input"
	case KindInvalid:
		return "invalid"
	}
	return "unknown"
}

// Error is the error of every job; use errors.As to read its Kind. Err
// keeps the underlying typed error (e.g. *unsupported.OpsError, which a
// blocked conversion and a target's violations unwrap to,
// *importers.OptionError) for errors.As.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usageErr(format string, args ...any) error {
	return &Error{Kind: KindUsage, Err: fmt.Errorf(format, args...)}
}

func inputErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Kind: KindInput, Err: err}
}

func invalidErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Kind: KindInvalid, Err: err}
}

// NotEquivalentError is a result whose verification failed. Result holds
// the reports.
type NotEquivalentError struct {
	Input  string
	Output string
	// Kept is where the result was written anyway (KeepFailed), or "".
	Kept   string
	Result *Result
}

func (e *NotEquivalentError) Error() string {
	s := fmt.Sprintf("%s: the result is not equivalent (see the summary)", e.Input)
	if e.Kept != "" {
		return s + fmt.Sprintf("; %s was not written, the result was kept as %s", e.Output, e.Kept)
	}
	return s + fmt.Sprintf("; nothing was written to %s (keep it for inspection with --keep-failed)", e.Output)
}

// OverwriteError is an output that would replace the input.
type OverwriteError struct{ Path string }

func (e *OverwriteError) Error() string {
	return fmt.Sprintf("%s: the output would overwrite the input; choose another output, or pass --force", e.Path)
}

// KindOf returns the Kind of err, or 0 when err is not a pipeline error.
func KindOf(err error) Kind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return 0
}
