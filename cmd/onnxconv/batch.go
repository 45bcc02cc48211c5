package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// newBatchCmd returns `onnxconv batch MANIFEST --out DIR` and `onnxconv
// batch merge DIR... -o REPORT`, thin shells over batch.Run and
// batch.Merge.
func newBatchCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		out, shard, cache string
		jobs              int
		strict, quiet     bool
		allowOutside      bool
	)
	cmd := &cobra.Command{
		Use:   "batch MANIFEST --out DIR [--shard I/N] [--jobs J] [--cache DIR] [--allow-outside]",
		Short: "Run a manifest of jobs over a model collection, sharded; 'batch merge' joins the shards' results",
		Long: `batch runs the jobs a manifest lists (YAML or JSON; see docs/batch.md and
docs/batch.schema.json): models by path or glob, relative to the manifest's
folder, and what to do with each (opset: a list of opsets, each converted
and verified against the source; targets; plan; check; reference).

The jobs are spread over shards deterministically (a stable hash, balanced
by file size). The shard is --shard I/N (I from 0), else taken from the
scheduler's environment: ONNXCONV_SHARD=I/N, JOB_COMPLETION_INDEX with
JOB_COMPLETIONS (Kubernetes Indexed Jobs), CI_NODE_INDEX/CI_NODE_TOTAL
(GitLab parallel), SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (Slurm
arrays); else the whole manifest runs.

Progress goes to standard error: each job's steps as "job I of N (JOB,
ELAPSED): STEP", a heartbeat while a step runs (as convert's: a status
line on a terminal, a timed line every 10 s elsewhere), and each job's
result as "[DONE/TOTAL] STATUS JOB"; -q prints none of it.

Each job's result is one JSON line in DIR/jobs/, written atomically: a
shard that is killed and run again resumes where it stopped. --cache DIR
reuses results keyed by the model's content hash, the job's options and
the tool version. --jobs J runs J jobs at once.

Exit status: 0 when every job of the shard has a result (whatever it is;
'batch merge' gives the verdict), 1 with --strict when a job failed, 2 for
a bad manifest or option or a folder that cannot be written.`,
		Example: `  onnxconv batch models.yaml --out results --jobs 4 --cache ~/.cache/onnxconv-batch
  onnxconv batch models.yaml --out results/shard-2 --shard 2/8
  onnxconv batch merge results/shard-* -o report.html -o report.md -o junit.xml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return badInput(errors.New("batch: give the output folder with --out DIR"))
			}
			if jobs < 1 {
				return badInput(fmt.Errorf("batch: --jobs %d: give at least 1", jobs))
			}
			sh, source, err := batch.ResolveShard(shard, os.Getenv)
			if err != nil {
				return badInput(fmt.Errorf("batch: %w", err))
			}
			m, err := batch.LoadManifest(args[0])
			if err != nil {
				return badInput(err)
			}
			m.AllowOutside = allowOutside
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			env, err := newEnv(ctx, builtins)
			if err != nil {
				return badInput(fmt.Errorf("batch: %w", err))
			}
			stderr := cmd.ErrOrStderr()
			if source != "" {
				fmt.Fprintf(stderr, "batch: shard %s (from %s)\n", sh, source)
			}
			opts := batch.Options{Out: out, Shard: sh, Jobs: jobs, Cache: cache, Env: env, Plugins: pluginHostOptions(builtins)}
			if !quiet {
				// Each job's steps and the heartbeat of the running step
				// (as convert's), then each job's result.
				pr := cmdProgress(stderr, false)
				defer pr.close()
				opts.Step = func(s batch.Step) { pr.logf("%s", s) }
				opts.Progress = func(e batch.Event) { pr.logf("%s", e) }
			}
			sum, err := batch.Run(ctx, m, opts)
			if sum != nil {
				fmt.Fprintln(cmd.OutOrStdout(), sum.String())
			}
			if err != nil {
				return badInput(err)
			}
			if strict && sum.Failed() {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "output folder (job records, reports, plans)")
	fl.StringVar(&shard, "shard", "", "the shard to run, I/N with I from 0 (default: from the scheduler's environment)")
	fl.IntVar(&jobs, "jobs", 1, "jobs run at once")
	fl.StringVar(&cache, "cache", "", "folder of cached results, shareable between runs")
	fl.BoolVar(&strict, "strict", false, "exit 1 when a job of the shard failed")
	fl.BoolVar(&allowOutside, "allow-outside", false, "let the manifest name models, references and inputs outside its folder (absolute, .., symbolic links)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on standard error")
	cmd.AddCommand(newBatchMergeCmd())
	return cmd
}

// newBatchMergeCmd returns `onnxconv batch merge DIR... -o REPORT`.
func newBatchMergeCmd() *cobra.Command {
	var reports []string
	cmd := &cobra.Command{
		Use:   "merge DIR... -o REPORT [-o REPORT ...]",
		Short: "Merge the output folders of batch shards into one report",
		Long: `merge reads the job records of one or more 'onnxconv batch' output folders
and writes one report per -o, by extension: .html (a filterable table of
every job, failures first, linking to each job's own report), .md (for a
pull request comment), .xml (JUnit, one test case per job), .json. A job
that a shard planned but did not finish counts as missing.

Exit status: 0 when every job passed, 1 when a job failed, errored or is
missing, 2 when a folder cannot be read or a report written.`,
		Example: `  onnxconv batch merge shard-0 shard-1 shard-2 shard-3 -o report.html -o report.md -o junit.xml`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(reports) == 0 {
				return badInput(errors.New("batch merge: give the report with -o REPORT (.html, .md, .xml, .json)"))
			}
			for _, r := range reports {
				if err := batch.CheckMergedPath(r); err != nil {
					return badInput(err)
				}
			}
			m, err := batch.Merge(args)
			if err != nil {
				return badInput(err)
			}
			for _, r := range reports {
				if err := batch.WriteMerged(r, m); err != nil {
					return badInput(err)
				}
			}
			fmt.Fprintln(cmd.OutOrStdout(), m.Totals.String())
			if m.Failed() {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&reports, "output", "o", nil, "report to write (.html, .md, .xml, .json); repeatable")
	return cmd
}
