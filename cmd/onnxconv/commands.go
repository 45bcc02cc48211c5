package main

import "github.com/spf13/cobra"

// commands lists the subcommands; each lives in its own file.
func commands() []*cobra.Command {
	return []*cobra.Command{
		newOpsCmd(), newTargetsCmd(),
		newInspectCmd(), newCheckCmd(), newConvertCmd(),
		newOpsetCmd(), newInferCmd(),
		newRunCmd(), newTestCmd(), newTestWorkerCmd(),
		newVerifyCmd(),
	}
}
