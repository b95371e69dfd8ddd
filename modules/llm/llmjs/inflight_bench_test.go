package llmjs

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// inflightProfiles, when set, is where BenchmarkStreamsInFlight writes the
// heap profiles of each round of streams, before they start and while in
// flight, and a goroutine profile in flight: compare the heap profiles
// with go tool pprof -base (and -memprofilerate 1 for every allocation).
var inflightProfiles = flag.String("inflightprofiles", "", "directory for BenchmarkStreamsInFlight's profiles")

// inflightStreams is how many streams BenchmarkStreamsInFlight holds open
// at once: enough for the memory of one stream to stand out of the noise,
// few enough for the 2,000 loopback sockets of one process.
const inflightStreams = 500

// inflightWait bounds each wait of BenchmarkStreamsInFlight: for every
// stream's first token, and for the process to settle after them.
const inflightWait = time.Minute

// inflightBody asks for more tokens than a benchmark lasts: the simulator
// stalls every stream after its first token anyway (startInflightSim).
const inflightBody = `{"messages":[{"role":"user","content":"hello there"}],"max_tokens":1000,"ignore_eos":true,"stream":true}`

// BenchmarkStreamsInFlight measures the memory one stream in flight holds
// while it waits for its next token: inflightStreams streams against an
// in-process simulator whose streams stall, forever, after their first
// token (a long decode step, without the timing), and what the live heap
// and the goroutine stacks grew by once every stream had its first token,
// after a collection, per stream (runtime/metrics:
// /memory/classes/heap/objects:bytes and /memory/classes/heap/stacks:bytes).
// The simulator's side of each stream is in every figure: "server" is that
// share alone (raw connections that send a request and read its first
// token, with no goroutine), "floor" adds a bare net/http client (a
// goroutine per stream, a 4 KiB bufio line reader, no JSON), "client" is
// llm.Client.Stream, "js" llm.stream in a VU beyond what the idle VU
// held. A client's own cost per stream is its figure minus the server's.
func BenchmarkStreamsInFlight(b *testing.B) {
	for _, bm := range []struct {
		name string
		open func(b *testing.B, sim *llmsim.Running) inflightClient
	}{
		{"server", openRawStreams},
		{"floor", openFloorStreams},
		{"client", openClientStreams},
		{"js", openJSStreams},
	} {
		b.Run(bm.name, func(b *testing.B) {
			sim := startInflightSim(b)
			client := bm.open(b, sim)
			measureInflight(b, sim, client) // what the first streams set up once
			var heap, stacks float64
			for b.Loop() {
				h, s := measureInflight(b, sim, client)
				heap, stacks = heap+h, stacks+s
			}
			b.ReportMetric(heap/float64(b.N), "heap-B/stream")
			b.ReportMetric(stacks/float64(b.N), "stack-B/stream")
			b.ReportMetric((heap+stacks)/float64(b.N), "B/stream")
		})
	}
}

// inflightClient starts streams. start begins n streams, ended by the end
// of ctx, and returns their count of first tokens received and a wait,
// called once ctx ended, for every stream to end.
type inflightClient interface {
	start(ctx context.Context, n int) (firstTokens func() int64, wait func())
}

// startInflightSim starts a simulator whose streams stall forever after
// their first token, with a batch slot for every stream and a decode step
// of 500 ms: the few streams that arrive during one wait for it to end.
func startInflightSim(b *testing.B) *llmsim.Running {
	b.Helper()
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs = inflightStreams
	cfg.PrefillBase, cfg.PrefillPerToken = time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 500*time.Millisecond, 0
	cfg.Tokenizer, cfg.PrefixCacheBlocks = llmsim.TokenizerBytes, 0
	cfg.Faults = []llmsim.FaultRule{{Fault: llmsim.Fault{Name: "stall", After: 1, Duration: llmsim.Forever}, Rate: 1}}
	return llmsimtest.Start(b, cfg)
}

// measureInflight holds inflightStreams streams of client in flight and
// returns how many bytes of heap and of stack each held.
func measureInflight(b *testing.B, sim *llmsim.Running, client inflightClient) (heap, stacks float64) {
	b.Helper()
	goroutines := runtime.NumGoroutine()
	heap0, stacks0 := liveMemory()
	writeProfiles(b, "before")
	ctx, cancel := context.WithCancel(b.Context())
	firstTokens, wait := client.start(ctx, inflightStreams)
	waitUntil(b, "every stream's first token", func() bool { return firstTokens() >= inflightStreams })
	heap1, stacks1 := liveMemory()
	writeProfiles(b, "inflight")
	cancel()
	wait()
	waitUntil(b, "the streams' goroutines to end", func() bool {
		st := sim.Server().Stats()
		return runtime.NumGoroutine() <= goroutines && st.Running == 0 && st.Waiting == 0
	})
	return float64(heap1-heap0) / inflightStreams, float64(stacks1-stacks0) / inflightStreams
}

// liveMemory returns the bytes of live heap objects and of goroutine
// stacks after a collection.
func liveMemory() (heap, stacks int64) {
	runtime.GC()
	runtime.GC() // the first may leave stacks to shrink
	samples := []rtmetrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	rtmetrics.Read(samples)
	return int64(samples[0].Value.Uint64()), int64(samples[1].Value.Uint64())
}

// waitUntil polls cond until it holds, failing b after inflightWait.
func waitUntil(b testing.TB, what string, cond func() bool) {
	b.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(inflightWait)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("waited %s for %s", inflightWait, what)
		}
		<-tick.C
	}
}

// rawStreams are streams of raw connections read by the benchmark's own
// goroutine: the simulator's share of a stream.
type rawStreams struct {
	addr string
	req  []byte
	b    *testing.B
}

func openRawStreams(b *testing.B, sim *llmsim.Running) inflightClient {
	addr := strings.TrimPrefix(sim.URL(), "http://")
	req := fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(inflightBody), inflightBody)
	return &rawStreams{addr: addr, req: req, b: b}
}

func (r *rawStreams) start(ctx context.Context, n int) (func() int64, func()) {
	conns := make([]net.Conn, 0, n)
	for range n {
		conn, err := net.Dial("tcp", r.addr)
		if err != nil {
			r.b.Fatal(err)
		}
		if _, err := conn.Write(r.req); err != nil {
			r.b.Fatal(err)
		}
		conns = append(conns, conn)
	}
	buf := make([]byte, 4<<10)
	for _, conn := range conns {
		if err := readFirstToken(conn, buf); err != nil {
			r.b.Fatal(err)
		}
	}
	return func() int64 { return int64(n) }, func() {
		for _, conn := range conns {
			conn.Close()
		}
	}
}

// readFirstToken reads a streamed response from conn until its first
// token-bearing chunk, into buf.
func readFirstToken(conn net.Conn, buf []byte) error {
	if err := conn.SetReadDeadline(time.Now().Add(inflightWait)); err != nil {
		return err
	}
	got := 0
	for !bearsToken(buf[:got]) {
		if got == len(buf) {
			return fmt.Errorf("no token in the first %d bytes: %q", got, buf)
		}
		n, err := conn.Read(buf[got:])
		got += n
		if err != nil && !bearsToken(buf[:got]) {
			return fmt.Errorf("reading the first token: %w", err)
		}
	}
	return nil
}

// bearsToken reports whether b holds an SSE chunk with non-empty content.
func bearsToken(b []byte) bool {
	const content = `"content":"`
	i := bytes.Index(b, []byte(content))
	for i >= 0 {
		if j := i + len(content); j < len(b) && b[j] != '"' {
			return true
		}
		next := bytes.Index(b[i+1:], []byte(content))
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// floorStreams are the streams of a bare net/http client: a goroutine per
// stream reading lines with a 4 KiB bufio.Reader, a timestamp per token.
type floorStreams struct {
	client *http.Client
	url    string
}

func openFloorStreams(b *testing.B, sim *llmsim.Running) inflightClient {
	t := &http.Transport{MaxIdleConnsPerHost: inflightStreams, DisableCompression: true}
	b.Cleanup(t.CloseIdleConnections)
	return &floorStreams{client: &http.Client{Transport: t}, url: sim.URL() + "/v1/chat/completions"}
}

func (f *floorStreams) start(ctx context.Context, n int) (func() int64, func()) {
	var first atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { f.stream(ctx, &first) })
	}
	return first.Load, wg.Wait
}

// stream reads one stream to its end, counting its first token into first.
func (f *floorStreams) stream(ctx context.Context, first *atomic.Int64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(inflightBody))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 4<<10)
	var last time.Time
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		if bytes.HasPrefix(line, []byte("data:")) && bearsToken(line) {
			if last.IsZero() {
				first.Add(1)
			}
			last = time.Now()
		}
	}
}

// clientStreams are the streams of llm.Client.Stream, one goroutine each.
type clientStreams struct {
	client *llm.Client
}

func openClientStreams(b *testing.B, sim *llmsim.Running) inflightClient {
	c, err := llm.NewClient(llm.Config{BaseURL: sim.URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.CloseIdleConnections)
	return &clientStreams{client: c}
}

func (c *clientStreams) start(ctx context.Context, n int) (func() int64, func()) {
	arrivals := countedArrivals{metrics.NewShardedCounter(1)}
	req := llm.Request{Body: map[string]any{
		"messages":   []any{map[string]any{"role": "user", "content": "hello there"}},
		"max_tokens": 1000, "ignore_eos": true,
	}, Arrivals: arrivals}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { c.client.Stream(ctx, req) })
	}
	return arrivals.Total, wg.Wait
}

// countedArrivals counts every request's arriving tokens in one counter.
type countedArrivals struct{ *metrics.ShardedCounter }

func (a countedArrivals) Counter(string) *metrics.CounterShard { return a.Shard(0) }

// jsStreams are the streams of llm.stream, each on a VU of its own, made
// and warmed (one request, whose connection is then closed) when the
// benchmark starts: what a stream adds to an idle VU.
type jsStreams struct {
	vus     []*modulestest.VU
	arrived *metrics.ShardedCounter
}

// jsArrivals is a run's counters of arriving tokens: one for everything.
type jsArrivals struct{ *metrics.ShardedCounter }

func (a jsArrivals) Counter(string, string) *metrics.ShardedCounter { return a.ShardedCounter }

func openJSStreams(b *testing.B, sim *llmsim.Running) inflightClient {
	arrived := metrics.NewShardedCounter(1)
	m, err := NewModule(llm.Config{BaseURL: sim.URL()}, Hooks{Arrivals: jsArrivals{arrived}})
	if err != nil {
		b.Fatal(err)
	}
	s := &jsStreams{arrived: arrived}
	goroutines := runtime.NumGoroutine()
	for i := range inflightStreams {
		v := modulestest.NewVU(b)
		v.Number = int64(i + 1)
		v.Expose("llm", m)
		v.LeaveInit()
		if _, err := v.Runtime().RunString(`globalThis.body = ` + inflightBody + `;
			llm.stream({ messages: body.messages, max_tokens: 1, stream: false }); undefined`); err != nil {
			b.Fatal(err)
		}
		s.vus = append(s.vus, v)
	}
	// Streams start on new connections, as in the other clients.
	for _, c := range m.clients {
		c.CloseIdleConnections()
	}
	waitUntil(b, "the idle connections' goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
	return s
}

// jsStream is the script of each stream, compiled once as a run compiles
// its script; like an iteration that ends, it keeps no result.
var jsStream = goja.MustCompile("stream.js", `llm.stream(body); undefined`, false)

func (s *jsStreams) start(ctx context.Context, n int) (func() int64, func()) {
	before := s.arrived.Total()
	var wg sync.WaitGroup
	for _, v := range s.vus[:n] {
		v.Ctx = ctx
		wg.Go(func() {
			if _, err := v.Runtime().RunProgram(jsStream); err != nil {
				panic(err)
			}
		})
	}
	return func() int64 { return s.arrived.Total() - before }, wg.Wait
}

// writeProfiles writes the heap profile, and in flight the goroutine
// profile, to inflightProfiles (when set) as <benchmark>-<when>-<kind>.
func writeProfiles(b *testing.B, when string) {
	b.Helper()
	if *inflightProfiles == "" {
		return
	}
	kinds := []string{"heap"}
	if when == "inflight" {
		kinds = append(kinds, "goroutine")
	}
	for _, kind := range kinds {
		name := filepath.Join(*inflightProfiles, strings.ReplaceAll(b.Name(), "/", "_")+"-"+when+"-"+kind)
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		debug := 0
		if kind == "goroutine" {
			debug = 1
		}
		err = pprof.Lookup(kind).WriteTo(f, debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatalf("writing %s: %v", name, err)
		}
	}
}
