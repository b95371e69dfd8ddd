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

const simUsage = `Usage: llmrun sim [flags]

Serves the built-in LLM simulator, over HTTP/1.1 and HTTP/2 cleartext
(h2c, prior knowledge) on one port. It behaves like a continuous-batching
engine, with batch slots, a waiting queue, a prefill cost per prompt token
and a decode step that slows as the batch grows. Stops on Ctrl-C.

Endpoints:
  POST /v1/chat/completions, /v1/completions   OpenAI (vLLM, SGLang), streamed or not
  POST /v1/messages                            Anthropic Messages, streamed or not
  POST /api/chat, /api/generate                Ollama (streamed only)
  POST /generate_stream                        TGI
  POST /v2/models/{model}[/versions/{v}]/generate_stream, .../generate
                                               Triton's generate extension
  POST /v1/embeddings                          OpenAI embeddings
  GET  /v1/models, /health                     the model list, liveness
  GET  /stats                                  counters: requests, tokens, faults injected
A request's X-Llmsim-Fault header injects a fault into it (see --fault).

Flags:
`

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
