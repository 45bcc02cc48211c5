package node

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/runtimes"
)

// NotInstalled turns err, a *MissingError of the runtime name, into a
// *runtimes.NotInstalledError whose message is one line naming the fix;
// other errors pass unchanged.
func NotInstalled(name string, err error) error {
	var me *MissingError
	if !errors.As(err, &me) {
		return err
	}
	line := fmt.Sprintf("the %s runtime is not installed: run '%s'", name, runtimes.InstallCommand)
	if me.What == "node" {
		line = fmt.Sprintf("the %s runtime needs Node.js, which was not found (Debian: apt-get install nodejs), then '%s'", name, runtimes.InstallCommand)
	}
	return &runtimes.NotInstalledError{Runtime: name, Line: line, Err: err}
}
