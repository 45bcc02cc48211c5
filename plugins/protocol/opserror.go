package protocol

import (
	"encoding/json"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
)

// The ErrorInfo that carries an *unsupported.OpsError across the plugin
// boundary: its reason and domain, and the metadata key of its JSON.
const (
	opsReason = "UNSUPPORTED_OPS"
	opsDomain = "onnxconv"
	opsKey    = "ops"
)

// opsStatus returns the status of err with, when err is (or wraps) an
// *unsupported.OpsError, that error as a detail, so that the host can
// classify it with errors.As as it would an in-process importer's.
func opsStatus(code codes.Code, err error) error {
	st := status.New(code, err.Error())
	var ops *unsupported.OpsError
	if !errors.As(err, &ops) {
		return st.Err()
	}
	b, jerr := json.Marshal(ops)
	if jerr != nil {
		return st.Err()
	}
	withOps, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: opsReason, Domain: opsDomain, Metadata: map[string]string{opsKey: string(b)}})
	if derr != nil {
		return st.Err()
	}
	return withOps.Err()
}

// OpsError returns the *unsupported.OpsError a plugin sent with st, or nil.
func OpsError(st *status.Status) *unsupported.OpsError {
	if st == nil {
		return nil
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetReason() != opsReason || info.GetDomain() != opsDomain {
			continue
		}
		var ops unsupported.OpsError
		if json.Unmarshal([]byte(info.GetMetadata()[opsKey]), &ops) != nil || len(ops.Ops) == 0 {
			return nil
		}
		return &ops
	}
	return nil
}
