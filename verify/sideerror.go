package verify

import (
	"errors"
	"fmt"
)

// SideError is one side of a comparison failing to run: the first side
// (A, the reference) or the second (B, the candidate), so that a caller
// can say which side failed, not only that the comparison did.
type SideError struct {
	// B is set when the second side failed.
	B bool
	// Name is the side's name; Where says the sample (and decode step).
	Name, Where string
	Err         error
}

func (e *SideError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("verify: running %s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("verify: running %s %s: %v", e.Name, e.Where, e.Err)
}

func (e *SideError) Unwrap() error { return e.Err }

// FailedB tells whether err is the second side's (the candidate's)
// failure to run a sample the first side ran.
func FailedB(err error) bool {
	var se *SideError
	return errors.As(err, &se) && se.B
}

// sideErr is a's (b false) or b's failure on sample si.
func sideErr(b bool, name string, si int, err error) error {
	return &SideError{B: b, Name: name, Where: fmt.Sprintf("on sample %d", si), Err: err}
}
