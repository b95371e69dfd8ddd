package llmsim

import (
	"context"
	"io"
	"net/http"
	"time"
)

// encoder formats one stream's units (SSE events, NDJSON lines) of one
// protocol into a buffer that writeOut sends.
type encoder interface {
	// contentType is the stream's Content-Type.
	contentType() string
	// token adds the unit of one token, the stream's first and/or last.
	token(word string, first, last bool)
	// end adds the units that end the stream after its last token.
	end(reason string, n tokenCounts)
	// malformed adds a unit cut short; fail adds the error unit of the
	// fault named name.
	malformed()
	fail(name string)
	writeOut(w io.Writer) error
}

// sse is a stream's output: enc formats the units, which are written to
// w and flushed by rc.
type sse struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc encoder
}

// write writes the formatted events out.
func (o *sse) write() error { return o.enc.writeOut(o.w) }

// stream answers c as server-sent events, meeting c's fault, if any, on
// the way. It returns early, cutting the stream, when the client goes or
// the server closes, and reports whether that happened while the answer
// was still sound: before its fault struck.
func (c *completion) stream(ctx context.Context, w http.ResponseWriter) (gaveUp bool) {
	h := w.Header()
	enc := c.api.encoder(c)
	h.Set("Content-Type", enc.contentType())
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w), enc: enc}
	if out.rc.Flush() != nil {
		return true
	}
	total := c.seq.outputTokens
	if c.fault == nil {
		return !c.send(ctx, out, 0, total, true)
	}
	at := min(c.fault.After, total)
	if !c.send(ctx, out, 0, at, false) {
		return true
	}
	if c.strike(ctx, out) {
		c.send(ctx, out, at, total, true)
	}
	return false
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
				out.enc.token(c.text.word(), sent == 0, sent+1 == c.seq.outputTokens)
				if out.write() != nil {
					return false
				}
			}
		}
		if sent == to && end {
			out.enc.end(c.finish, c.counts())
			if out.write() != nil {
				return false
			}
		}
		if out.rc.Flush() != nil {
			return false
		}
		c.timeFlush(sent)
		if sent == to {
			return true
		}
	}
}

// timeFlush notes the server-side timing of a flush that took the stream
// to sent tokens: its first token's TTFT, or the gap since the previous
// flush of tokens. A flush of no new token (the final chunks alone) is
// not timed.
func (c *completion) timeFlush(sent int) {
	if sent == c.flushedTokens {
		return
	}
	now := time.Now()
	if !c.timedFirst {
		c.timedFirst = true
		c.server.recordFirstToken(now.Sub(c.arrived))
	} else {
		c.server.recordFlushGap(now.Sub(c.lastFlush))
	}
	c.flushedTokens, c.lastFlush = sent, now
}
