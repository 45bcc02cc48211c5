package xgboost

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// OldBinaryError is a file in xgboost's binary format of before 1.0
// (save_model to a name without .json, or save_raw()) that this build
// cannot convert: either no reader of that format is built in, or the
// reader refused the file (Err says why).
type OldBinaryError struct {
	Err error
}

func (e *OldBinaryError) Error() string {
	s := "XGBoost binary format from before 1.0: load it in xgboost (xgboost.Booster(model_file=PATH)) and save_model('model.json'), then convert model.json"
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

func (e *OldBinaryError) Unwrap() error { return e.Err }

// looksOldBinary reports whether data starts like xgboost's old binary
// model: an optional "binf" magic, the 136-byte LearnerModelParam, then
// the objective's name as a uint64 length and text ("binary:logistic").
func looksOldBinary(data []byte) bool {
	off := 136
	if bytes.HasPrefix(data, []byte("binf")) {
		off += 4
	}
	if len(data) < off+8 {
		return false
	}
	n := binary.LittleEndian.Uint64(data[off:])
	if n < 4 || n > 64 || uint64(len(data)-off-8) < n {
		return false
	}
	name := data[off+8 : off+8+int(n)]
	for _, p := range []string{"reg:", "binary:", "multi:", "rank:", "count:", "survival:"} {
		if bytes.HasPrefix(name, []byte(p)) {
			return true
		}
	}
	return false
}

// oldBinaryFallback turns the refusal err of a file in the old binary
// format into an *OldBinaryError that says how to convert it; other
// errors, and errors that already are one, pass unchanged.
func oldBinaryFallback(data []byte, err error) error {
	var ob *OldBinaryError
	if err == nil || errors.As(err, &ob) || !looksOldBinary(data) {
		return err
	}
	return &OldBinaryError{Err: err}
}
