package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// An interrupted run is Interrupted and still says what else went wrong (a
// teardown() cut after its grace period), but not the interruption itself.
func TestInterruptedRunReportsItsOtherErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr strings.Builder
	runErr := errors.Join(context.Canceled, errors.New("teardown() stopped 10s after the interruption"))
	if v := verdict(ctx, nil, runErr, nil, &stderr, defaultCommand); v != Interrupted {
		t.Errorf("verdict %v, want %v", v, Interrupted)
	}
	if got := stderr.String(); !strings.Contains(got, "teardown() stopped 10s after the interruption") || strings.Contains(got, "canceled") {
		t.Errorf("stderr %q, want the teardown error alone", got)
	}
	// The run's error is left as it was.
	if !errors.Is(runErr, context.Canceled) || !strings.HasPrefix(runErr.Error(), context.Canceled.Error()) {
		t.Errorf("the run's error became %q", runErr)
	}
}
