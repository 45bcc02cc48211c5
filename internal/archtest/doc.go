// Package archtest holds the tests of the project's import graph: the
// layering rules of ARCHITECTURE.md that the compiler does not enforce.
package archtest
