// Command onnxconv converts, adapts, runs and verifies ONNX models.
//
// The command line is thin: every command is a few calls into the library
// packages (canonical, opset, executor, verify, plugins, importers,
// exporters). Exit codes: 0 success; 1 the models are not equivalent or the
// model is invalid; 2 bad usage or unreadable input; 3 written but not
// verified; 4 the model uses something onnxconv does not support;
// 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/onnxconv/onnxconv/internal/suggest"

	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/version"
)

// Exit codes.
const (
	exitOK       = 0
	exitInvalid  = 1 // not equivalent, or the model is invalid
	exitBadInput = 2 // bad usage or unreadable input
	// exitNotVerified: the result was written, but nothing could check it
	// against its source (no reference runtime or predictor for the
	// format).
	exitNotVerified = 3
	// exitUnsupported: the model uses something onnxconv cannot map yet
	// (an operator or construct an importer, the version converter or an
	// exporter has no mapping for); the message lists every one.
	exitUnsupported = 4
	// exitInterrupted: Ctrl-C (SIGINT) or SIGTERM ended the run; plugin
	// processes were stopped and temporary files removed.
	exitInterrupted = 130
)

// exitError carries an exit code out of a command. Commands return
// invalidf / badInputf errors; anything else is a bad-input error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// invalid wraps err so the command exits with code 1.
func invalid(err error) error { return &exitError{code: exitInvalid, err: err} }

// badInput wraps err so the command exits with code 2.
func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

// silentExit makes the command exit with code without printing anything
// more (the command already reported).
func silentExit(code int) error { return &exitError{code: code} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	// An interrupt cancels the command's context: plugin processes are
	// stopped, temporary files removed, and the exit code is 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "onnxconv: interrupted")
		return exitInterrupted
	}
	if err == nil {
		return exitOK
	}
	code := exitBadInput
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	} else if pipeline.KindOf(err) == pipeline.KindInvalid {
		code = exitInvalid
	}
	fmt.Fprintf(stderr, "onnxconv: %v\n", err)
	return code
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "onnxconv",
		Short:         "Model conversion and interop gateway for ONNX",
		Long:          "onnxconv imports framework models into ONNX, moves them between opsets, runs them and proves with numbers that they still compute what they computed before.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the module version and VCS revision.
		Version: version.Get().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetHelpTemplate(helpTemplate)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if s := flagSuggestion(c, err); s != "" {
			return badInput(fmt.Errorf("%w; did you mean --%s? (see '%s --help')", err, s, c.CommandPath()))
		}
		return badInput(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	root.AddCommand(commands()...)
	return root
}

// flagSuggestion returns the name of the command's flag nearest to the
// unknown long flag of err ("" when err is not an unknown flag or nothing
// is near enough to be a typo).
func flagSuggestion(c *cobra.Command, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedName() == "" {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return suggest.Closest(ne.GetSpecifiedName(), names)
}

// helpTemplate puts what a user looks for first: the one-line summary, then
// Usage, the examples and the flags, and the longer description last (the
// full prose is in docs/).
const helpTemplate = `{{with .Short}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{if and .Long (ne .Long .Short)}}
{{.Long | trimTrailingWhitespaces}}
{{end}}`
