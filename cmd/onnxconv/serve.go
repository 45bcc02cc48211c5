package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/serve"
)

// newServeCmd returns `onnxconv serve`, a thin shell over package serve.
func newServeCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		addr, data, tokens, cache, audit, keep string
		tlsCert, tlsKey                        string
		webhookHosts                           []string
		cfg                                    serve.Config
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080] [--data DIR] [--tokens FILE] [--workers N]",
		Short: "Run conversion jobs behind an HTTP API and a web page",
		Long: `serve runs onnxconv jobs for HTTP clients: POST /v1/jobs uploads a model (or a
folder as .zip/.tar/.tar.gz) with a spec in the vocabulary of a batch
manifest entry ({"convert": true}, {"opset": [13]}, {"targets": [...]} …);
GET /v1/jobs/ID polls it; GET /v1/jobs/ID/artifacts/NAME downloads the
converted model and the reports; DELETE /v1/jobs/ID cancels it. The page at
/ does the same from a browser. /v1/openapi.yaml documents the API;
/healthz, /readyz and /metrics (Prometheus) are for the platform.

Jobs are kept in DIR/jobs.db (bbolt): a restarted server loses nothing,
queued and interrupted jobs resume. With --store postgres://… replicas
share the jobs (and DIR, on a shared file system): each job runs on one
replica, and another takes it again when that replica dies. Imports run in plugin processes with
memory and time limits. Uploads over --max-upload are refused (413), a full
queue answers 429 with Retry-After.

Without --tokens the server binds only to loopback. With --tokens FILE
(lines "ID SHA256", made by 'onnxconv serve token ID'), every /v1 request
needs "Authorization: Bearer TOKEN". SIGTERM or Ctrl-C stops it gracefully
(exit code 0 once drained).
See docs/serve.md.`,
		Example: `  onnxconv serve --data /var/lib/onnxconv
  onnxconv serve token ci >> tokens && onnxconv serve --addr :8080 --tokens tokens
  curl -F model=@model.tflite -F 'spec={"opset":[13]}' http://127.0.0.1:8080/v1/jobs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tokens != "" {
				t, err := serve.LoadTokens(tokens)
				if err != nil {
					return badInput(err)
				}
				cfg.Tokens = t
			}
			if err := serve.CheckAddr(addr, cfg.Tokens != nil); err != nil {
				return badInput(err)
			}
			k, err := serve.ParseKeep(keep)
			if err != nil {
				return badInput(err)
			}
			cfg.Data, cfg.Cache, cfg.WebhookHosts, cfg.Keep = data, cache, webhookHosts, k
			switch audit {
			case "":
			case "-":
				cfg.Audit = cmd.ErrOrStderr()
			default:
				f, err := os.OpenFile(audit, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
				if err != nil {
					return badInput(fmt.Errorf("serve: audit log: %w", err))
				}
				defer f.Close()
				cfg.Audit = f
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			env, err := newEnv(ctx, builtins)
			if err != nil {
				return badInput(fmt.Errorf("serve: %w", err))
			}
			cfg.Env, cfg.Plugins = env, pluginHostOptions(builtins)
			// Bench jobs run in a process of their own, under the
			// plugins' memory limit.
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("serve: finding this program for bench jobs: %w", err)
			}
			cfg.BenchCommand = []string{self}
			return runServer(ctx, cmd.ErrOrStderr(), addr, tlsCert, tlsKey, cfg)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (non-loopback needs --tokens)")
	fl.StringVar(&data, "data", "onnxconv-serve", "folder of the job store, uploads, results and cache (replicas share it)")
	fl.StringVar(&cfg.Store, "store", "", "job store: a postgres:// URL replicas share (default: the bbolt file DATA/jobs.db)")
	fl.DurationVar(&cfg.Lease, "lease", 30*time.Second, "with a shared --store: how long a replica holds a job without renewing it (another takes it after)")
	fl.StringVar(&tokens, "tokens", "", "file of accepted bearer tokens, hashed (see 'onnxconv serve token')")
	fl.StringVar(&cache, "cache", "", "result cache folder, shareable with 'onnxconv batch --cache' (default DATA/cache)")
	fl.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	fl.StringVar(&tlsKey, "tls-key", "", "the certificate's private key (PEM)")
	fl.StringVar(&audit, "audit", "-", "file to append one JSON line per request to ('-': standard error, '': none)")
	fl.IntVar(&cfg.Workers, "workers", 2, "jobs run at once")
	fl.Int64Var(&cfg.MaxUpload, "max-upload", 1<<30, "largest upload in bytes (larger: 413)")
	fl.Int64Var(&cfg.MaxUnpacked, "max-unpacked", 4<<30, "largest total an uploaded archive may unpack to, in bytes")
	fl.IntVar(&cfg.QueueSize, "queue", 64, "jobs that may wait (more: 429)")
	fl.IntVar(&cfg.QuotaJobs, "quota-jobs", 0, "jobs one token may have queued or running (more: 429; 0: only --queue bounds them)")
	fl.Int64Var(&cfg.QuotaBytes, "quota-bytes", 0, "bytes one token's jobs may keep on disk (more: 413; 0: no bound)")
	fl.StringVar(&keep, "keep", "7d", "how long finished jobs are kept before the sweep deletes them (7d, 36h, forever)")
	fl.DurationVar(&cfg.JobTimeout, "job-timeout", 30*time.Minute, "time limit of one job")
	fl.StringArrayVar(&webhookHosts, "webhook-host", nil, "host[:port] a job's completion webhook may name; repeatable (default: none)")
	cmd.AddCommand(&cobra.Command{
		Use:   "token ID",
		Short: "Print a new bearer token and the line of the tokens file that accepts it",
		Long: `token makes a random token for ID. It prints the token on standard error
(give it to the client; it is not stored) and the tokens-file line, "ID
SHA256-of-token", on standard output:

  onnxconv serve token ci >> tokens`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tok, line, err := serve.NewToken(args[0])
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "token for %s (shown once): %s\n", args[0], tok)
			fmt.Fprintln(cmd.OutOrStdout(), line)
			return nil
		},
	})
	return cmd
}

// runServer serves until ctx ends, then shuts down gracefully: no new
// connections, running jobs checkpointed (they resume on the next start).
func runServer(ctx context.Context, log io.Writer, addr, tlsCert, tlsKey string, cfg serve.Config) error {
	s, err := serve.New(cfg)
	if err != nil {
		return badInput(err)
	}
	ln, err := serve.Listen(addr, tlsCert, tlsKey)
	if err != nil {
		_ = s.Shutdown(context.Background())
		return badInput(err)
	}
	srv := serve.HTTPServer(s.Handler())
	s.Start(ctx)
	scheme := "http"
	if tlsCert != "" {
		scheme = "https"
	}
	host, _ := os.Hostname()
	// The replica ID jobs show clients, tied here (for the operator
	// only) to this host and process.
	fmt.Fprintf(log, "serve: listening on %s://%s (data %s; replica %s on host %s, pid %d)\n", scheme, ln.Addr(), cfg.Data, s.Replica(), host, os.Getpid())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = s.Shutdown(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(log, "serve: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	herr := srv.Shutdown(sctx)
	if err := s.Shutdown(sctx); err != nil {
		return err
	}
	if herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", herr)
	}
	fmt.Fprintln(log, "serve: stopped")
	// Stopping on SIGTERM is how a server ends: drained, it exits 0.
	return silentExit(exitOK)
}
