package llm

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

const benchChunks = 256 // content chunks per benchmark stream

// reportPerChunk reports the allocations made since before, per chunk of
// the b.N streams.
func reportPerChunk(b *testing.B, before *runtime.MemStats, chunks int) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*chunks), "allocs/chunk")
}

// BenchmarkStreamDecode measures the stream path of the client without the
// network: SSE framing, chunk decoding, timestamps and the Result.
func BenchmarkStreamDecode(b *testing.B) { benchmarkStreamDecode(b, nil) }

// BenchmarkStreamDecodeCounted is BenchmarkStreamDecode with each
// token-bearing chunk counted as it arrives (Request.Arrivals), as a run
// counts them for its live figures.
func BenchmarkStreamDecodeCounted(b *testing.B) {
	benchmarkStreamDecode(b, metrics.NewShardedCounter(1).Shard(0))
}

// benchmarkStreamDecode reads a stream of benchChunks content chunks over
// and over, counting them into arrived unless it is nil.
func benchmarkStreamDecode(b *testing.B, arrived *metrics.CounterShard) {
	stream, events := openAIStream(benchChunks)
	r := bytes.NewReader(stream)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		r.Reset(stream)
		rr := getResponseReader()
		rr.arrived = arrived
		var res Result
		if err := rr.readSSE(r, time.Now(), false, &res); err != nil || res.OutputTokens != 256 {
			b.Fatal(err, res.OutputTokens)
		}
		rr.release()
	}
	reportPerChunk(b, &before, events)
}

// BenchmarkStreamHTTP measures whole requests to a local server that writes
// a prepared stream; allocations include the server's and net/http's.
func BenchmarkStreamHTTP(b *testing.B) {
	stream, events := openAIStream(benchChunks)
	_, c := newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}, Config{})
	req := Request{Body: chatBody}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if res := c.Stream(b.Context(), req); !res.OK || res.Chunks != benchChunks {
			b.Fatal(res.Class, res.Error)
		}
	}
	reportPerChunk(b, &before, events)
}

// BenchmarkResponsesStreamDecode is BenchmarkStreamDecode for a Responses
// API stream of benchChunks text deltas.
func BenchmarkResponsesStreamDecode(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n")
	for i := range benchChunks {
		fmt.Fprintf(&buf, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\" word\"}\n\n", i+1)
	}
	buf.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"usage\":{\"input_tokens\":512,\"output_tokens\":256,\"total_tokens\":768}}}\n\n")
	stream := buf.Bytes()
	r := bytes.NewReader(stream)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		r.Reset(stream)
		rr := getResponseReader()
		res := Result{API: Responses}
		if err := rr.readResponses(r, false, &res); err != nil || res.Chunks != benchChunks {
			b.Fatal(err, res.Chunks)
		}
		rr.release()
	}
	reportPerChunk(b, &before, benchChunks+2)
}
