package llm

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// replayResponses replays a Responses API transcript one byte at a time.
func replayResponses(t *testing.T, file string) *Result {
	t.Helper()
	return replayAs(t, file, "text/event-stream", Responses, responsesProtocol{})
}

// The transcripts of testdata/responses-*.sse (their sources in
// testdata/responses-SOURCES.md), read as vLLM and OpenAI stream them.
func TestResponsesTranscripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                         string
		class                        ErrorClass
		errorHas                     string
		chunks, reasoningChunks      int
		tokens, prompt, cached, rsng int
		reason, text, id             string
	}{
		// Three text deltas; the message and part events carry no token.
		{"testdata/responses-text.sse", ErrNone, "", 3, 0, 5, 21, 16, 0, "completed", "Paged attention saves memory.", "resp_6f2a9c"},
		// Two reasoning text deltas and a summary delta, then a function
		// call whose two argument deltas are answer chunks.
		{"testdata/responses-reasoning-tools.sse", ErrNone, "", 5, 3, 31, 84, 0, 18, "completed", "", "resp_b71e04"},
		{"testdata/responses-incomplete.sse", ErrNone, "", 2, 0, 2, 7, 0, 0, "max_output_tokens", "Once upon", "resp_c0ffee"},
		{"testdata/responses-failed.sse", ErrStreamError, "The model failed to generate a response.", 1, 0, 0, 0, 0, 0, "", "", "resp_dead01"},
		{"testdata/responses-error.sse", ErrStreamError, "ERR_SOMETHING", 0, 0, 0, 0, 0, 0, "", "", "resp_e1"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			res := replayResponses(t, tc.file)
			if res.Class != tc.class || !strings.Contains(res.Error, tc.errorHas) {
				t.Fatalf("class %q (%s), want %q with %q", res.Class, res.Error, tc.class, tc.errorHas)
			}
			if res.Chunks != tc.chunks || res.ReasoningChunks != tc.reasoningChunks || res.ResponseID != tc.id {
				t.Errorf("chunks %d (reasoning %d), response id %q; want %d (%d), %q", res.Chunks, res.ReasoningChunks, res.ResponseID, tc.chunks, tc.reasoningChunks, tc.id)
			}
			if tc.class != ErrNone {
				return
			}
			if res.OutputTokens != tc.tokens || res.TokenSource != TokensFromUsage || res.PromptTokens != tc.prompt ||
				res.CachedTokens != tc.cached || !res.cachedReported || res.ReasoningTokens != tc.rsng {
				t.Errorf("tokens %d (%s), prompt %d, cached %d, reasoning %d; want %d from usage, %d, %d, %d",
					res.OutputTokens, res.TokenSource, res.PromptTokens, res.CachedTokens, res.ReasoningTokens, tc.tokens, tc.prompt, tc.cached, tc.rsng)
			}
			if res.FinishReason != tc.reason || res.Text != tc.text {
				t.Errorf("finish %q text %q, want %q %q", res.FinishReason, res.Text, tc.reason, tc.text)
			}
			if res.TTFT <= 0 || res.TTFO < res.TTFT || res.E2E < res.TTFO || len(res.ITL) != tc.chunks-1 {
				t.Errorf("ttft %v ttfo %v e2e %v, %d gaps", res.TTFT, res.TTFO, res.E2E, len(res.ITL))
			}
			if (tc.reasoningChunks > 0) != (res.TTFO > res.TTFT) {
				t.Errorf("ttfo %v vs ttft %v: the answer comes after the reasoning only when there is reasoning", res.TTFO, res.TTFT)
			}
		})
	}
	res := replayResponses(t, "testdata/responses-reasoning-tools.sse")
	want := ToolCall{ID: "call_7f3", Type: "function", Name: "get_weather", Arguments: `{"city": "Paris"}`}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0] != want {
		t.Errorf("tool calls %+v, want [%+v]", res.ToolCalls, want)
	}
}

// Streams that stop early or carry what the client cannot read fail by
// class; a whole response object is read as one answer.
func TestResponsesReadFailures(t *testing.T) {
	t.Parallel()
	const delta = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"a\"}\n\n"
	for name, tc := range map[string]struct {
		ct, body string
		class    ErrorClass
	}{
		"no response.completed":   {"text/event-stream", delta, ErrCut},
		"bad delta":               {"text/event-stream", "data: {\"type\":\"response.output_text.delta\",\"delta\":5}\n\n", ErrDecode},
		"error not json":          {"text/event-stream", "event: error\ndata: Internal server error\n\n", ErrStreamError},
		"error without data":      {"text/event-stream", "event: error\ndata:\n\n", ErrStreamError},
		"arguments of no call":    {"text/event-stream", "data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}\n\n", ErrDecode},
		"failed without response": {"text/event-stream", delta + "data: {\"type\":\"response.failed\"}\n\n", ErrStreamError},
		"whole failed":            {"application/json", `{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"boom"}}`, ErrStreamError},
		"whole not json":          {"application/json", `{"id":`, ErrDecode},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := &Result{Start: time.Now()}
			rr := getResponseReader()
			defer rr.release()
			class := ErrNone
			if err := (responsesProtocol{}).read(rr, tc.ct, strings.NewReader(tc.body), false, res); err != nil {
				class = err.(*failure).class
			}
			if class != tc.class {
				t.Errorf("class %q, want %q (result %+v)", class, tc.class, res)
			}
		})
	}
}

func TestResponsesWholeResponse(t *testing.T) {
	t.Parallel()
	body := `{"id":"resp_9","object":"response","status":"completed","output":[
		{"type":"reasoning","summary":[{"type":"summary_text","text":"Think."}],"content":[{"type":"reasoning_text","text":"Hmm."}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi ","annotations":[]},{"type":"output_text","text":"there.","annotations":[]}]},
		{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}],
		"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":4},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2}}}`
	res := &Result{Start: time.Now()}
	rr := getResponseReader()
	defer rr.release()
	if err := (responsesProtocol{}).read(rr, "application/json", strings.NewReader(body), true, res); err != nil {
		t.Fatal(err)
	}
	if res.Stream || res.Chunks != 1 || res.TTFT != res.E2E || res.TTFO != res.E2E || res.Text != "Hi there." || res.ResponseID != "resp_9" ||
		res.OutputTokens != 6 || res.PromptTokens != 9 || res.CachedTokens != 4 || res.ReasoningTokens != 2 || res.FinishReason != "completed" ||
		len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "f" || res.ToolCalls[0].ID != "call_1" {
		t.Errorf("result %+v", res)
	}
}

// responsesClient is a client of srv's Responses API with the given idle
// timeout (0: the default), closed with the test.
func responsesClient(t *testing.T, srv *llmsim.Running, idle time.Duration) *Client {
	t.Helper()
	c, err := NewClient(Config{BaseURL: srv.URL(), API: Responses, IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// responsesBody is a Responses request for n tokens.
func responsesBody(n int, stream bool) map[string]any {
	return map[string]any{"input": "hello there", "instructions": "Be brief.", "max_output_tokens": n, "ignore_eos": true, "stream": stream}
}

func TestResponsesAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, base := range []string{srv.URL(), srv.URL() + "/", srv.URL() + "/v1"} {
		c, err := NewClient(Config{BaseURL: base, Model: "m", API: Responses})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		res := c.Stream(t.Context(), Request{Body: responsesBody(12, true), KeepText: true})
		if !res.OK {
			t.Fatalf("%s: %s: %s", base, res.Class, res.Error)
		}
		if res.API != Responses || !res.Stream || res.OutputTokens != 12 || res.Chunks != 12 || res.TokenSource != TokensFromUsage ||
			res.TTFT <= 0 || res.TTFO != res.TTFT || res.TPOT <= 0 || len(res.ITL) != 11 || res.FinishReason != "max_output_tokens" ||
			res.Text == "" || res.Model != "m" || res.PromptTokens == 0 || !strings.HasPrefix(res.ResponseID, "resp_") {
			t.Errorf("%s: result %+v", base, res)
		}
		whole := c.Stream(t.Context(), Request{Body: responsesBody(5, false), KeepText: true})
		if !whole.OK || whole.Stream || whole.OutputTokens != 5 || whole.Chunks != 1 || whole.TTFT != whole.E2E ||
			whole.FinishReason != "max_output_tokens" || whole.Text == "" || whole.PromptTokens != res.PromptTokens || whole.ResponseID == "" {
			t.Errorf("%s: whole result %+v", base, whole)
		}
	}
	c := responsesClient(t, srv, 0)
	res := c.Stream(t.Context(), Request{Body: map[string]any{"input": "hi", "max_output_tokens": 4000}})
	if !res.OK || res.FinishReason != "completed" || res.OutputTokens != res.Chunks {
		t.Errorf("natural end: result %+v", res)
	}
	// input is required: refused before sending.
	res = c.Stream(t.Context(), Request{Body: map[string]any{"instructions": "x"}})
	if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, `"input"`) {
		t.Errorf("no input: result %+v", res)
	}
	if st := srv.Server().Stats(); st.Rejected != 0 {
		t.Errorf("simulator rejected %d requests", st.Rejected)
	}
}

// A response continued by previous_response_id is prompted with the
// stored conversation before the new input; an unknown id is a 404.
func TestResponsesContinuation(t *testing.T) {
	t.Parallel()
	c := responsesClient(t, startSim(t), 0)
	first := c.Stream(t.Context(), Request{Body: responsesBody(6, true)})
	alone := c.Stream(t.Context(), Request{Body: map[string]any{"input": "and then?", "max_output_tokens": 6, "ignore_eos": true}})
	next := c.Stream(t.Context(), Request{Body: map[string]any{"input": "and then?", "max_output_tokens": 6, "ignore_eos": true, "previous_response_id": first.ResponseID}})
	if !first.OK || !alone.OK || !next.OK {
		t.Fatalf("results %+v\n%+v\n%+v", first, alone, next)
	}
	// The continued prompt holds the first turn's input and its 6-token
	// reply, not its instructions.
	if next.PromptTokens <= alone.PromptTokens+6 {
		t.Errorf("continued prompt %d tokens, the input alone %d: the first turn is missing", next.PromptTokens, alone.PromptTokens)
	}
	res := c.Stream(t.Context(), Request{Body: map[string]any{"input": "x", "previous_response_id": "resp_unknown"}})
	if res.Class != ErrHTTP4xx || res.Status != 404 || !strings.Contains(res.Error, "resp_unknown") {
		t.Errorf("unknown previous_response_id: %s %d %s", res.Class, res.Status, res.Error)
	}
	unstored := c.Stream(t.Context(), Request{Body: map[string]any{"input": "x", "max_output_tokens": 2, "store": false}})
	res = c.Stream(t.Context(), Request{Body: map[string]any{"input": "x", "previous_response_id": unstored.ResponseID}})
	if !unstored.OK || res.Status != 404 {
		t.Errorf("a response with store false was continued: %+v then %s %d", unstored, res.Class, res.Status)
	}
}

// With tools and tool_choice "required", the simulator's reply is a call
// of the first tool, streamed as function-call argument deltas.
func TestResponsesToolCallFromSimulator(t *testing.T) {
	t.Parallel()
	c := responsesClient(t, startSim(t), 0)
	tools := []any{map[string]any{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object"}}}
	for _, stream := range []bool{true, false} {
		body := responsesBody(4, stream)
		body["tools"], body["tool_choice"] = tools, "required"
		res := c.Stream(t.Context(), Request{Body: body, KeepText: true})
		if !res.OK || len(res.ToolCalls) != 1 || res.Text != "" {
			t.Fatalf("stream %v: result %+v", stream, res)
		}
		call := res.ToolCalls[0]
		var args map[string]string
		if call.Name != "get_weather" || call.Type != "function" || !strings.HasPrefix(call.ID, "call_") || json.Unmarshal([]byte(call.Arguments), &args) != nil || args["input"] == "" {
			t.Errorf("stream %v: tool call %+v", stream, call)
		}
		if stream && (res.Chunks != 4 || res.OutputTokens != 4 || res.TTFO != res.TTFT) {
			t.Errorf("streamed call: %d chunks, %d tokens, ttft %v ttfo %v", res.Chunks, res.OutputTokens, res.TTFT, res.TTFO)
		}
	}
}

func TestResponsesFaults(t *testing.T) {
	t.Parallel()
	c := responsesClient(t, startSim(t), faultIdle)
	for fault, class := range map[string]ErrorClass{
		"http_5xx":           ErrHTTP5xx,
		"http_429":           ErrHTTP429,
		"refuse":             ErrCut,
		"error_event":        ErrStreamError,
		"early_close":        ErrCut,
		"reset":              ErrCut,
		"malformed":          ErrDecode,
		"wrong_content_type": ErrDecode,
		"big_line":           ErrNone, // 2 MiB is under the line limit
	} {
		res := c.Stream(t.Context(), Request{Body: responsesBody(8, true), Headers: map[string]string{llmsim.FaultHeader: fault}})
		if res.Class != class {
			t.Errorf("%s: class %q (%s), want %q", fault, res.Class, res.Error, class)
		}
		if fault == "error_event" && !strings.Contains(res.Error, "response failed: llmsim injected fault error_event") {
			t.Errorf("error_event message %q", res.Error)
		}
	}
	res := c.Stream(t.Context(), Request{Body: map[string]any{"input": "x", "max_output_tokens": 0}})
	if res.Status != 400 || !strings.Contains(res.Error, "max_output_tokens") {
		t.Errorf("max_output_tokens 0: %s %d %s", res.Class, res.Status, res.Error)
	}
}

// FuzzResponsesStream feeds arbitrary bytes, seeded with the transcripts
// in testdata, through the Responses stream reader: it must never panic,
// and what it reports must hold together.
func FuzzResponsesStream(f *testing.F) {
	seedTranscripts(f, "testdata/responses-*.sse")
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, func(rr *responseReader, body io.Reader, res *Result) error {
			return responsesProtocol{}.read(rr, "text/event-stream", body, true, res)
		})
		if res == nil {
			return
		}
		if res.Chunks < 0 || res.ReasoningChunks > res.Chunks || len(res.ITL) != max(res.Chunks-1, 0) || res.E2E < res.TTFT || res.TTFO < res.TTFT {
			t.Fatalf("inconsistent result %+v", res)
		}
	})
}

// seedTranscripts adds the transcripts pattern matches to f's seeds.
func seedTranscripts(f *testing.F, pattern string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed transcripts %s: %v", pattern, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// TestDecodeResponsesDeltaEvent: a delta event decodes without
// allocating, and to what encoding/json makes of it; events the fast
// path does not read decode as encoding/json decodes them.
func TestDecodeResponsesDeltaEvent(t *testing.T) {
	delta := []byte(`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":2,"content_index":0,"delta":" word","logprobs":[]}`)
	var e responsesEvent
	if allocs := testing.AllocsPerRun(100, func() {
		if err := decodeResponsesEvent(delta, &e); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("a delta event: %v allocations, want 0", allocs)
	}
	for _, data := range []string{
		string(delta),
		`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"q\":"}`,
		`{"type":"response.reasoning_summary_text.delta","delta":null}`,
		`{"Type":"response.output_text.delta","Delta":"x","OUTPUT_INDEX":3}`,
		`{"type":"response.output_text.delta","delta":"a","type":"response.completed"}`,
		`{"type":"response.output_text.delta","delta":"\u00e9"}`,
		`{"type":"response.output_text.delta","output_index":1.5,"delta":"a"}`,
		`{"type":"response.output_text.delta","output_index":null,"delta":"a"}`,
		`{"type":"response.completed","response":{"id":"resp_1"}}`,
		`{"type":"error","code":"x","message":"y"}`,
		`{"type":"response.output_text\u002edelta","delta":"a"}`,
	} {
		var got, want responsesEvent
		gotErr := decodeResponsesEvent([]byte(data), &got)
		wantErr := json.Unmarshal([]byte(data), &want)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, %v; encoding/json %+v, %v", data, got, gotErr, want, wantErr)
		}
	}
	for _, data := range []string{`{"type":"response.output_text.delta","delta":5}`, `{"type":"response.output_text.delta","delta":"a"`} {
		if err := decodeResponsesEvent([]byte(data), &e); err == nil {
			t.Errorf("%s: decoded, want an error", data)
		}
	}
}
