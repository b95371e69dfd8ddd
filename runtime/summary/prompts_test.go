package summary_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime"
	"github.com/llmrun/llmrun/runtime/summary"
)

// TestPromptCheck compares the prompt lengths asked for with the server's
// counts: a chat template's few tokens pass, a tokenizer mismatch warns,
// and requests that gave no length are left out.
func TestPromptCheck(t *testing.T) {
	tests := []struct {
		name                 string
		requested, usage     int
		wantPerRequest       float64
		wantWarning, noCheck bool
	}{
		{name: "exact", requested: 500, usage: 500},
		{name: "a chat template", requested: 500, usage: 530, wantPerRequest: 30},
		{name: "a short prompt with its template", requested: 20, usage: 40, wantPerRequest: 20},
		{name: "another tokenizer", requested: 500, usage: 700, wantPerRequest: 200, wantWarning: true},
		{name: "another tokenizer, fewer tokens", requested: 1000, usage: 900, wantPerRequest: -100, wantWarning: true},
		{name: "no length given", noCheck: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			tags := tagSet("scenario", "default", "model", "m")
			for range 4 {
				r := okResult("m", 10, 100, 10, tc.usage)
				r.RequestedPromptTokens = tc.requested
				f.request(tags, r)
			}
			// A request without a length is not in the comparison.
			f.request(tags, okResult("m", 10, 100, 10, 9999))
			s := summary.Build(&runtime.Report{Snapshot: f.agg.Snapshot(), Registry: f.reg, Start: t0, End: t0.Add(time.Second)}, testMeta)
			pc := s.PromptCheck
			if tc.noCheck {
				if pc != nil {
					t.Fatalf("prompt check %+v for requests that gave no length", pc)
				}
				return
			}
			if pc == nil || pc.Requests != 4 || pc.RequestedTokens != int64(4*tc.requested) || pc.UsageTokens != int64(4*tc.usage) || pc.PerRequest != tc.wantPerRequest {
				t.Fatalf("prompt check %+v", pc)
			}
			if (pc.Warning != "") != tc.wantWarning || (tc.wantWarning && !strings.Contains(pc.Warning, "--tokenizer")) {
				t.Errorf("warning %q, want one: %v", pc.Warning, tc.wantWarning)
			}
		})
	}
}
