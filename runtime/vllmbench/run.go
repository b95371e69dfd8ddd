package vllmbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/runner"
)

// Benchmark is one llmrun bench as its command line sets it up
// (CommandLine.Benchmark): the options, validated, and the run's script.
type Benchmark struct {
	Options Options
	// Server is the server's base URL the flags name (--base-url, else
	// --host and --port), for the endpoint (Options.BaseURL); "" when
	// none does.
	Server string
	// Ignored are the vLLM flags given that cannot matter here
	// (IgnoredNotice names them).
	Ignored []Flag

	headers      map[string]string // --header
	insecure     bool              // --insecure
	readyTimeout time.Duration     // --ready-check-timeout-sec; 0 for no wait
	save         *ResultFile       // nil without --save-result or --append-result
	datasetPath  string            // --dataset-path, absolute
	source       []byte            // the run's script (Script)
}

// Target is the server the benchmark sends to, as llmrun run resolves it
// (llmconfig.Resolve): Server, else $LLMRUN_BASE_URL or $OPENAI_BASE_URL,
// else the built-in simulator; the model --model names, else the
// server's first; the key in apiKeyEnv; each request's timeout; and
// --tokenizer. It is the Engine.LLM that Run takes.
func (b *Benchmark) Target(ctx context.Context, apiKeyEnv string, timeout time.Duration, getenv func(string) string) (llm.Config, error) {
	return llmconfig.Resolve(ctx, llmconfig.Settings{BaseURL: b.Server, APIKeyEnv: apiKeyEnv, Model: b.Options.RequestModel(), Timeout: timeout,
		IdleTimeout: llm.DefaultIdleTimeout, Tokenizer: b.Options.Tokenizer}, getenv)
}

// stopError is what stopped a benchmark before its run: the verdict it
// comes to, and what to tell.
type stopError struct {
	verdict runner.Verdict
	err     error
}

func (e *stopError) Error() string { return e.err.Error() }

// Run runs the benchmark with runner.Run. cfg is the run as the caller
// sets it up: Engine.LLM (the target: base URL, model, key, timeout,
// tokenizer), Engine.Logger, the outputs, streams and Command ("llmrun
// bench" when empty); Run adds the benchmark's: its script, seed and
// modules, --header and --insecure, the test id "bench" and --goodput.
// Before the run it waits for the endpoint (--ready-check-timeout-sec)
// and checks where the result is to be saved; after it, it prints vLLM's
// block on cfg.Stdout and saves vLLM's result. It writes what went wrong
// to cfg.Stderr, in lines begun with cfg.Command, as runner.Run does, and
// the Outcome says what it came to. The error is a fault of the command
// line found before any load was sent, which the caller tells.
func (b *Benchmark) Run(ctx context.Context, cfg runner.Config) (runner.Outcome, error) {
	if cfg.Command == "" {
		cfg.Command = "llmrun bench"
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	cfg.Engine.LLM.Headers = b.headers
	if b.Options.rerank() {
		// The requests' API, which their bodies do not tell, and the
		// preflight's.
		cfg.Engine.LLM.API = llm.Rerank
	}
	cfg.Engine.LLM.TLS.InsecureSkipVerify = b.insecure
	collector, texts, err := b.prepare(ctx, &cfg)
	if texts != nil {
		defer texts.Close()
	}
	var stop *stopError
	if errors.As(err, &stop) {
		fmt.Fprintf(cfg.Stderr, "%s: %v\n", cfg.Command, stop.err)
		return runner.Outcome{Verdict: stop.verdict}, nil
	}
	if err != nil {
		return runner.Outcome{}, err
	}
	if err := b.Options.PrintTraffic(cfg.Stdout); err != nil {
		return runner.Outcome{Verdict: runner.Errored}, nil
	}
	outcome := runner.Run(ctx, cfg)
	if outcome.Summary == nil {
		return outcome, nil
	}
	return b.report(cfg, outcome, collector.Requests(), texts), nil
}

// prepare readies the run before any load is sent: it checks the result
// file's destination, waits for the endpoint when asked, and
// completes cfg with the engine's script and modules, the dataset
// loaded, and the Collector of the requests (with the TextSpill of
// their texts for --save-detailed, which the caller closes).
func (b *Benchmark) prepare(ctx context.Context, cfg *runner.Config) (*Collector, *TextSpill, error) {
	if b.save != nil {
		if err := b.save.check(b.Options, runner.FilesWritten(cfg.SummaryExport, cfg.Outputs)); err != nil {
			return nil, nil, err
		}
	}
	if b.readyTimeout > 0 && cfg.Engine.LLM.BaseURL != "" {
		if err := b.waitReady(ctx, *cfg); err != nil {
			return nil, nil, err
		}
	}
	e := &cfg.Engine
	e.ScriptPath, e.Source, e.Seed, e.Env, e.InitTimeout = "llmrun-bench.js", b.source, b.Options.Seed, map[string]string{}, engine.DefaultInitTimeout
	e.Modules = runner.StandardModules(*e)
	if dm, ok := e.Modules.Lookup("data"); ok {
		if err := PreloadDataset(ctx, dm.(*data.Module), b.Options, b.datasetPath); err != nil {
			if ctx.Err() != nil {
				return nil, nil, &stopError{runner.Interrupted, fmt.Errorf("%w; no load was sent", err)}
			}
			return nil, nil, err
		}
	}
	collector := NewCollector(b.Options)
	var texts *TextSpill
	if b.Options.SaveDetailed {
		// Each answer's text goes to a file beside the result as the
		// request ends, not into memory until the end.
		var err error
		if texts, err = NewTextSpill(b.save.dir(b.Options)); err != nil {
			return nil, nil, &stopError{runner.Errored, fmt.Errorf("%w; no load was sent", err)}
		}
		collector.SpillTexts(texts)
	}
	e.Results = collector
	if err := e.Modules.Register(ModuleName, collector); err != nil {
		return nil, texts, &stopError{runner.Errored, err}
	}
	cfg.TestID, cfg.Goodput, cfg.MetricPercentiles = "bench", b.Options.Goodput, b.Options.MetricPercentiles
	return collector, texts, nil
}

// report prints vLLM's block of the run's outcome, and saves vLLM's
// result when asked: a result not saved is lost (Outcome.Lost), and a
// block that cannot be printed an error of the run.
func (b *Benchmark) report(cfg runner.Config, outcome runner.Outcome, requests []Request, texts *TextSpill) runner.Outcome {
	model := b.Options.Model
	if model == "" && len(outcome.Summary.Meta.Models) > 0 {
		model = outcome.Summary.Meta.Models[0]
	}
	date := time.Now()
	result := NewResult(b.Options, Run{Summary: outcome.Summary, Requests: requests, ModelID: model,
		Date: date, Tokenizer: b.Options.Tokenizer, Texts: texts})
	fmt.Fprintln(cfg.Stdout)
	if err := result.Print(cfg.Stdout); err != nil {
		return runner.Outcome{Verdict: runner.Errored, Summary: outcome.Summary}
	}
	if b.save == nil {
		return outcome
	}
	path := b.save.path(b.Options, model, date)
	if err := b.save.write(path, result); err != nil {
		fmt.Fprintf(cfg.Stderr, "%s: --save-result %s: %v\n", cfg.Command, path, err)
		outcome.Lost = true
		return outcome
	}
	fmt.Fprintf(cfg.Stderr, "%s: result saved to %s\n", cfg.Command, path)
	return outcome
}
