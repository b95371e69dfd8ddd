package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newSubcommand("llmrun sim", simUsage, stdout, stderr)
	fs := c.flags
	cfg := llmsim.DefaultConfig()
	addr := fs.String("addr", "127.0.0.1:8000", "address to listen on (host:port)")
	cfg.AddFlags(fs)
	if code, ok := c.parse(args); !ok {
		return code
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
	fmt.Fprintf(stdout, "  a request's %s header injects one fault into it (see docs/simulator.md, \"Faults\")\n", llmsim.FaultHeader)
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "llmrun sim: closing: %v\n", err)
		return exitcode.Error
	}
	return exitcode.OK
}
