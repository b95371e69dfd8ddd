package llmsim

import (
	"context"
	"net/http"
	"time"
)

// stream answers c as server-sent events. Each time the engine wakes it, it
// writes the chunks of the tokens made since and flushes them. It returns
// early, cutting the stream, when the client goes or the server closes.
func (c *completion) stream(ctx context.Context, w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	enc := newChunkEncoder(c.api, c.id, c.created, c.job.model, c.job.includeUsage)
	total := c.seq.outputTokens
	timedFirst := false
	for sent := 0; sent < total; {
		n, err := c.engine.wait(ctx, c.seq, sent)
		if err != nil {
			return
		}
		for ; sent < n; sent++ {
			word := c.text.word()
			if sent == 0 && c.api.chat {
				enc.role()
				word = word[1:] // an answer starts without a space
			}
			enc.token(word)
			if enc.writeOut(w) != nil {
				return
			}
		}
		if sent == total {
			enc.finish(c.finish)
			if c.job.includeUsage {
				enc.usage(c.job.promptTokens, total)
			}
			enc.done()
			if enc.writeOut(w) != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
		if !timedFirst {
			timedFirst = true
			c.server.recordFirstToken(time.Since(c.arrived))
		}
	}
}
