package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("llmrun sim", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := llmsim.DefaultConfig()
	addr := fs.String("addr", "127.0.0.1:8000", "address to listen on (host:port)")
	cfg.AddFlags(fs)
	fs.Usage = func() { printHelp(stdout, simUsage, fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitcode.OK
		}
		fmt.Fprintf(stderr, "llmrun sim: %v\nRun 'llmrun sim --help' for usage.\n", err)
		return exitcode.Usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llmrun sim: unexpected argument %q\n", fs.Arg(0))
		return exitcode.Usage
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "llmrun sim: %v\n", err)
		return exitcode.Usage
	}
	srv, err := llmsim.Listen(ctx, *addr, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun sim: %v\n", err)
		return exitcode.Error
	}
	fmt.Fprintf(stdout, "llmsim serving model %q on %s/v1 (max-num-seqs %d, prefill %s + %s/token, decode %s + %s/seq); Ctrl-C stops\n",
		cfg.Model, srv.URL(), cfg.MaxNumSeqs, cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq)
	for _, rule := range cfg.Faults {
		fmt.Fprintf(stdout, "  injecting %s into %.3g %% of requests\n", rule.Fault, 100*rule.Rate)
	}
	fmt.Fprintf(stdout, "  a request's %s header injects one fault into it (see the README)\n", llmsim.FaultHeader)
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "llmrun sim: closing: %v\n", err)
		return exitcode.Error
	}
	return exitcode.OK
}
