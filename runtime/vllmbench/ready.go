package vllmbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/runner"
)

// ReadyRetryInterval is the wait between two of WaitReady's probes, as
// vLLM's wait_for_endpoint (vllm/benchmarks/lib/ready_checker.py).
const ReadyRetryInterval = 5 * time.Second

// WaitReady waits for the server to answer a request, as vLLM's
// --ready-check-timeout-sec: it sends probe again every interval until one
// succeeds or timeout has passed since it began (or ctx ends), and returns
// the successful probe's report, or an error with the last failure the
// server gave (not the probe the timeout cut, when an earlier one came
// back). tell, when set, is told each failure.
func WaitReady(ctx context.Context, probe func(context.Context) llm.Probe, timeout, interval time.Duration, tell func(llm.Probe)) (llm.Probe, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last llm.Probe
	answered := false
	for {
		p := probe(ctx)
		if p.OK {
			return p, nil
		}
		if ctx.Err() == nil {
			last, answered = p, true
			if tell != nil {
				tell(p)
			}
		} else if !answered {
			last = p
		}
		wait := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			wait.Stop()
			return last, fmt.Errorf("the endpoint was not ready within %s: %s", timeout, failure(last))
		case <-wait.C:
		}
	}
}

// failure says how a probe failed.
func failure(p llm.Probe) string {
	if p.Error != "" {
		return p.Error
	}
	return string(p.Class)
}

// waitReady is --ready-check-timeout-sec: it waits for the server of
// cfg's LLM to answer a request of the benchmark's API (WaitReady),
// telling each failure on cfg.Stderr. An endpoint not ready in time is a
// failed preflight: no load was sent.
func (b *Benchmark) waitReady(ctx context.Context, cfg runner.Config) error {
	llmCfg := cfg.Engine.LLM
	llmCfg.API = b.Options.API()
	client, err := llm.NewClient(llmCfg)
	if err != nil {
		return fmt.Errorf("--ready-check-timeout-sec: %w", err)
	}
	defer client.CloseIdleConnections()
	fmt.Fprintf(cfg.Stderr, "%s: waiting up to %s for the endpoint to become ready\n", cfg.Command, b.readyTimeout)
	_, err = WaitReady(ctx, client.Probe, b.readyTimeout, ReadyRetryInterval, func(p llm.Probe) {
		fmt.Fprintf(cfg.Stderr, "%s: the endpoint is not ready: %s\n", cfg.Command, p.Error)
	})
	switch {
	case ctx.Err() != nil:
		return &stopError{runner.Interrupted, errors.New("interrupted while waiting for the endpoint")}
	case err != nil:
		return &stopError{runner.PreflightFailed, fmt.Errorf("--ready-check-timeout-sec %d: %w; no load was sent", int(b.readyTimeout.Seconds()), err)}
	}
	return nil
}
