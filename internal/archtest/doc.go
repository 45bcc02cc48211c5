// Package archtest holds the tests of the project's import graph: the
// layering rules of docs/architecture.md that the compiler does not
// enforce, each checked through every chain of imports (as `go list
// -deps` lists them), and each shown to catch the import that breaks it.
package archtest
