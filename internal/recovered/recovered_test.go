package recovered

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func recoverFrom(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("outer: %w", &Error{Pkg: "pkg", Doing: "reading", Value: r})
		}
	}()
	f()
	return nil
}

func TestError(t *testing.T) {
	err := recoverFrom(func() {
		var s []int
		_ = s[len(s)] // an index out of range: a runtime.Error
	})
	var re *Error
	if !errors.As(err, &re) || re.Pkg != "pkg" {
		t.Fatalf("errors.As(%v) found no *Error", err)
	}
	var rt runtime.Error
	if !errors.As(err, &rt) {
		t.Fatalf("the runtime error is not reachable through Unwrap: %v", err)
	}
	if got := re.Error(); !strings.HasPrefix(got, "pkg: internal error reading (please report): runtime error: index out of range") {
		t.Errorf("message %q", got)
	}
	if got := (&Error{Pkg: "infer", Value: "boom", Stack: []byte("stack")}).Error(); got != "infer: internal error (please report): boom\nstack" {
		t.Errorf("message %q", got)
	}
	if !In(err) || In(recoverFrom(func() {})) || In(errors.New("internal error")) {
		t.Errorf("In: a recovered panic, no panic, a plain error with the words")
	}
}
