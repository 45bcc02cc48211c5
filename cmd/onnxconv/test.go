package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// testWorkerCmd is the hidden subcommand `onnxconv test` starts to run
// cases in (backendtest.RunIsolated): a panic inside a GoMLX worker
// goroutine ends the process, so each case runs in a child that the
// parent restarts when it dies.
const testWorkerCmd = "__testworker"

// newTestCmd returns `onnxconv test DIR... [--json] [--jobs N] [--markdown FILE]`.
func newTestCmd() *cobra.Command {
	var (
		asJSON   bool
		jobs     int
		markdown string
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "test DIR...",
		Short: "Run ONNX backend-test cases with the built-in executor",
		Long: `Run ONNX backend-test folders (model.onnx + test_data_set_*/input_N.pb,
output_N.pb) with the built-in executor and compare with the expected
outputs as the ONNX backend runner does (rtol 1e-3, atol 1e-7; integers,
booleans and strings exactly). DIR is a case folder or a folder of cases.
Cases run in worker subprocesses (a crash fails one case, not the run).
The last line is 'N passed, N failed, N skipped'.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cases, err := backendtest.FindCases(args)
			if err != nil {
				return badInput(err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the onnxconv executable to start test workers: %w", err)
			}
			if timeout < 0 {
				return badInput(fmt.Errorf("--timeout %s: must not be negative", timeout))
			}
			opts := backendtest.PoolOptions{Jobs: jobs, Timeout: timeout, Command: []string{exe, testWorkerCmd}}
			results, err := backendtest.RunIsolated(cmd.Context(), cases, opts, func(r backendtest.Result) {
				if !asJSON {
					fmt.Fprintln(cmd.OutOrStdout(), r.Line())
				}
			})
			if err != nil {
				return err
			}
			t := backendtest.Tally(results)
			if markdown != "" {
				err := canonical.WriteFileAtomic(markdown, func(w io.Writer) error {
					return backendtest.WriteMarkdown(w, backendtest.MarkdownCommand(args), results)
				})
				if err != nil {
					return badInput(err)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"results": results, "passed": t.Passed, "failed": t.Failed, "skipped": t.Skipped}); err != nil {
					return fmt.Errorf("writing JSON: %w", err)
				}
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), t.String())
			}
			if t.Failed > 0 {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the results as JSON")
	cmd.Flags().IntVar(&jobs, "jobs", 2, "number of worker processes")
	cmd.Flags().StringVar(&markdown, "markdown", "", "also write a Markdown conformance report to this file")
	cmd.Flags().DurationVar(&timeout, "timeout", 120*time.Second, "time limit per case (0 for none)")
	return cmd
}

// newTestWorkerCmd is the hidden worker: one JSON request per line on
// stdin, one JSON result per line on stdout (backendtest.ServeWorker).
func newTestWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    testWorkerCmd,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := backendtest.ServeWorker(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
				return badInput(err)
			}
			return nil
		},
	}
}
