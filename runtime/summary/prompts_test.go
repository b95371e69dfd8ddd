package summary_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summarize"
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
			f := summarytest.NewFixture()
			tags := summarytest.Tags("scenario", "default", "model", "m")
			for range 4 {
				r := summarytest.Completed("m", 10, 100, 10, tc.usage)
				r.RequestedPromptTokens = tc.requested
				f.Request(tags, r)
			}
			// A request without a length is not in the comparison.
			f.Request(tags, summarytest.Completed("m", 10, 100, 10, 9999))
			s := summarize.Build(&engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}, summarytest.Meta)
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

// TestUniqueCache reports how much of the prompts declared unique the
// server served from its cache, and warns when it served more than a
// template's few tokens of them: the prompts of an earlier run, replayed.
func TestUniqueCache(t *testing.T) {
	tests := []struct {
		name        string
		cached      []float64 // per request, of 512 prompt tokens each
		share       float64
		wantWarning bool
	}{
		{name: "cold", cached: []float64{0, 0, 0, 0}, share: 0},
		{name: "a template block", cached: []float64{16, 16, 16, 16}, share: 3.125},
		{name: "replayed", cached: []float64{0, 496, 512, 512}, share: 74.21875, wantWarning: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := summarytest.NewFixture()
			tags := summarytest.Tags("scenario", "default", "model", "m")
			for _, c := range tc.cached {
				f.Value("llm_unique_prompt_tokens", tags.With("source", "usage"), summarytest.T0, 512)
				f.Value("llm_unique_prompt_tokens", tags.With("source", "cached"), summarytest.T0, c)
			}
			s := summarize.Build(&engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}, summarytest.Meta)
			u := s.UniqueCache
			if u == nil || u.Requests != 4 || u.PromptTokens != 2048 || u.SharePercent != tc.share {
				t.Fatalf("unique prompt cache %+v, want 4 requests, 2048 tokens, %g %%", u, tc.share)
			}
			if (u.Warning != "") != tc.wantWarning || (tc.wantWarning && (u.CachedRequests != 3 || !strings.Contains(u.Warning, "3 of 4 requests") || !strings.Contains(u.Warning, "--seed"))) {
				t.Errorf("warning %q, want one: %v", u.Warning, tc.wantWarning)
			}
		})
	}
	f := summarytest.NewFixture()
	if s := summarize.Build(&engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}, summarytest.Meta); s.UniqueCache != nil {
		t.Errorf("no unique prompt: %+v", s.UniqueCache)
	}
	// Merged results add up, and are judged again: a cold half and a
	// replayed half warn together.
	cold := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summarytest.Meta, UniqueCache: &summary.UniqueCache{Requests: 10, PromptTokens: 5120}}
	hot := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summarytest.Meta,
		UniqueCache: &summary.UniqueCache{Requests: 10, CachedRequests: 10, PromptTokens: 5120, CachedTokens: 5000}}
	m, err := summary.Merge(cold, hot)
	if err != nil {
		t.Fatal(err)
	}
	if u := m.UniqueCache; u == nil || u.Requests != 20 || u.CachedTokens != 5000 || u.Warning == "" {
		t.Errorf("merged unique prompt cache %+v", u)
	}
}

// The replayed-prompts warning gives the fix that fits the run's seed: a
// given seed (--seed, or llmrun bench's fixed one) is replaced by another,
// a drawn one is new at the next run.
func TestUniqueCacheFixFollowsTheSeed(t *testing.T) {
	for _, tc := range []struct {
		seed      int64
		drawn     bool
		want, not string
	}{
		{seed: 0, want: "run with another --seed than 0, or restart the server", not: "without --seed"},
		{seed: 7, want: "run with another --seed than 7", not: "without --seed"},
		{seed: 7, drawn: true, want: "run again (a new seed is drawn) or restart the server", not: "another --seed"},
	} {
		f := summarytest.NewFixture()
		tags := summarytest.Tags("scenario", "default", "model", "m")
		for range 4 {
			f.Value("llm_unique_prompt_tokens", tags.With("source", "usage"), summarytest.T0, 512)
			f.Value("llm_unique_prompt_tokens", tags.With("source", "cached"), summarytest.T0, 512)
		}
		meta := summarytest.Meta
		meta.Seed, meta.SeedDrawn = tc.seed, tc.drawn
		u := summarize.Build(&engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}, meta).UniqueCache
		if u == nil || !strings.Contains(u.Warning, tc.want) || strings.Contains(u.Warning, tc.not) {
			t.Errorf("seed %d (drawn %v): warning %+v, want %q and not %q", tc.seed, tc.drawn, u, tc.want, tc.not)
		}
	}
}
