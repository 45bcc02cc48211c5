package main

import (
	"github.com/spf13/cobra"
)

// commands lists the subcommands; each lives in its own file.
func commands() []*cobra.Command {
	builtins := builtinPlugins()
	return []*cobra.Command{
		newOpsCmd(), newTargetsCmd(),
		newInspectCmd(), newCheckCmd(), newConvertCmd(builtins),
		newOpsetCmd(), newInferCmd(),
		newRunCmd(), newTestCmd(), newTestWorkerCmd(),
		newVerifyCmd(builtins), newReduceCmd(builtins),
		newBatchCmd(builtins), newServeCmd(builtins),
		newBenchCmd(),
		newOptimizeCmd(), newFP16Cmd(), newQuantizeCmd(),
		newFormatsCmd(builtins), newPluginsCmd(builtins), newPluginServeCmd(builtins),
		newRuntimesCmd(),
	}
}
