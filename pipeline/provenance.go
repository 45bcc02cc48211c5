package pipeline

import (
	"os"
	"slices"
	"time"

	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/version"
)

// provenance describes this run for reports.
func provenance(command []string, start time.Time) verify.Provenance {
	v := version.Get()
	if command == nil {
		command = slices.Clone(os.Args)
	}
	return verify.Provenance{Tool: "onnxconv", Version: v.Short(), Revision: v.Revision, Command: command, Time: start.UTC()}
}
