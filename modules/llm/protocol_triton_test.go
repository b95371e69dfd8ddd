package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/metrics"
)

func TestTritonTranscripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, ct       string
		class          ErrorClass
		tokens, chunks int
		prompt         int
		source         TokenSource
		reason, text   string
	}{
		{"testdata/triton-generate-stream.sse", "text/event-stream", ErrNone, 4, 4, 0, TokensFromChunks, "", " Machine learning is a"},
		{"testdata/triton-vllm-stream.sse", "text/event-stream", ErrNone, 3, 3, 7, TokensFromUsage, "length", "Triton is fast"},
		{"testdata/triton-error.sse", "text/event-stream", ErrStreamError, 0, 1, 0, "", "", ""},
		{"testdata/triton-generate.json", "application/json", ErrNone, 1, 1, 0, TokensFromChunks, "", "What is machine learning? Machine learning is a subset of artificial intelligence"},
	} {
		res := replayAs(t, tc.file, tc.ct, Triton, tritonProtocol{})
		if res.Class != tc.class || res.OutputTokens != tc.tokens || res.Chunks != tc.chunks || res.PromptTokens != tc.prompt ||
			res.FinishReason != tc.reason || (tc.class == ErrNone && (res.Text != tc.text || res.TokenSource != tc.source || res.TTFT <= 0)) {
			t.Errorf("%s: result %+v", tc.file, res)
		}
	}
	res := replayAs(t, "testdata/embeddings.json", "application/json", Embeddings, embeddingsProtocol{})
	if !res.OK || res.Embeddings != 2 || res.Dimensions != 4 || res.PromptTokens != 8 || res.Stream || res.TTFT != 0 || res.Chunks != 0 || res.E2E <= 0 {
		t.Errorf("embeddings: result %+v", res)
	}
}

func TestTritonAndEmbeddingsAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, base := range []string{srv.URL(), srv.URL() + "/v1/"} {
		c, err := NewClient(Config{BaseURL: base, Model: "ensemble"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		res := c.Stream(t.Context(), Request{API: Triton, KeepText: true,
			Body: map[string]any{"text_input": "hello there", "max_tokens": 12, "parameters": map[string]any{"ignore_eos": true}}})
		if !res.OK || res.API != Triton || !res.Stream || res.OutputTokens != 12 || res.Chunks != 12 || res.TokenSource != TokensFromChunks ||
			res.TTFT <= 0 || res.TPOT <= 0 || len(res.ITL) != 11 || res.Text == "" || res.Model != "ensemble" {
			t.Errorf("triton stream: %+v", res)
		}
		// The vLLM backend's optional outputs, a model version, /generate.
		res = c.Stream(t.Context(), Request{API: Triton, KeepText: true, Body: map[string]any{
			"model": "vllm_model", "model_version": 2, "text_input": "hello there", "return_finish_reason": true,
			"return_num_output_tokens": true, "return_num_input_tokens": true,
			"parameters": map[string]any{"max_tokens": 5, "ignore_eos": true}}})
		if !res.OK || res.OutputTokens != 5 || res.Chunks != 5 || res.TokenSource != TokensFromUsage || res.PromptTokens == 0 ||
			res.FinishReason != "length" || res.Model != "vllm_model" {
			t.Errorf("triton vllm outputs: %+v", res)
		}
		res = c.Stream(t.Context(), Request{API: Triton, KeepText: true, Body: map[string]any{
			"text_input": "hi", "parameters": map[string]any{"stream": false, "max_tokens": 6, "ignore_eos": true}}})
		if !res.OK || res.Stream || res.Chunks != 1 || res.TTFT != res.E2E || len(strings.Fields(res.Text)) != 6 {
			t.Errorf("triton generate: %+v", res)
		}

		res = c.Stream(t.Context(), Request{API: Embeddings, Body: map[string]any{"input": []any{"a b c", "d e f g"}}})
		if !res.OK || res.Stream || res.Embeddings != 2 || res.Dimensions != llmsim.DefaultEmbeddingDimensions || res.PromptTokens == 0 ||
			res.TTFT != 0 || res.Chunks != 0 || res.OutputTokens != 0 || res.E2E <= 0 || res.Model != "ensemble" {
			t.Errorf("embeddings: %+v", res)
		}
		res = c.Stream(t.Context(), Request{API: Embeddings, Body: map[string]any{"input": "x", "dimensions": 16, "encoding_format": "base64"}})
		if !res.OK || res.Embeddings != 1 || res.Dimensions != 16 {
			t.Errorf("embeddings base64: %+v", res)
		}
	}
}

func TestTritonAndEmbeddingsFaults(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c, err := NewClient(Config{BaseURL: srv.URL(), Model: "m", IdleTimeout: faultIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	body := map[string]any{"text_input": "hi", "max_tokens": 8, "ignore_eos": true}
	for fault, class := range map[string]ErrorClass{
		"http_5xx":            ErrHTTP5xx,
		"http_429":            ErrHTTP429,
		"refuse":              ErrCut,
		"error_event":         ErrStreamError,
		"early_close;after=0": ErrCut,  // no event at all
		"early_close":         ErrNone, // Triton's stream has no terminator: a cut between events reads as an end
		"reset":               ErrCut,
		"malformed":           ErrDecode,
		"big_line":            ErrNone,
		"wrong_content_type":  ErrDecode,
	} {
		res := c.Stream(t.Context(), Request{API: Triton, Body: body, Headers: map[string]string{llmsim.FaultHeader: fault}})
		if res.Class != class {
			t.Errorf("triton %s: class %q (%s), want %q", fault, res.Class, res.Error, class)
		}
	}
	for fault, class := range map[string]ErrorClass{
		"http_5xx":           ErrHTTP5xx,
		"http_429":           ErrHTTP429,
		"refuse":             ErrCut,
		"wrong_content_type": ErrDecode,
		"error_event":        ErrHTTP4xx, // a mid-stream fault: refused for a request that does not stream
	} {
		res := c.Stream(t.Context(), Request{API: Embeddings, Body: map[string]any{"input": "x"}, Headers: map[string]string{llmsim.FaultHeader: fault}})
		if res.Class != class {
			t.Errorf("embeddings %s: class %q (%s), want %q", fault, res.Class, res.Error, class)
		}
	}
}

func TestTritonAndEmbeddingsRequests(t *testing.T) {
	t.Parallel()
	var got []string
	h := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.EscapedPath()+" "+string(b))
		w.WriteHeader(500)
	}
	srv := httptest.NewServer(http.HandlerFunc(h))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	c.Stream(t.Context(), Request{API: Triton, Body: map[string]any{"text_input": "p", "max_tokens": 3}})
	c.Stream(t.Context(), Request{API: Triton, Body: map[string]any{"text_input": "p", "model": "a b", "model_version": "3", "stream": false}})
	c.Stream(t.Context(), Request{API: Triton, Body: map[string]any{"text_input": "p", "parameters": map[string]any{"stream": false, "temperature": 0}}})
	c.Stream(t.Context(), Request{API: Embeddings, Body: map[string]any{"input": "p"}})
	want := []string{
		`/v2/models/m/generate_stream {"max_tokens":3,"parameters":{"stream":true},"text_input":"p"}`,
		`/v2/models/a%20b/versions/3/generate {"parameters":{"stream":false},"stream":false,"text_input":"p"}`,
		`/v2/models/m/generate {"parameters":{"stream":false,"temperature":0},"text_input":"p"}`,
		`/v1/embeddings {"input":"p","model":"m"}`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests\n%q\nwant\n%q", got, want)
	}

	noModel, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{
		{API: Triton, Body: map[string]any{"text_input": "p"}},
		{API: Triton, Body: map[string]any{"text_input": "p", "model": "m", "parameters": map[string]any{"stream": "yes"}}},
		{API: Embeddings, Body: map[string]any{"input": "p", "stream": true}},
		{API: Embeddings, Body: map[string]any{"prompt": "p"}},
	} {
		if res := noModel.Stream(t.Context(), req); res.Class != ErrInvalidRequest {
			t.Errorf("%v: result %+v, want invalid_request", req.Body, res)
		}
	}
	if len(got) != 4 {
		t.Errorf("invalid requests were sent: %q", got[4:])
	}
}

// An embeddings request gives E2E and prompt tokens, and no TTFT, TPOT,
// ITL nor output tokens.
func TestEmbeddingsSamples(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m := RegisterMetrics(reg)
	r := &Result{OK: true, API: Embeddings, E2E: 12, PromptTokens: 8, Embeddings: 2, Dimensions: 4, Start: time.Now()}
	names := map[string]float64{}
	for _, s := range m.AppendSamples(nil, metrics.NewTagSet(nil), r) {
		names[s.Metric.Name] += s.Value
	}
	for _, name := range []string{"llm_ttft", "llm_tpot", "llm_itl", "llm_output_tokens"} {
		if _, ok := names[name]; ok {
			t.Errorf("sample of %s", name)
		}
	}
	if names["llm_requests"] != 1 || names["llm_e2e"] != 12 || names["llm_prompt_tokens"] != 8 {
		t.Errorf("samples %v", names)
	}
}

func FuzzTritonStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, func(rr *responseReader, body io.Reader, res *Result) error { return rr.readTriton(body, true, res) })
		if res == nil {
			return
		}
		if res.Chunks < 0 || res.TokenSource == TokensFromChunks && res.OutputTokens != res.Chunks || len(res.ITL) != max(res.Chunks-1, 0) {
			t.Fatalf("result %+v", res)
		}
	})
}

// TestTritonCountsLeftOut checks that counts a response leaves out (or
// gives as null) are absent, not reported, and that zero counts are.
func TestTritonCountsLeftOut(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string][2]int{
		`{"text_output":"a"}`: {absentCount, absentCount},
		`{"text_output":"a","num_output_tokens":null,"num_input_tokens":null}`: {absentCount, absentCount},
		`{"text_output":"a","num_output_tokens":[0],"num_input_tokens":0}`:     {0, 0},
	} {
		var r tritonResponse
		if err := decodeTriton([]byte(doc), &r); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		tally := tritonTally{output: absentCount, input: absentCount}
		tally.add(&r)
		if tally.output != want[0] || tally.input != want[1] {
			t.Errorf("%s: counts %d, %d; want %d, %d", doc, tally.output, tally.input, want[0], want[1])
		}
		res := Result{OK: true, Chunks: 1, PromptTokens: 7}
		tally.finish(&res)
		source, output, prompt := TokensFromUsage, 0, 0
		if want[0] == absentCount {
			source, output, prompt = TokensFromChunks, 1, 7
		}
		if res.TokenSource != source || res.OutputTokens != output || res.PromptTokens != prompt {
			t.Errorf("%s: %s, %d output tokens, %d prompt tokens; want %s, %d, %d", doc, res.TokenSource, res.OutputTokens, res.PromptTokens, source, output, prompt)
		}
		if err := res.checkServerNumbers(); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

// TestTritonReadFailureCountsEventsWithData checks that a Triton stream
// whose reading fails names the events read as Triton counts them: those
// with data, not a keep-alive without.
func TestTritonReadFailureCountsEventsWithData(t *testing.T) {
	t.Parallel()
	rr := getResponseReader()
	defer rr.release()
	res := &Result{Start: time.Now()}
	body := io.MultiReader(strings.NewReader("data: \n\ndata: {\"text_output\":\"a\"}\n\n"), iotest.ErrReader(errors.New("connection reset")))
	err := rr.readTriton(body, false, res)
	if err == nil || !strings.Contains(err.Error(), "reading the stream after 1 events") {
		t.Errorf("error %v, want one event read", err)
	}
}
