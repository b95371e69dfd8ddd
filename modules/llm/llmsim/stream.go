package llmsim

import (
	"context"
	"net/http"
	"time"
)

// sse is a stream's output: enc formats the events, which are written to
// w and flushed by rc.
type sse struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *chunkEncoder
}

// write writes the formatted events out.
func (o *sse) write() error { return o.enc.writeOut(o.w) }

// stream answers c as server-sent events, meeting c's fault, if any, on
// the way. It returns early, cutting the stream, when the client goes or
// the server closes.
func (c *completion) stream(ctx context.Context, w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w), enc: newChunkEncoder(c.api, c.id, c.created, c.job.model, c.job.includeUsage)}
	if out.rc.Flush() != nil {
		return
	}
	total := c.seq.outputTokens
	if c.fault == nil {
		c.send(ctx, out, 0, total, true)
		return
	}
	at := min(c.fault.After, total)
	if c.send(ctx, out, 0, at, false) && c.strike(ctx, out) {
		c.send(ctx, out, at, total, true)
	}
}

// send streams tokens from up to to as the engine makes them, then, if
// end, the final chunks. Each time the engine wakes it, it writes the
// chunks of the tokens made since and flushes them. It reports whether the
// stream is still up.
func (c *completion) send(ctx context.Context, out *sse, from, to int, end bool) bool {
	for sent := from; ; {
		if sent < to {
			n, err := c.engine.wait(ctx, c.seq, sent)
			if err != nil {
				return false
			}
			for ; sent < min(n, to); sent++ {
				word := c.text.word()
				if sent == 0 && c.api.chat {
					out.enc.role()
					word = word[1:] // an answer starts without a space
				}
				out.enc.token(word)
				if out.write() != nil {
					return false
				}
			}
		}
		if sent == to && end {
			out.enc.finish(c.finish)
			if c.job.includeUsage {
				out.enc.usage(c.job.promptTokens, c.seq.outputTokens)
			}
			out.enc.done()
			if out.write() != nil {
				return false
			}
		}
		if out.rc.Flush() != nil {
			return false
		}
		if sent > 0 && !c.timedFirst {
			c.timedFirst = true
			c.server.recordFirstToken(time.Since(c.arrived))
		}
		if sent == to {
			return true
		}
	}
}
