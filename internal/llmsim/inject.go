package llmsim

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultHeader is the request header that asks for a fault, in ParseFault's
// syntax. It overrides Config.Faults for its request.
const FaultHeader = "X-Llmsim-Fault"

// bigLineBytes is the length of big_line's content.
const bigLineBytes = 2 << 20

// faultStream keeps the fault draws' random stream apart from the text's.
const faultStream = 0x9e3779b97f4a7c15

// wrongContentTypeBody is what wrong_content_type answers.
const wrongContentTypeBody = "<!DOCTYPE html>\n<html><head><title>llmsim</title></head>" +
	"<body><p>llmsim injected fault wrong_content_type: this page is not an API response.</p></body></html>\n"

// requestedFault returns the fault r's X-Llmsim-Fault header asks for, nil
// if none.
func requestedFault(r *http.Request, j *job) (*Fault, *apiError) {
	v := r.Header.Get(FaultHeader)
	if v == "" {
		return nil, nil
	}
	f, err := ParseFault(v)
	if err != nil {
		return nil, badRequest("", "invalid %s header %q: %v", FaultHeader, v, err)
	}
	if f.midStream() && !j.stream {
		return nil, badRequest("", "%s: fault %s strikes mid-stream and needs a streamed request", FaultHeader, f.Name)
	}
	return &f, nil
}

// drawFault returns the fault, if any, that the configured rules inject
// into the request with the given arrival number.
func (s *Server) drawFault(arrival uint64, stream bool) *Fault {
	if len(s.cfg.Faults) == 0 {
		return nil
	}
	u := rand.New(rand.NewPCG(uint64(s.cfg.Seed), arrival^faultStream)).Float64()
	for i := range s.cfg.Faults {
		r := &s.cfg.Faults[i]
		if u -= r.Rate; u < 0 {
			if r.Fault.midStream() && !stream {
				return nil
			}
			return &r.Fault
		}
	}
	return nil
}

// intercept injects a fault that strikes before the engine. It reports
// whether the request goes on to the engine: only after slow_headers, and
// only if the client is still there.
func (s *Server) intercept(ctx context.Context, w http.ResponseWriter, f *Fault) bool {
	s.faults[f.Name].Add(1)
	switch f.Name {
	case faultRefuse:
		cut(w, false)
	case faultHTTP429:
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		faultError(f.Name, http.StatusTooManyRequests).write(w)
	case faultHTTP5xx:
		faultError(f.Name, f.Status).write(w)
	case faultWrongContentType:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, wrongContentTypeBody)
	case faultSlowHeaders:
		s.pause(ctx, f.Duration)
		if ctx.Err() != nil {
			s.abandoned.Add(1)
			return false
		}
		return true
	}
	return false
}

// strike injects c's mid-stream fault into the stream out, whose tokens so
// far are flushed. It reports whether the stream goes on.
func (c *completion) strike(ctx context.Context, out *sse) bool {
	f := c.fault
	c.server.faults[f.Name].Add(1)
	switch f.Name {
	case faultReset:
		cut(out.w, true)
		return false
	case faultStall:
		return c.server.pause(ctx, f.Duration)
	case faultMalformed:
		out.enc.malformed()
	case faultBigLine:
		out.enc.token(strings.Repeat("x", bigLineBytes), false, false)
	case faultErrorEvent:
		out.enc.fail(f.Name)
		out.write()
		return false
	case faultEarlyClose:
		return false
	}
	return out.write() == nil
}

// pause waits d, or less if the client goes or the server closes first.
// It reports whether it waited d in full.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.engine.stopped:
		return false
	}
}

// cut takes over w's connection and closes it, so that nothing more of the
// response is sent: abruptly (a TCP reset) or with an orderly end of file.
// Where the connection cannot be taken over (HTTP/2), it aborts the
// response instead.
func cut(w http.ResponseWriter, abrupt bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && abrupt {
		tc.SetLinger(0)
	}
	conn.Close()
}
