// Package wait holds the one way llmrun waits: for a duration, or until a
// context ends, whichever comes first.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends; it reports whether d passed with ctx
// still alive. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
