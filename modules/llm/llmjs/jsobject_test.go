package llmjs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/llmrun/llmrun/modules/llm"
)

// benchResult is a completed streamed request as a script usually sees
// it: timings, usage, a tool call, no text nor ITL kept.
func benchResult() *llm.Result {
	return &llm.Result{
		OK: true, Status: 200, Attempts: 1, Proto: "HTTP/1.1", API: llm.ChatCompletions, Model: "m", Stream: true,
		TTFT: 41.5, TTFO: 41.5, TPOT: 3.25, E2E: 450.75, Chunks: 128, OutputTokens: 128, TokenSource: llm.TokensFromUsage,
		PromptTokens: 512, CachedTokens: 256, FinishReason: "stop", CheckTokens: 128, CheckSource: llm.TokensFromChunks,
		ToolCalls: []llm.ToolCall{{ID: "call_1", Type: "function", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Timings:   llm.Timings{Queue: 0.25, DNS: 0.5, Connect: 1, TLS: 2, TTFB: 40},
		ITL:       []float64{3, 3.5, 2.5},
	}
}

// BenchmarkResultObject measures building the object llm.stream()
// returns, which every request pays for.
func BenchmarkResultObject(b *testing.B) {
	for _, tc := range []struct {
		name    string
		withITL bool
	}{{"plain", false}, {"itl", true}} {
		b.Run(tc.name, func(b *testing.B) {
			rt := goja.New()
			r := benchResult()
			var results jsResults
			b.ReportAllocs()
			for b.Loop() {
				results.object(rt, r, tc.withITL)
			}
		})
	}
}

// The result object has the properties scripts know, in this order, with
// these values: the optional ITL ones only when asked for, checkTokens and
// checkSource only with a check source, serverTimings only when the
// server reported some; requestedPromptTokens and uniquePrompt never.
func TestResultObjectProperties(t *testing.T) {
	r := benchResult()
	r.RequestedPromptTokens, r.UniquePrompt = 512, true
	const common = `{"ok":true,"status":200,"error":"","errorClass":"","retryAfter":0,"attempts":1,"retried":[],"proto":"HTTP/1.1",` +
		`"api":"chat","model":"m","stream":true,"ttft":41.5,"ttfo":41.5,"tpot":3.25,"e2e":450.75,"chunks":128,"outputTokens":128,` +
		`"promptTokens":512,"cachedTokens":256,"reasoningTokens":0,"reasoningChunks":0,"tokenSource":"usage","finishReason":"stop",` +
		`"text":"","textTruncated":false,`
	const calls = `"toolCalls":[{"id":"call_1","type":"function","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],` +
		`"embeddings":0,"dimensions":0,"imageCount":0,"imageBytes":0,"imagePixels":0,"timings":{"queue":0.25,"dns":0.5,"connect":1,"tls":2,"ttfb":40}`
	tests := []struct {
		name    string
		edit    func(*llm.Result)
		withITL bool
		want    string
	}{
		{"plain", func(*llm.Result) {}, false, common + `"checkTokens":128,"checkSource":"chunks",` + calls + `}`},
		{"itl", func(*llm.Result) {}, true, common + `"checkTokens":128,"checkSource":"chunks",` + calls + `,"itl":[3,3.5,2.5],"itlFolded":0}`},
		{"no check", func(r *llm.Result) { r.CheckTokens, r.CheckSource = 0, "" }, false, common + calls + `}`},
		{"server timings", func(r *llm.Result) { r.ServerTimings = map[string]float64{"eval": 3.5} }, false,
			common + `"checkTokens":128,"checkSource":"chunks",` + calls + `,"serverTimings":{"eval":3.5}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := *r
			tc.edit(&r)
			rt := goja.New()
			if err := rt.Set("result", new(jsResults).object(rt, &r, tc.withITL)); err != nil {
				t.Fatal(err)
			}
			if got := rt.Get("result").ToObject(rt).String(); got != "[object Object]" {
				t.Errorf("result is %s", got)
			}
			got, err := rt.RunString(`JSON.stringify(result)`)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("result\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A script's setters on Object.prototype do not run when its results are
// built: the properties are its own all the same.
func TestResultObjectIgnoresPrototypeSetters(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`globalThis.hit = [];
		for (const k of ['ok', 'ttft', 'timings', 'toolCalls', 'queue', 'id']) {
			Object.defineProperty(Object.prototype, k, { set() { hit.push(k); throw new Error('gotcha') }, configurable: true });
		}`)
	got := v.Run(`const r = llm.stream({ prompt: 'hi', max_tokens: 3 });
		JSON.stringify([hit, r.ok, Object.keys(r.timings).length, Object.prototype.hasOwnProperty.call(r, 'ttft')])`)
	if got.String() != `[[],true,5,true]` {
		t.Errorf("got %s", got)
	}
}

// Results built by one VU share no object: a script that changes one
// result (its properties, its nested timings, arrays and tool calls), or
// freezes it, changes no other. Every property is an ordinary writable,
// enumerable, configurable data property of an extensible object whose
// prototype is Object.prototype.
func TestResultObjectsAreIndependent(t *testing.T) {
	rt := goja.New()
	var results jsResults
	for _, name := range []string{"a", "b"} {
		if err := rt.Set(name, results.object(rt, benchResult(), true)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := rt.RunString(`
		const want = JSON.stringify(b);
		const flags = Object.keys(a).map((k) => {
			const d = Object.getOwnPropertyDescriptor(a, k);
			return d.writable && d.enumerable && d.configurable && !('get' in d);
		});
		a.model = 'other'; a.ttft = -1; a.extra = 1; delete a.ok;
		a.timings.queue = 99; a.retried.push('cut'); a.toolCalls[0].name = 'x'; a.toolCalls.push({}); a.itl[0] = 7;
		Object.freeze(a.timings); Object.freeze(a);
		JSON.stringify([JSON.stringify(b) === want, flags.every(Boolean), Object.isExtensible(b), Object.isFrozen(a),
			Object.getPrototypeOf(b) === Object.prototype, Object.getPrototypeOf(b.timings) === Object.prototype,
			Array.isArray(b.retried), Array.isArray(b.toolCalls), Array.isArray(b.itl), Object.keys(b).length])`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[true,true,true,true,true,true,true,true,true,36]`; got.String() != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The values a VU keeps for its results stay bounded, however many
// distinct strings and numbers its results hold; long strings are not
// kept.
func TestResultValuesStayBounded(t *testing.T) {
	rt := goja.New()
	var results jsResults
	for n := range 3 * maxCachedValues {
		r := benchResult()
		r.Model, r.PromptTokens = fmt.Sprintf("model-%d", n), 1000+n
		r.Error = strings.Repeat("x", maxCachedString+1) + fmt.Sprint(n)
		obj := results.object(rt, r, false)
		if got := obj.Get("model").String(); got != r.Model {
			t.Fatalf("model %q, want %q", got, r.Model)
		}
		if got := obj.Get("promptTokens").ToInteger(); got != int64(r.PromptTokens) {
			t.Fatalf("promptTokens %d, want %d", got, r.PromptTokens)
		}
		if got := obj.Get("error").String(); got != r.Error {
			t.Fatalf("error %q, want %q", got, r.Error)
		}
	}
	if len(results.strings) > maxCachedValues || len(results.ints) > maxCachedValues {
		t.Errorf("%d strings and %d numbers kept, want at most %d each", len(results.strings), len(results.ints), maxCachedValues)
	}
	for s := range results.strings {
		if len(s) > maxCachedString {
			t.Errorf("kept a string of %d bytes", len(s))
		}
	}
}
