package testpaths

import "strings"

// crashSigns are what a Go program prints when it dies of a panic or a
// fatal runtime error (and exits 2, as a refusal may).
var crashSigns = []string{"panic:", "goroutine ", "fatal error:", "runtime error:"}

// CrashSign returns the first sign of a Go crash in a program's output
// ("panic:", a goroutine stack, "fatal error:"), or "" when there is none,
// so that a test that accepts a refusal's exit code (1 or 2) can tell it
// from a crash, which exits 2 too.
func CrashSign(out string) string {
	for _, s := range crashSigns {
		if strings.Contains(out, s) {
			return s
		}
	}
	return ""
}
