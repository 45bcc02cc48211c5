// Package version tells which build of onnxconv is running, from the
// module and VCS information the Go toolchain stamps into every binary
// (runtime/debug.ReadBuildInfo). It is what --version prints, what reports
// record and what a written model's producer_version says.
package version

import (
	"runtime/debug"
	"strings"
)

// Module is the path of the onnxconv module.
const Module = "github.com/onnxconv/onnxconv"

// Info describes one build.
type Info struct {
	// Version is the module version ("v0.3.0", a pseudo-version, or
	// "(devel)" for a build from a checkout).
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from, when known.
	Revision string `json:"revision,omitempty"`
	// Time is the commit time (RFC 3339), when known.
	Time string `json:"time,omitempty"`
	// Modified is true when the work tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version,omitempty"`
}

// Get reads the build information of the running binary. When onnxconv is
// a dependency of another program, the version is the one that program
// requires.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{GoVersion: bi.GoVersion}
	switch {
	case bi.Main.Path == Module:
		info.Version = bi.Main.Version
	default:
		for _, d := range bi.Deps {
			if d.Path == Module {
				info.Version = d.Version
				if d.Replace != nil && d.Replace.Version != "" {
					info.Version = d.Replace.Version
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// Short is the version with the first 12 characters of the revision, e.g.
// "(devel) 1a2b3c4d5e6f+dirty" or "v0.3.0".
func (i Info) Short() string {
	var b strings.Builder
	b.WriteString(i.Version)
	if i.Revision != "" && !strings.Contains(i.Version, shortRev(i.Revision)) {
		b.WriteString(" ")
		b.WriteString(shortRev(i.Revision))
		if i.Modified {
			b.WriteString("+dirty")
		}
	}
	return b.String()
}

// String is the full description printed by --version.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("onnxconv ")
	b.WriteString(i.Version)
	if i.Revision != "" {
		b.WriteString("\nrevision ")
		b.WriteString(i.Revision)
		if i.Modified {
			b.WriteString(" (modified)")
		}
		if i.Time != "" {
			b.WriteString(", ")
			b.WriteString(i.Time)
		}
	}
	if i.GoVersion != "" {
		b.WriteString("\nbuilt with ")
		b.WriteString(i.GoVersion)
	}
	return b.String()
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
