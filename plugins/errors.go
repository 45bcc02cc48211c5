package plugins

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of plugin failure, matched with errors.Is on a *PluginError.
var (
	// ErrTimeout: the call did not finish within its time limit; the plugin
	// was killed.
	ErrTimeout = errors.New("plugin timed out")
	// ErrCrashed: the plugin process ended during the call (a panic, a
	// fatal error, os.Exit, a signal).
	ErrCrashed = errors.New("plugin crashed")
	// ErrMemoryLimit: the plugin process ran out of its memory limit.
	ErrMemoryLimit = errors.New("plugin exceeded its memory limit")
	// ErrStart: the executable could not be run at all (missing, not
	// executable, wrong architecture).
	ErrStart = errors.New("plugin could not be started")
	// ErrHandshake: the executable did not start as an onnxconv plugin of
	// this protocol version.
	ErrHandshake = errors.New("plugin handshake failed")
	// ErrFailed: the plugin answered with an error (for example the input
	// is invalid).
	ErrFailed = errors.New("plugin reported an error")
	// ErrBadOutput: the plugin reported success but its output is missing
	// or invalid.
	ErrBadOutput = errors.New("plugin output is invalid")
	// ErrUnsupported: the plugin does not serve what was asked (no
	// importer, no exporter).
	ErrUnsupported = errors.New("plugin does not support the operation")
)

// ErrNotFound is returned when no plugin has the requested name.
var ErrNotFound = errors.New("no such plugin")

// ErrNoMatch is returned by Detect when no importer recognizes a file.
var ErrNoMatch = errors.New("no importer recognizes the file")

// PluginError is the error of a failed plugin call. It names the plugin and
// the input file.
type PluginError struct {
	Plugin string // plugin name
	Path   string // plugin executable
	Op     string // "import", "export", "detect", "describe"
	Input  string // input file, "" for describe
	Kind   error  // one of the Err* kinds above
	PID    int    // process id of the plugin, 0 if it did not start
	// Stderr is the end of what the plugin wrote on standard error (a
	// panic's stack trace, for example).
	Stderr string
	Err    error  // underlying error, may be nil
	Detail string // human-readable cause
}

func (e *PluginError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q failed to %s", e.Plugin, e.Op)
	if e.Input != "" {
		fmt.Fprintf(&b, " %s", e.Input)
	}
	b.WriteString(": ")
	if e.Detail != "" {
		b.WriteString(e.Detail)
	} else {
		b.WriteString(e.Kind.Error())
	}
	return b.String()
}

// Unwrap returns the kind and the underlying error.
func (e *PluginError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// crashPrefixes start the lines that explain a crash, best first: Go
// panics and fatal errors, then C-level failures in cgo processes.
var crashPrefixes = [][]string{
	{"panic: ", "fatal error: "},
	{"runtime/cgo: ", "SIGSEGV: ", "SIGABRT: ", "SIGBUS: ", "SIGILL: ", "SIGFPE: ", "terminate called", "Segmentation fault"},
}

// keyLine picks the line of a plugin's standard error that explains a
// crash: the panic or fatal error message, else the last line.
func keyLine(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for _, prefixes := range crashPrefixes {
		for _, l := range lines {
			l = strings.TrimSpace(l)
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					return truncate(l, 400)
				}
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return truncate(l, 400)
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
