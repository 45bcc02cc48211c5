//go:build unix

package plugins

// The helpers of the internal tests that the tests of plugins/importhost
// (importhost_test.go, package plugins_test) share.
var (
	TestBuiltins = testBuiltins
	TestOptions  = testOptions
	NewTestHost  = newHost
)

// CSVGraphBin is the example plugin TestMain built.
func CSVGraphBin() string { return csvgraphBin }
