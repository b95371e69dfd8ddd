package engine

import (
	"context"
	"fmt"
	"time"
)

// DefaultInitTimeout is the command line's limit on each VU's init code
// (--init-timeout): generous, above the 2 minutes a tokenizer download
// may take, so that only init code that would never end meets it.
const DefaultInitTimeout = 5 * time.Minute

// InitTimeoutError is init code that ran longer than its Limit; it is
// the cause of the interruption, which names where the script was.
type InitTimeoutError struct {
	Limit time.Duration
}

func (e *InitTimeoutError) Error() string {
	return fmt.Sprintf("the init code ran longer than %s, llmrun's limit for a VU's init code (--init-timeout)", e.Limit)
}

// initContext is ctx, ended also after limit (with an *InitTimeoutError
// as its cause) when limit is above 0; stop releases its timer.
func initContext(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, limit, &InitTimeoutError{Limit: limit})
}
