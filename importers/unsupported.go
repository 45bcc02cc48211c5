package importers

import "github.com/onnxconv/onnxconv/canonical/unsupported"

// UnsupportedOpsError is the one error shape for a model that uses
// operators an importer (or any other step) cannot map: every one at once,
// with its node and reason. It lives in canonical/unsupported, a leaf that
// exporters and runtimes import too; collect with Add and end with
// `return errs.Err()`; classify with errors.As.
type UnsupportedOpsError = unsupported.OpsError

// UnsupportedOp is one entry of an UnsupportedOpsError.
type UnsupportedOp = unsupported.Op
