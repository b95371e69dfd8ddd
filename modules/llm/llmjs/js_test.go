package llmjs

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// newJSVU returns a VU running an iteration of scenario "test" with m's
// exports as the global "llm".
func newJSVU(t *testing.T, m *Module) *modulestest.VU {
	t.Helper()
	v := modulestest.NewVU(t)
	v.Expose("llm", m)
	v.LeaveInit()
	return v
}

// clientConfigs returns the configurations of m's clients (a client's
// key is its configuration as JSON).
func clientConfigs(t *testing.T, m *Module) []llm.Config {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []llm.Config
	for key := range m.clients {
		var cfg llm.Config
		if err := json.Unmarshal([]byte(key), &cfg); err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
	}
	return out
}

// jsResult is the JSON of a result object.
type jsResult struct {
	OK              bool      `json:"ok"`
	Status          int       `json:"status"`
	Error           string    `json:"error"`
	ErrorClass      string    `json:"errorClass"`
	API             string    `json:"api"`
	Model           string    `json:"model"`
	Stream          bool      `json:"stream"`
	TTFT            float64   `json:"ttft"`
	TTFO            float64   `json:"ttfo"`
	TPOT            float64   `json:"tpot"`
	E2E             float64   `json:"e2e"`
	ITL             []float64 `json:"itl"`
	Chunks          int       `json:"chunks"`
	OutputTokens    int       `json:"outputTokens"`
	PromptTokens    int       `json:"promptTokens"`
	ReasoningTokens int       `json:"reasoningTokens"`
	TokenSource     string    `json:"tokenSource"`
	FinishReason    string    `json:"finishReason"`
	Text            *string   `json:"text"`
	RetryAfter      float64   `json:"retryAfter"`
	Attempts        int       `json:"attempts"`
	Retried         []string  `json:"retried"`
	Proto           string    `json:"proto"`
	Timings         struct {
		Queue, DNS, Connect, TLS, TTFB float64
	} `json:"timings"`
}

// stream evaluates expr (a result object) in v and decodes it.
func stream(t *testing.T, v *modulestest.VU, expr string) jsResult {
	t.Helper()
	var r jsResult
	s := v.Run(`JSON.stringify(` + expr + `)`).String()
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("result %s: %v", s, err)
	}
	if !strings.Contains(s, `"itl"`) {
		r.ITL = nil
	}
	return r
}

const jsModel = "js-test-model"

// startJSSim starts a simulator with 1 ms prefill and decode steps and
// returns a module aimed at it.
func startJSSim(t *testing.T) (*llmsim.Running, *Module) {
	t.Helper()
	srv, m, _ := startRecordedJSSim(t)
	return srv, m
}

// startRecordedJSSim is startJSSim with a module whose hooks record
// everything.
func startRecordedJSSim(t *testing.T) (*llmsim.Running, *Module, *recorded) {
	t.Helper()
	srv := startSim(t)
	m, rec := newRecordedModule(t, llm.Config{BaseURL: srv.URL(), Model: jsModel})
	return srv, m, rec
}

// body is a chat request for n tokens; its prompt counts 8 tokens for the
// simulator (3 per message, 2 for 'hello there' in cl100k_base, 3 for the
// reply).
func body(n int) string {
	return `{ messages: [{ role: 'user', content: 'hello there' }], max_tokens: ` + itoa(n) + `, ignore_eos: true, temperature: 0 }`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestJSStreamResult(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	r := stream(t, v, `llm.stream(`+body(16)+`)`)

	if !r.OK || r.Status != 200 || r.Error != "" || r.ErrorClass != "" {
		t.Fatalf("result %+v, want ok with status 200", r)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"api chat", r.API == "chat"},
		{"model from the defaults", r.Model == jsModel},
		{"streamed", r.Stream},
		{"outputTokens == max_tokens", r.OutputTokens == 16},
		{"promptTokens from usage", r.PromptTokens == 8},
		{"no reasoning", r.ReasoningTokens == 0},
		{"tokenSource usage", r.TokenSource == "usage"},
		{"finishReason length", r.FinishReason == "length"},
		{"ttft > 0", r.TTFT > 0},
		{"ttfo == ttft without reasoning", r.TTFO == r.TTFT},
		{"tpot > 0", r.TPOT > 0},
		{"e2e >= ttft", r.E2E >= r.TTFT},
		{"tpot == (e2e - ttft) / 15", approx(r.TPOT, (r.E2E-r.TTFT)/15)},
		{"chunks between 1 and 16", r.Chunks >= 1 && r.Chunks <= 16},
		{"ttfb > 0", r.Timings.TTFB > 0},
		{"ttfb <= ttft", r.Timings.TTFB <= r.TTFT},
		{"text empty unless asked", r.Text != nil && *r.Text == ""},
		{"no itl unless asked", r.ITL == nil},
		{"one attempt", r.Attempts == 1 && r.Retried != nil && len(r.Retried) == 0},
		{"no retryAfter", r.RetryAfter == 0},
		{"HTTP/1.1", r.Proto == "HTTP/1.1"},
		{"a new connection", r.Timings.Connect > 0 && r.Timings.TLS == 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: result %+v", c.what, r)
		}
	}

	base := "model:" + jsModel + ",scenario:test"
	want := []struct {
		metric string
		count  int64
		sum    float64
	}{
		{"llm_requests", 1, 1},
		{"llm_failed", 1, 0},
		{"llm_output_tokens", 1, 16},
		{"llm_prompt_tokens", 1, 8},
		{"llm_ttft", 1, r.TTFT},
		{"llm_tpot", 1, r.TPOT},
		{"llm_e2e", 1, r.E2E},
		{"llm_ttfb", 1, r.Timings.TTFB},
		{"llm_itl", int64(r.Chunks - 1), -1},
	}
	for _, w := range want {
		st := v.Series(w.metric)[base]
		if st == nil {
			t.Errorf("no %s{%s} series among %v", w.metric, base, v.Series(w.metric))
			continue
		}
		if st.Count != w.count || (w.sum >= 0 && !approx(st.Sum, w.sum)) {
			t.Errorf("%s{%s}: count %d sum %v, want %d and %v", w.metric, base, st.Count, st.Sum, w.count, w.sum)
		}
	}
	for _, name := range []string{"llm_errors", "llm_interrupted"} {
		if s := v.Series(name); len(s) != 0 {
			t.Errorf("%s recorded for an ok request: %v", name, s)
		}
	}
}

func approx(a, b float64) bool {
	d := a - b
	return d < 1e-6 && d > -1e-6
}

func TestJSStreamTextAndITL(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	r := stream(t, v, `llm.stream(`+body(12)+`, { text: true, itl: true })`)
	if !r.OK || r.OutputTokens != 12 {
		t.Fatalf("result %+v, want ok with 12 tokens", r)
	}
	if r.Text == nil || len(strings.Fields(*r.Text)) != 12 {
		t.Errorf("text %q, want the 12 generated words", deref(r.Text))
	}
	if len(r.ITL) != r.Chunks-1 {
		t.Fatalf("itl has %d gaps for %d chunks, want chunks-1", len(r.ITL), r.Chunks)
	}
	total := 0.0
	for _, g := range r.ITL {
		if g < 0 {
			t.Errorf("negative gap %v in %v", g, r.ITL)
		}
		total += g
	}
	if total > r.E2E-r.TTFT+1e-6 {
		t.Errorf("gaps sum to %v ms, more than e2e - ttft = %v", total, r.E2E-r.TTFT)
	}
	if st := v.Series("llm_itl")["model:"+jsModel+",scenario:test"]; st == nil || st.Count != int64(len(r.ITL)) || !approx(st.Sum, total) {
		t.Errorf("llm_itl = %+v, want the result's %d gaps summing to %v", st, len(r.ITL), total)
	}
}

// A VU reuses the array of gaps from one request to the next: the gaps a
// script kept from an earlier request stay its own, and each request
// reports only its own gaps, however long the one before.
func TestJSStreamITLAcrossRequests(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	got := v.Run(`(() => {
  const first = llm.stream(` + body(12) + `, { itl: true });
  const kept = JSON.stringify(first.itl);
  const second = llm.stream(` + body(4) + `, { itl: true });
  const third = llm.stream(` + body(8) + `, { itl: true });
  return [first.itl.length, JSON.stringify(first.itl) === kept, second.itl.length, third.itl.length].join(' ');
})()`).String()
	if got != "11 true 3 7" {
		t.Errorf("gaps of three requests (12, 4 and 8 tokens) and whether the first's stayed as they were: %q, want \"11 true 3 7\"", got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestJSStreamTags(t *testing.T) {
	tests := []struct {
		name, call, key string
	}{
		{"per-request tags with the default model", `llm.stream(` + body(2) + `, { tags: { kind: 'x', n: 1 } })`,
			"kind:x,model:" + jsModel + ",n:1,scenario:test"},
		{"the body's model", `llm.stream({ model: 'other-model', prompt: 'hi', max_tokens: 2 }, { tags: { kind: 'y' } })`,
			"kind:y,model:other-model,scenario:test"},
		{"a client's model", `llm.client({ model: 'client-model' }).stream(` + body(2) + `)`,
			"model:client-model,scenario:test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, m := startJSSim(t)
			v := newJSVU(t, m)
			if r := stream(t, v, tc.call); !r.OK {
				t.Fatalf("result %+v", r)
			}
			for _, name := range []string{"llm_requests", "llm_failed", "llm_e2e", "llm_output_tokens"} {
				s := v.Series(name)
				if len(s) != 1 || s[tc.key] == nil {
					t.Errorf("%s series %v, want one tagged %s", name, s, tc.key)
				}
			}
		})
	}
}

func TestJSStreamFailure(t *testing.T) {
	cfg := llm.Config{BaseURL: "http://127.0.0.1:1", Model: jsModel}
	t.Run("returned", func(t *testing.T) {
		m, rec := newRecordedModule(t, cfg)
		v := newJSVU(t, m)
		r := stream(t, v, `llm.stream(`+body(4)+`)`)
		if r.OK || r.ErrorClass != "connect" || r.Error == "" || r.Status != 0 || r.OutputTokens != 0 {
			t.Errorf("result %+v, want a connect failure", r)
		}
		assertFailureRecorded(t, v, rec)
	})
	t.Run("thrown", func(t *testing.T) {
		m, rec := newRecordedModule(t, cfg)
		v := newJSVU(t, m)
		msg := v.Run(`
let msg = 'no exception';
try { llm.stream(` + body(4) + `, { throw: true }); } catch (e) { msg = String(e); }
msg;`).String()
		if !strings.Contains(msg, "llm request failed (connect)") {
			t.Errorf("caught %q, want the request's failure", msg)
		}
		assertFailureRecorded(t, v, rec)
	})
}

func assertFailureRecorded(t *testing.T, v *modulestest.VU, rec *recorded) {
	t.Helper()
	base := "model:" + jsModel + ",scenario:test"
	if st := v.Series("llm_failed")[base]; st == nil || st.Count != 1 || st.NonZero != 1 {
		t.Errorf("llm_failed{%s} = %+v, want one failure", base, st)
	}
	if st := v.Series("llm_requests")[base]; st == nil || st.Sum != 1 {
		t.Errorf("llm_requests{%s} = %+v, want 1", base, st)
	}
	if st := v.Series("llm_errors")["error_class:connect,"+base]; st == nil || st.Sum != 1 {
		t.Errorf("llm_errors = %v, want 1 of class connect", v.Series("llm_errors"))
	}
	for _, name := range []string{"llm_ttft", "llm_e2e", "llm_output_tokens", "llm_interrupted"} {
		if s := v.Series(name); len(s) != 0 {
			t.Errorf("%s recorded for a failed request: %v", name, s)
		}
	}
	if e := rec.Errors(); len(e) != 1 || e[0].Class != "connect" || !strings.Contains(e[0].Message, "refused") {
		t.Errorf("errors recorded %v, want the connect failure's message", e)
	}
}

func TestJSClientsAreSharedBetweenVUs(t *testing.T) {
	srv, m := startJSSim(t)
	a, b := newJSVU(t, m), newJSVU(t, m)
	// Clients are made in the init context, as scripts do.
	a.EnterInit()
	b.EnterInit()
	opts := `{ baseURL: '` + srv.URL() + `/v1', model: 'shared' }`
	a.Run(`const c = llm.client(` + opts + `); [c.model, c.baseURL].join(' ')`)
	got := b.Run(`const c = llm.client(` + opts + `); [c.model, c.baseURL].join(' ')`).String()
	if want := "shared " + srv.URL() + "/v1"; got != want {
		t.Errorf("client shows %q, want %q", got, want)
	}
	if n := len(m.clients); n != 1 {
		t.Errorf("%d clients for one configuration in two VUs, want 1", n)
	}
	b.Run(`llm.client({ baseURL: '` + srv.URL() + `/v1', model: 'another' })`)
	if n := len(m.clients); n != 2 {
		t.Errorf("%d clients for two configurations, want 2", n)
	}

	a.LeaveInit()
	b.LeaveInit()
	for _, v := range []*modulestest.VU{a, b} {
		if r := stream(t, v, `c.stream(`+body(2)+`)`); !r.OK || r.Model != "shared" {
			t.Errorf("shared client's request: %+v", r)
		}
		// The default client is shared too.
		if r := stream(t, v, `llm.stream(`+body(2)+`)`); !r.OK || r.Model != jsModel {
			t.Errorf("default client's request: %+v", r)
		}
	}
	if n := len(m.clients); n != 3 {
		t.Errorf("%d clients after the default one was used by two VUs, want 3", n)
	}
}

func TestJSStreamErrors(t *testing.T) {
	_, m := startJSSim(t)
	tests := []struct {
		name, src, want string
		init            bool
	}{
		{"stream in init", `llm.stream(` + body(2) + `)`,
			"TypeError: llm.stream() cannot be called in the init context", true},
		{"client stream in init", `llm.client({ model: 'm' }).stream(` + body(2) + `)`,
			"TypeError: llm.stream() cannot be called in the init context", true},
		{"no body", `llm.stream()`, "TypeError: llm.stream(body): body must be an object", false},
		{"null body", `llm.stream(null)`, "TypeError: llm.stream(body): body must be an object", false},
		{"string body", `llm.stream('hello')`, "TypeError: llm.stream(body): body must be an object", false},
		{"client: bad timeout string", `llm.client({ timeout: 'soon' })`,
			`TypeError: llm.client(options): timeout: "soon" is not a duration like "30s"`, true},
		{"client: negative timeout", `llm.client({ timeout: -5 })`, "TypeError: llm.client(options): timeout: must be positive", true},
		{"client: zero timeout", `llm.client({ timeout: 0 })`, "timeout: must be positive", true},
		{"client: huge timeout", `llm.client({ timeout: 1e300 })`, "timeout: 1e+300 milliseconds exceeds llmrun's limit of 8760h0m0s (365 days) for a duration", true},
		{"client: NaN timeout", `llm.client({ timeout: NaN })`, "timeout: must be a finite duration, got NaN", true},
		{"client: huge timeout string", `llm.client({ timeout: '9000h' })`, "timeout: 9000h exceeds llmrun's limit", true},
		{"client: timeout of another type", `llm.client({ timeout: true })`, "timeout: want milliseconds or a duration string", true},
		{"stream: bad timeout", `llm.stream(` + body(2) + `, { timeout: '5 parsecs' })`,
			`TypeError: llm.stream(body, options): timeout: "5 parsecs" is not a duration`, false},
		{"stream: negative timeout", `llm.stream(` + body(2) + `, { timeout: '-1s' })`, "timeout: must be positive", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newJSVU(t, m)
			if tc.init {
				v.EnterInit()
			}
			_, err := v.Runtime().RunString(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if n := len(v.Aggregator.Snapshot().Series()); n != 0 {
				t.Errorf("a refused call recorded %d series", n)
			}
		})
	}
}

func TestJSNoBaseURL(t *testing.T) {
	m, err := NewModule(llm.Config{}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	_, err = v.Runtime().RunString(`llm.stream(` + body(2) + `)`)
	if err == nil || !strings.Contains(err.Error(), "no base URL") {
		t.Fatalf("error %v, want one saying there is no base URL", err)
	}
}

func TestJSRequestWithoutMessagesNorPrompt(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	r := stream(t, v, `llm.stream({ max_tokens: 4 })`)
	if r.OK || r.ErrorClass != "invalid_request" || !strings.Contains(r.Error, `"messages"`) {
		t.Errorf("result %+v, want an invalid_request failure", r)
	}
}

func TestJSTimeouts(t *testing.T) {
	t.Run("client option", func(t *testing.T) {
		tests := []struct {
			timeout string
			want    time.Duration
		}{
			{"1500", 1500 * time.Millisecond},
			{"2.5", 2500 * time.Microsecond},
			{"'30s'", 30 * time.Second},
			{"' 2m '", 2 * time.Minute},
		}
		for _, tc := range tests {
			srv, m := startJSSim(t)
			v := newJSVU(t, m)
			v.Run(`llm.client({ baseURL: '` + srv.URL() + `', timeout: ` + tc.timeout + ` })`)
			cfgs := clientConfigs(t, m)
			if len(cfgs) != 1 {
				t.Fatalf("%d clients", len(cfgs))
			}
			if cfgs[0].Timeout != tc.want {
				t.Errorf("timeout %s: client timeout %v, want %v", tc.timeout, cfgs[0].Timeout, tc.want)
			}
		}
	})
	t.Run("request option", func(t *testing.T) {
		_, m := startJSSim(t)
		tests := []struct {
			timeout string
			ok      bool
		}{
			{"50", false},
			{"'50ms'", false},
			{"'30s'", true},
			{"30000", true},
		}
		for _, tc := range tests {
			v := newJSVU(t, m)
			// 3000 tokens at 1 ms per decode step: at least 3 s.
			n := 3000
			if tc.ok {
				n = 4
			}
			r := stream(t, v, `llm.stream(`+body(n)+`, { timeout: `+tc.timeout+` })`)
			if tc.ok {
				if !r.OK {
					t.Errorf("timeout %s: result %+v, want ok", tc.timeout, r)
				}
				continue
			}
			if r.OK || r.ErrorClass != "timeout" || !strings.Contains(r.Error, "timed out after 50ms") {
				t.Errorf("timeout %s: result %+v, want a timeout after 50ms", tc.timeout, r)
			}
			if st := v.Series("llm_errors")["error_class:timeout,model:"+jsModel+",scenario:test"]; st == nil || st.Sum != 1 {
				t.Errorf("timeout %s: llm_errors = %v", tc.timeout, v.Series("llm_errors"))
			}
		}
	})
}

// TestJSStreamLength pins the length scripts see of stream(body, options),
// bound as a goja.FunctionCall: llm.stream's and a client's.
func TestJSStreamLength(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	if got := v.Run(`[llm.stream.length, llm.client({}).stream.length].join(',')`).String(); got != "2,2" {
		t.Errorf("stream lengths = %s, want 2,2", got)
	}
}

// A result object keeps its values after the VU's next requests, which
// reuse what the module made for the first, ended otherwise: with fewer
// tokens, or failed.
func TestJSResultsOutliveTheirRequests(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	got := v.Run(`(() => {
  const first = llm.stream(` + body(12) + `, { itl: true });
  const kept = JSON.stringify(first);
  const second = llm.stream(` + body(4) + `);
  const failed = llm.stream(` + body(4) + `, { timeout: '1us' });
  return [JSON.stringify(first) === kept, first.outputTokens, first.itl.length, second.outputTokens, failed.ok, failed.errorClass].join(' ');
})()`).String()
	if want := "true 12 11 4 false timeout"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBaseURLSchemeIsAConfigError(t *testing.T) {
	for _, raw := range []string{"ftp://host/v1", "file:///etc/passwd", "ws://host:8000"} {
		if _, err := NewModule(llm.Config{BaseURL: raw}, Hooks{}); err == nil || !strings.Contains(err.Error(), "scheme must be http or https") {
			t.Errorf("NewModule(%q): error %v, want one about the scheme", raw, err)
		}
	}
	if _, err := NewModule(llm.Config{BaseURL: "ftp://alice:PassW0rd@host/v1"}, Hooks{}); err == nil || strings.Contains(err.Error(), "PassW0rd") {
		t.Errorf("error %v, want one without the password", err)
	}
	m, err := NewModule(llm.Config{}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	_, err = v.Runtime().RunString(`llm.client({ baseURL: 'ftp://host/v1' })`)
	if err == nil || !strings.Contains(err.Error(), `invalid base URL "ftp://host/v1": the scheme must be http or https, not "ftp"`) {
		t.Fatalf("llm.client with an ftp base URL: error %v, want an invalid base URL", err)
	}
}

// A script's body backed by a Go map (an object of llmrun/config, which
// exports to the map behind it) is the script's: sending it leaves it as
// it was, and a second client sending it sends its own model, not the
// first request's.
func TestScriptGoMapBodyStaysTheScripts(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		okStream(w, r)
	}))
	t.Cleanup(srv.Close)
	m, err := NewModule(llm.Config{BaseURL: srv.URL, Model: "first"}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	v.SetGlobal("body", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"extra_body": map[string]any{"top_k": 5}})
	asSent := func() any { // the body as JSON, whatever its keys' order
		var b any
		if err := json.Unmarshal([]byte(v.Run(`JSON.stringify(body)`).String()), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := asSent()
	v.Run(`llm.stream(body); llm.client({ model: 'second' }).stream(body)`)
	if after := asSent(); !reflect.DeepEqual(after, before) {
		t.Errorf("the script's body became %v, want %v", after, before)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `"model":"first"`) || !strings.Contains(bodies[1], `"model":"second"`) {
		t.Errorf("bodies sent %q, want the first client's model, then the second's", bodies)
	}
}
