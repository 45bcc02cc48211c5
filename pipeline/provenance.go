package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/version"
)

// provenance describes this run for reports.
func provenance(command []string, start time.Time) verify.Provenance {
	v := version.Get()
	if command == nil {
		command = slices.Clone(os.Args)
		// 'go run' starts a binary in a go-build temporary folder: the
		// report names the tool, not that path.
		if len(command) > 0 && strings.Contains(filepath.ToSlash(command[0]), "/go-build") {
			command[0] = "onnxconv"
		}
	}
	return verify.Provenance{Tool: "onnxconv", Version: v.Short(), Revision: v.Revision, Command: command, Time: start.UTC()}
}
