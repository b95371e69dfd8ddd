package llm

import (
	"reflect"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

func TestRegisterMetrics(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m := RegisterMetrics(reg)
	if again := RegisterMetrics(reg); !reflect.DeepEqual(again, m) {
		t.Error("registering twice gave other metrics")
	}
	want := map[string]metrics.Type{
		"llm_requests": metrics.Counter, "llm_failed": metrics.Rate, "llm_errors": metrics.Counter, "llm_interrupted": metrics.Counter, "llm_retries": metrics.Counter,
		"llm_ttft": metrics.Trend, "llm_tpot": metrics.Trend, "llm_itl": metrics.Trend, "llm_e2e": metrics.Trend,
		"llm_ttfb": metrics.Trend, "llm_output_tokens": metrics.Counter, "llm_prompt_tokens": metrics.Counter, "llm_output_tokens_check": metrics.Counter, "llm_reasoning_tokens": metrics.Counter,
		"llm_cached_tokens": metrics.Trend, "llm_prompt_tokens_check": metrics.Counter, "llm_unique_prompt_tokens": metrics.Counter,
		"llm_documents": metrics.Counter,
	}
	all := reg.All()
	if len(all) != len(want) {
		t.Errorf("%d metrics registered, want %d", len(all), len(want))
	}
	for _, def := range all {
		if typ, ok := want[def.Name]; !ok || def.Type != typ || def.Desc == "" || def.Unit == "" {
			t.Errorf("metric %+v", def)
		}
		if def.Name == "llm_cached_tokens" {
			if def.Contains != metrics.Default || def.Unit != "tokens" {
				t.Errorf("llm_cached_tokens is not a count of tokens: %+v", def)
			}
		} else if def.Type == metrics.Trend && (def.Contains != metrics.Time || def.Unit != "ms") {
			t.Errorf("trend %s is not a time in ms", def.Name)
		}
	}
}

func TestAppendSamples(t *testing.T) {
	t.Parallel()
	m := RegisterMetrics(metrics.NewRegistry())
	start := time.Now()
	tags := metrics.NewTagSet(map[string]string{"scenario": "chat"})
	type sample struct {
		metric string
		value  float64
	}
	tests := []struct {
		name string
		res  Result
		want []sample
	}{
		{
			name: "streamed",
			res: Result{OK: true, Stream: true, TTFT: 100, TPOT: 10, E2E: 120, ITL: []float64{8, 12}, Chunks: 3,
				OutputTokens: 3, PromptTokens: 50, Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 120}, {"llm_ttfb", 20}, {"llm_ttft", 100},
				{"llm_tpot", 10}, {"llm_itl", 8}, {"llm_itl", 12}, {"llm_output_tokens", 3}, {"llm_prompt_tokens", 50}},
		},
		{
			name: "cached tokens reported",
			res: Result{OK: true, E2E: 30, Chunks: 1, OutputTokens: 2, PromptTokens: 40, CachedTokens: 32, cachedReported: true,
				Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 30}, {"llm_ttfb", 20}, {"llm_ttft", 0},
				{"llm_output_tokens", 2}, {"llm_prompt_tokens", 40}, {"llm_cached_tokens", 32}},
		},
		{
			// A cache miss is a sample of 0, unlike a server that reports
			// nothing (the "streamed" case).
			name: "no cached tokens reported as 0",
			res: Result{OK: true, E2E: 30, Chunks: 1, OutputTokens: 2, PromptTokens: 40, cachedReported: true,
				Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 30}, {"llm_ttfb", 20}, {"llm_ttft", 0},
				{"llm_output_tokens", 2}, {"llm_prompt_tokens", 40}, {"llm_cached_tokens", 0}},
		},
		{
			// A prompt declared unique counts its tokens and their cached
			// share, 0 included, when the server reports its cache.
			name: "unique prompt, cache reported",
			res: Result{OK: true, E2E: 30, Chunks: 1, OutputTokens: 2, PromptTokens: 40, cachedReported: true, UniquePrompt: true,
				Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 30}, {"llm_ttfb", 20}, {"llm_ttft", 0},
				{"llm_output_tokens", 2}, {"llm_prompt_tokens", 40}, {"llm_cached_tokens", 0},
				{"llm_unique_prompt_tokens", 40}, {"llm_unique_prompt_tokens", 0}},
		},
		{
			name: "unique prompt, no cache reported",
			res: Result{OK: true, E2E: 30, Chunks: 1, OutputTokens: 2, PromptTokens: 40, UniquePrompt: true,
				Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 30}, {"llm_ttfb", 20}, {"llm_ttft", 0},
				{"llm_output_tokens", 2}, {"llm_prompt_tokens", 40}},
		},
		{
			name: "one token, no usage",
			res:  Result{OK: true, Stream: true, TTFT: 100, E2E: 101, Chunks: 1, OutputTokens: 1, Timings: Timings{TTFB: 20}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 101}, {"llm_ttfb", 20}, {"llm_ttft", 100}, {"llm_output_tokens", 1}},
		},
		{
			name: "not streamed",
			res:  Result{OK: true, TTFT: 300, E2E: 300, Chunks: 1, OutputTokens: 9, Timings: Timings{TTFB: 299}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 300}, {"llm_ttfb", 299}, {"llm_ttft", 300}, {"llm_output_tokens", 9}},
		},
		{
			name: "no token",
			res:  Result{OK: true, Stream: true, E2E: 5, Timings: Timings{TTFB: 4}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 5}, {"llm_ttfb", 4}},
		},
		{
			name: "failed",
			res:  Result{Class: ErrHTTP429, Status: 429, E2E: 7, TTFT: 3, ITL: []float64{1}},
			want: []sample{{"llm_requests", 1}, {"llm_failed", 1}, {"llm_errors", 1}},
		},
		{
			name: "retried, then ok",
			res: Result{OK: true, Stream: true, TTFT: 10, E2E: 20, Chunks: 1, OutputTokens: 1, Timings: Timings{TTFB: 5},
				Attempts: 3, Retried: []ErrorClass{ErrHTTP429, ErrConnect}},
			want: []sample{{"llm_retries", 1}, {"llm_retries", 1}, {"llm_requests", 1}, {"llm_failed", 0}, {"llm_e2e", 20}, {"llm_ttfb", 5},
				{"llm_ttft", 10}, {"llm_output_tokens", 1}},
		},
		{
			name: "retried, then failed",
			res:  Result{Class: ErrHTTP5xx, Status: 503, E2E: 7, Attempts: 2, Retried: []ErrorClass{ErrHTTP5xx}},
			want: []sample{{"llm_retries", 1}, {"llm_requests", 1}, {"llm_failed", 1}, {"llm_errors", 1}},
		},
		{
			name: "interrupted",
			res:  Result{Class: ErrCanceled, Status: 200, E2E: 9, TTFT: 3, ITL: []float64{1}, Chunks: 2},
			want: []sample{{"llm_interrupted", 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.Start = start
			var got []sample
			retries := 0
			for _, s := range m.AppendSamples(nil, tags, &tt.res) {
				got = append(got, sample{s.Metric.Name, s.Value})
				if !s.Time.Equal(start.Add(time.Duration(tt.res.E2E) * time.Millisecond)) {
					t.Errorf("%s at %v, want the end of the request", s.Metric.Name, s.Time.Sub(start))
				}
				wantTags := tags
				switch s.Metric {
				case m.Errors:
					wantTags = tags.With("error_class", string(tt.res.Class))
				case m.Retries:
					wantTags = tags.With("error_class", string(tt.res.Retried[retries]))
					retries++
				case m.UniqueCache:
					source := "cached"
					if s.Value == float64(tt.res.PromptTokens) {
						source = "usage"
					}
					wantTags = tags.With("source", source)
				}
				if s.Tags.Key() != wantTags.Key() {
					t.Errorf("%s tags %q, want %q", s.Metric.Name, s.Tags.Key(), wantTags.Key())
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("samples %v\nwant    %v", got, tt.want)
			}
		})
	}
}

func TestAppendSamplesAllocs(t *testing.T) {
	m := RegisterMetrics(metrics.NewRegistry())
	res := &Result{OK: true, Stream: true, TTFT: 1, E2E: 3, TPOT: 1, ITL: []float64{1, 1}, Chunks: 3, OutputTokens: 3,
		PromptTokens: 20, CachedTokens: 16, cachedReported: true, Start: time.Now()}
	buf := make([]metrics.Sample, 0, 16)
	if n := testing.AllocsPerRun(100, func() { buf = m.AppendSamples(buf[:0], nil, res) }); n != 0 {
		t.Errorf("%v allocations per successful request with a reused slice", n)
	}
}
