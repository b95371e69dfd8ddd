package llm

import (
	"testing"

	"github.com/dop251/goja"
)

// benchResult is a completed streamed request as a script usually sees
// it: timings, usage, a tool call, no text nor ITL kept.
func benchResult() *Result {
	return &Result{
		OK: true, Status: 200, Attempts: 1, Proto: "HTTP/1.1", API: ChatCompletions, Model: "m", Stream: true,
		TTFT: 41.5, TTFO: 41.5, TPOT: 3.25, E2E: 450.75, Chunks: 128, OutputTokens: 128, TokenSource: TokensFromUsage,
		PromptTokens: 512, CachedTokens: 256, FinishReason: "stop", CheckTokens: 128, CheckSource: TokensFromChunks,
		ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Timings:   Timings{Queue: 0.25, DNS: 0.5, Connect: 1, TLS: 2, TTFB: 40},
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
			b.ReportAllocs()
			for b.Loop() {
				resultObject(rt, r, tc.withITL)
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
		`"embeddings":0,"dimensions":0,"timings":{"queue":0.25,"dns":0.5,"connect":1,"tls":2,"ttfb":40}`
	tests := []struct {
		name    string
		edit    func(*Result)
		withITL bool
		want    string
	}{
		{"plain", func(*Result) {}, false, common + `"checkTokens":128,"checkSource":"chunks",` + calls + `}`},
		{"itl", func(*Result) {}, true, common + `"checkTokens":128,"checkSource":"chunks",` + calls + `,"itl":[3,3.5,2.5],"itlFolded":0}`},
		{"no check", func(r *Result) { r.CheckTokens, r.CheckSource = 0, "" }, false, common + calls + `}`},
		{"server timings", func(r *Result) { r.ServerTimings = map[string]float64{"eval": 3.5} }, false,
			common + `"checkTokens":128,"checkSource":"chunks",` + calls + `,"serverTimings":{"eval":3.5}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := *r
			tc.edit(&r)
			rt := goja.New()
			if err := rt.Set("result", resultObject(rt, &r, tc.withITL)); err != nil {
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
