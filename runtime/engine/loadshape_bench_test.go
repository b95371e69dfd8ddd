package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/standard"
)

// benchEngine loads src as a script for a benchmark, aimed at baseURL.
func benchEngine(b *testing.B, baseURL, src string) *Engine {
	b.Helper()
	return benchEngineEnv(b, baseURL, src, nil)
}

// benchEngineEnv is benchEngine whose script reads env as __ENV.
func benchEngineEnv(b testing.TB, baseURL, src string, env map[string]string) *Engine {
	b.Helper()
	path := filepath.Join(b.TempDir(), "script.js")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	e, err := Load(context.Background(), Config{ScriptPath: path, Seed: 1, Logger: slog.New(slog.DiscardHandler), Env: env,
		LLM: llm.Config{BaseURL: baseURL, Model: testModel}, Modules: standard.Modules(standard.Options{Seed: 1})})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEnginePacing runs a constant-arrival-rate scenario on real VUs
// for one second and reports the iteration_lag percentiles the run
// recorded: with empty iterations ("empty"), and with one streamed 4-token
// request per iteration to a fast in-process simulator ("sim"), which
// shares the CPUs.
func BenchmarkEnginePacing(b *testing.B) {
	for _, tc := range []struct {
		kind string
		rate int
	}{{"empty", 100}, {"empty", 1000}, {"empty", 5000}, {"sim", 100}, {"sim", 1000}, {"sim", 5000}} {
		b.Run(fmt.Sprintf("%s-rate-%d", tc.kind, tc.rate), func(b *testing.B) {
			var p50, p99, dropped, n float64
			body := ""
			baseURL := "http://127.0.0.1:1/v1"
			if tc.kind == "sim" {
				cfg := llmsim.DefaultConfig()
				cfg.MaxNumSeqs = 4096
				cfg.PrefillBase, cfg.PrefillPerToken = 200*time.Microsecond, 0
				cfg.DecodeBase, cfg.DecodePerSeq = 200*time.Microsecond, 0
				baseURL = llmsimtest.Start(b, cfg).URL() + "/v1"
				body = "llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ignore_eos: true });"
			}
			for b.Loop() {
				e := benchEngine(b, baseURL, fmt.Sprintf(`
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: %d, duration: '1s', preAllocatedVUs: 50, maxVUs: 500 } } };
export default function () { %s }
`, tc.rate, body))
				rep, err := e.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				lag := rep.Snapshot.Stats("iteration_lag", nil)
				p50 += lag.Percentile(50)
				p99 += lag.Percentile(99)
				dropped += sum(rep, "dropped_iterations", nil)
				n++
			}
			b.ReportMetric(p50/n*1000, "lag-p50-µs")
			b.ReportMetric(p99/n*1000, "lag-p99-µs")
			b.ReportMetric(dropped/n, "dropped")
		})
	}
}

// idleVUScript is a small realistic scenario: the llm client, a check,
// a custom metric and some prompts.
const idleVUScript = `
import llm from 'llm';
import { check } from 'llmrun';
import { Trend } from 'metrics';
const ttft = new Trend('chat_ttft', true);
const prompts = ['Explain continuous batching.', 'Write a haiku about GPUs.', 'Summarise the plot of Hamlet in three lines.'];
export const options = {
  scenarios: { chat: { executor: 'constant-arrival-rate', rate: 10, duration: '1m', preAllocatedVUs: 10, tags: { workload: 'chat' } } },
};
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: prompts[__ITER % prompts.length] }], max_tokens: 128 });
  check(r, { ok: (r) => r.ok, 'full answer': (r) => r.outputTokens === 128 });
  ttft.add(r.ttft);
}
`

// BenchmarkIdleVUMemory initialises n VUs of a script, bound to their
// scenario as the engine does (sharing its tags), and reports the heap each one holds once
// idle: a small realistic script, bench/stream.js (e2eload's) and
// examples/mixed-workload.js (three scenarios, the data module, a client
// each). "stream.js-after-request" is bench/stream.js's VUs idle again
// after each ran one iteration (a streamed 10-token answer from a local
// server): what a VU keeps between its requests.
func BenchmarkIdleVUMemory(b *testing.B) {
	srv := tenTokenServer(b)
	type script struct {
		name, src    string
		afterRequest bool
		env          map[string]string
	}
	scripts := []script{{name: "small", src: idleVUScript}}
	for _, path := range []string{"../../bench/stream.js", "../../examples/mixed-workload.js"} {
		src, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		scripts = append(scripts, script{name: filepath.Base(path), src: string(src)})
	}
	// A Kubernetes pod's environment names every service of its
	// namespace: 100 variables of 40 bytes.
	podEnv := make(map[string]string, 100)
	for i := range 100 {
		podEnv[fmt.Sprintf("SERVICE_%02d_PORT_8080_TCP", i)] = fmt.Sprintf("tcp://10.96.%d.1:8080", i)
	}
	scripts = append(scripts, script{name: "stream.js-after-request", src: scripts[1].src, afterRequest: true},
		script{name: "stream.js-env-100", src: scripts[1].src, env: podEnv})
	for _, script := range scripts {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/vus-%d", script.name, n), func(b *testing.B) {
				e := benchEngineEnv(b, srv.URL+"/v1", script.src, script.env)
				var perVU float64
				for b.Loop() {
					perVU = idleVUHeap(b, e, n, script.afterRequest)
				}
				if script.afterRequest {
					if got := sum(&Report{Snapshot: e.agg.Snapshot()}, "llm_requests", nil); got < float64(n) {
						b.Fatalf("%v requests counted, want at least %d", got, n)
					}
				}
				b.ReportMetric(perVU, "bytes/VU")
				b.ReportMetric(perVU/1024, "KiB/VU")
			})
		}
	}
}

// tenTokenServer is a server that streams tenTokenStream to every request.
func tenTokenServer(t testing.TB) *httptest.Server {
	stream := []byte(tenTokenStream())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// idleVUHeap initialises n VUs of e's script, bound to its first
// scenario as the engine does (sharing its tags), each after one
// iteration if afterRequest, and returns the heap each one holds once
// idle.
func idleVUHeap(t testing.TB, e *Engine, n int, afterRequest bool) float64 {
	t.Helper()
	tags := metrics.NewTagSet(scenarioTags(&e.scenarios[0], e.options.Tags))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	vus := make([]*vu, n)
	for i := range vus {
		v, err := e.newVU(context.Background(), int64(i+1), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.bind(&e.scenarios[0], tags, nil, e.live[0]); err != nil {
			t.Fatal(err)
		}
		if afterRequest {
			v.RunIteration(context.Background())
		}
		vus[i] = v
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(vus)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// TestIdleVUMemory bounds the heap an idle VU holds, so that a change
// that gives back what was cut fails here (BenchmarkIdleVUMemory gives
// the figures). The bounds are a little above what a VU took when they
// were set; the collector's timing moves a measurement by far less.
func TestIdleVUMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("initialises 1,500 VUs: no short test bounds a VU's heap, which only many VUs measure (BenchmarkIdleVUMemory gives the figures)")
	}
	srv := tenTokenServer(t)
	tests := []struct {
		script       string
		afterRequest bool
		maxBytes     float64
	}{
		// 19.2, 25.4 and 61.7 KB while module.exports was __toCommonJS's
		// copy of the script's namespace (runtime/js namespaceExports);
		// 16.2, 22.4 and 56.0 KB while __export took
		// Object.getOwnPropertyNames; 15.3, 21.8 and 53.8 KB before a
		// module's exports were made on their first read
		// (modules.LazyExports), 12.9, 20.3 and 51.9 KB after.
		{"../../bench/stream.js", false, 13300},
		{"../../bench/stream.js", true, 20800},
		{"../../examples/mixed-workload.js", false, 53000},
	}
	for _, tt := range tests {
		src, err := os.ReadFile(tt.script)
		if err != nil {
			t.Fatal(err)
		}
		e := benchEngineEnv(t, srv.URL+"/v1", string(src), nil)
		perVU := idleVUHeap(t, e, 500, tt.afterRequest)
		t.Logf("%s (after a request: %v): %.0f bytes per idle VU", filepath.Base(tt.script), tt.afterRequest, perVU)
		if perVU > tt.maxBytes {
			t.Errorf("%s (after a request: %v): %.0f bytes per idle VU, want at most %.0f", filepath.Base(tt.script), tt.afterRequest, perVU, tt.maxBytes)
		}
	}
}
