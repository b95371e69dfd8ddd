package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// ThresholdInterval is how often thresholds are evaluated during a run, to
// stop it early when an abortOnFail threshold fails.
const ThresholdInterval = 2 * time.Second

// loadThresholds parses options.thresholds and checks them against the
// metrics registered by then (the built-in ones and the script's own, from
// its init code).
func loadThresholds(raw json.RawMessage, reg *metrics.Registry) (*threshold.Set, error) {
	set, err := threshold.Parse(raw)
	if err == nil {
		err = set.Validate(reg)
	}
	var te *threshold.Error
	if errors.As(err, &te) {
		return nil, &ConfigError{Field: "options." + te.Field(), Err: te.Err}
	}
	return set, err
}

// watchThresholds evaluates the thresholds every ThresholdInterval while
// ctx lasts. When an abortOnFail threshold fails it calls stop and sends
// that result on the returned channel, which is closed when the watch ends
// (read it once the run is over).
func (e *Engine) watchThresholds(ctx context.Context, start time.Time, stop func()) <-chan threshold.Result {
	aborted := make(chan threshold.Result, 1)
	if !e.thresholds.HasAbortOnFail() {
		close(aborted)
		return aborted
	}
	go func() {
		defer close(aborted)
		t := time.NewTicker(ThresholdInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				results := e.thresholds.Evaluate(e.agg.Snapshot(), time.Since(start))
				if r, ok := threshold.ShouldAbort(results); ok {
					aborted <- r
					stop()
					return
				}
			}
		}
	}()
	return aborted
}
