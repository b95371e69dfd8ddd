package summarize_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// inflatedServer streams 50 words, each a single token in both encodings,
// and reports 55 completion tokens: its usage is 10 % too high.
func inflatedServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 50 {
			word := " the"
			if i%2 == 1 {
				word = " water"
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", word)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":55}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runRequests sends n requests with a client of cfg and builds the summary.
func runRequests(t *testing.T, cfg llm.Config, n int) *summary.Summary {
	t.Helper()
	c, err := llm.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	f := summarytest.NewFixture()
	for range n {
		res := c.Stream(context.Background(), llm.Request{Body: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 50, "ignore_eos": true}})
		if !res.OK {
			t.Fatal(res.Error)
		}
		f.Request(summarytest.Tags("scenario", "default"), res)
	}
	rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: summarytest.Scenarios(t, `{"vus": 1, "duration": "1s"}`),
		Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}
	return summarize.Build(rep, summarytest.Meta)
}

func TestTokenCheckWarnings(t *testing.T) {
	base := inflatedServer(t)
	for _, tt := range []struct {
		tokenizer, source string
		want              []string
	}{
		{"cl100k_base", "tokenizer", []string{"the server's usage says 275 output tokens, the tokenizer counts 250 (9.1 % apart)", "not the model's"}},
		{"", "chunks", []string{"the server's usage says 275 output tokens", "numbering 250 (9.1 % apart)", "several tokens per chunk"}},
	} {
		s := runRequests(t, llm.Config{BaseURL: base, Tokenizer: tt.tokenizer}, 5)
		if len(s.TokenChecks) != 1 {
			t.Fatalf("%s: token checks %+v", tt.source, s.TokenChecks)
		}
		tc := s.TokenChecks[0]
		if tc.Source != tt.source || tc.UsageTokens != 275 || tc.CheckTokens != 250 || tc.Warning == "" {
			t.Errorf("%s: %+v", tt.source, tc)
		}
		var js, con bytes.Buffer
		if err := s.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if err := console.Render(&con, s, textfmt.Style{}); err != nil {
			t.Fatal(err)
		}
		var back struct {
			TokenChecks []summary.TokenCheck `json:"token_checks"`
		}
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.TokenChecks) != 1 || back.TokenChecks[0].Warning != tc.Warning {
			t.Errorf("%s: JSON token checks %+v (%v)", tt.source, back.TokenChecks, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(tc.Warning, w) {
				t.Errorf("%s: warning %q lacks %q", tt.source, tc.Warning, w)
			}
			if !strings.Contains(con.String(), "WARNING: "+tc.Warning) {
				t.Errorf("%s: console lacks the warning:\n%s", tt.source, con.String())
			}
		}
		if s.Serving.OutputTokens != 275 {
			t.Errorf("%s: output tokens %d, want the usage's 275", tt.source, s.Serving.OutputTokens)
		}
	}
}

func TestTokenCheckSimulatorAgrees(t *testing.T) {
	srv := llmsimtest.Start(t, llmsimtest.Fast())
	for _, tok := range []string{"", "cl100k_base", "o200k_base"} {
		s := runRequests(t, llm.Config{BaseURL: srv.URL(), Model: "m", Tokenizer: tok}, 5)
		if len(s.TokenChecks) != 1 || s.TokenChecks[0].Warning != "" || s.TokenChecks[0].DiffPercent != 0 || s.TokenChecks[0].UsageTokens != 250 {
			t.Errorf("tokenizer %q: token checks %+v", tok, s.TokenChecks)
		}
		var con bytes.Buffer
		if err := console.Render(&con, s, textfmt.Style{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(con.String(), "WARNING") {
			t.Errorf("tokenizer %q: console warns:\n%s", tok, con.String())
		}
	}
}
