package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// floorLoad is what the floor client runs: the load llmrun runs with
// bench/stream.js, closed loop.
type floorLoad struct {
	URL      string
	Model    string
	Streams  int
	Requests int
	Tokens   int
	// Timeout bounds the whole load.
	Timeout time.Duration
}

// floorResult is what the floor client reports to e2eload, as JSON on its
// standard output.
type floorResult struct {
	Completed  int64   `json:"completed"`
	Failed     int64   `json:"failed"`
	FirstError string  `json:"first_error,omitempty"`
	TTFTMean   float64 `json:"ttft_mean_ms"`
	TTFTP99    float64 `json:"ttft_p99_ms"`
	ITLP99     float64 `json:"itl_p99_ms"`
}

// maxLine bounds one SSE line the floor reads, and is the buffer each
// stream holds: the simulator's chunks are a few hundred bytes.
const maxLine = 4 << 10

// runFloor is the floor: the least any streaming client can spend. It
// streams l.Requests chat answers over l.Streams connections, each
// stream taking the next request as soon as its last one ends, with
// net/http, bufio line reads and a timestamp per "data:" line, and no
// JSON decoding. A token-bearing line is one whose "content" is not
// empty (the simulator's first chunk, sent with the first token, carries
// an empty one); TTFT runs from sending a request to its first
// token-bearing line, ITL between token-bearing lines.
func runFloor(ctx context.Context, l floorLoad) floorResult {
	body := fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Benchmark prompt."}],"max_tokens":%d,"ignore_eos":true,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`,
		l.Model, l.Tokens)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: l.Streams, DisableCompression: true}}
	t := &timings{ttft: newHistogram(), itl: newHistogram()}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range l.Streams {
		wg.Go(func() {
			r := bufio.NewReaderSize(nil, maxLine)
			gaps := make([]time.Duration, 0, l.Tokens)
			for next.Add(1) <= int64(l.Requests) && ctx.Err() == nil {
				ttft, g, err := stream(ctx, client, l.URL+"/v1/chat/completions", body, r, gaps[:0])
				gaps = g
				t.add(ttft, gaps, err)
			}
		})
	}
	wg.Wait()
	return t.result()
}

// stream sends one request and reads its answer to the end, returning
// its TTFT and the gaps between its tokens (appended to gaps).
func stream(ctx context.Context, client *http.Client, url string, body []byte, r *bufio.Reader, gaps []time.Duration) (time.Duration, []time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, gaps, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, gaps, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, gaps, fmt.Errorf("status %s", resp.Status)
	}
	r.Reset(resp.Body)
	var ttft time.Duration
	var last time.Time
	done := false
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, gaps, err
		}
		if !bytes.HasPrefix(line, dataPrefix) {
			continue
		}
		now := time.Now()
		switch {
		case bytes.HasPrefix(line, donePrefix):
			done = true
		case bearsToken(line):
			if last.IsZero() {
				ttft = now.Sub(start)
			} else {
				gaps = append(gaps, now.Sub(last))
			}
			last = now
		}
	}
	if !done || last.IsZero() {
		return 0, gaps, errors.New("the stream ended without a token or without [DONE]")
	}
	return ttft, gaps, nil
}

var (
	dataPrefix    = []byte("data:")
	donePrefix    = []byte("data: [DONE]")
	contentPrefix = []byte(`"content":"`)
)

// bearsToken reports whether an SSE data line's "content" is non-empty.
func bearsToken(line []byte) bool {
	i := bytes.Index(line, contentPrefix)
	return i >= 0 && i+len(contentPrefix) < len(line) && line[i+len(contentPrefix)] != '"'
}

// timings gathers the floor's requests, one lock per request.
type timings struct {
	mu         sync.Mutex
	ttft, itl  *hdrhistogram.Histogram // microseconds
	completed  int64
	failed     int64
	firstError error
}

// newHistogram records 1 µs to 1 hour at 3 significant digits, as llmrun's
// own latency histograms do.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

func (t *timings) add(ttft time.Duration, gaps []time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.failed++
		if t.firstError == nil {
			t.firstError = err
		}
		return
	}
	t.completed++
	t.ttft.RecordValue(ttft.Microseconds())
	for _, g := range gaps {
		t.itl.RecordValue(g.Microseconds())
	}
}

func (t *timings) result() floorResult {
	res := floorResult{
		Completed: t.completed, Failed: t.failed,
		TTFTMean: t.ttft.Mean() / 1e3, TTFTP99: float64(t.ttft.ValueAtQuantile(99)) / 1e3,
		ITLP99: float64(t.itl.ValueAtQuantile(99)) / 1e3,
	}
	if t.firstError != nil {
		res.FirstError = t.firstError.Error()
	}
	return res
}

// floorMain is e2eload run as the floor client (-floor): the load is the
// JSON of a floorLoad in its argument, bounded by its Timeout, the result goes to out. It runs
// in a process of its own so that its CPU time and peak RSS are its own.
func floorMain(loadJSON string, out io.Writer) error {
	var l floorLoad
	if err := json.Unmarshal([]byte(loadJSON), &l); err != nil {
		return fmt.Errorf("reading the floor's load: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	res := runFloor(ctx, l)
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return err
	}
	if res.Completed == 0 {
		return fmt.Errorf("no request completed: %s", res.FirstError)
	}
	return nil
}
