package summary_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

var (
	num        = summarytest.Num
	gauge      = summarytest.Gauge
	counter    = summarytest.Counter
	vllmTarget = func() summary.ServerTarget { return summarytest.VLLMTarget(100, 5000) }
	dcgmTarget = summarytest.DCGMTarget
)

func bits(v uint64) *uint64 { return &v }

// Each warning comes when its cause is there, and only then.
func TestServerWarnings(t *testing.T) {
	fig := func(ts []summary.ServerTarget, i int, name engines.Figure, f summary.WindowFigure) {
		ts[i].Figures[string(name)] = f
	}
	tests := []struct {
		name string
		edit func(s *summary.Summary, ts []summary.ServerTarget)
		want string // "" for no warning
	}{
		{"the server agrees", nil, ""},
		{"requests: one in flight at the window's edge and 3 % are within", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.Requests, counter("requests", 104))
		}, ""},
		{"requests: more than the tolerance", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.Requests, counter("requests", 110))
		}, "the server finished 110 requests over the measured window, llmrun counted 100 completed, 100 ended"},
		{"requests: fewer than the tolerance", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.Requests, counter("requests", 50))
		}, "of one replica of several"},
		{"requests: the failed ones may have reached the server", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Serving.Requests, s.Serving.Failed = 120, 20
			fig(ts, 0, engines.Requests, counter("requests", 120))
		}, ""},
		{"requests: the VUs in flight widen the edge", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Meta.LoadShape[0].PeakVUs = 20
			fig(ts, 0, engines.Requests, counter("requests", 120))
		}, ""},
		{"requests: so do those the timeline saw in flight", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Timeline = []summary.TimelinePoint{{T: 1, InFlight: 20}}
			fig(ts, 0, engines.Requests, counter("requests", 120))
		}, ""},
		{"output tokens: more than the tolerance", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.GenerationTokens, counter("tokens", 6000))
		}, "the server generated 6000 output tokens over the measured window, llmrun counted 5000 of completed requests"},
		{"output tokens: within 3 % and a request in flight", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.GenerationTokens, counter("tokens", 5200))
		}, ""},
		{"preemptions", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.Preemptions, counter("requests", 3))
		}, "http://gpu-1:8000/metrics preempted 3 requests during the measured window"},
		{"the KV cache full", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.KVCacheUsage, gauge("fraction", 0.9, 0.995))
		}, "the KV cache of http://gpu-1:8000/metrics was full during the measured window (max 99.5 %, mean 90.0 %)"},
		{"the KV cache nearly full is not full", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, 0, engines.KVCacheUsage, gauge("fraction", 0.9, 0.985))
		}, ""},
		{"a GPU idle is not throttled", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1].GPUs[0].ClockEventReasons = bits(0x1)
		}, ""},
		{"nor one whose clocks are set by the operator", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1].GPUs[0].ClockEventReasons = bits(0x2 | 0x100)
		}, ""},
		{"a GPU throttled", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1].GPUs[1].ClockEventReasons = bits(0x1 | 0x4 | 0x40)
		}, "GPU 1 (GPU-1) of http://gpu-1:9400/metrics was throttled during the measured window (software power cap, hardware thermal slowdown)"},
		{"some scrapes failed", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Scrapes.Failed = map[string]int64{"timeout": 2, "refused": 1}
		}, "3 of 14 scrapes of http://gpu-1:8000/metrics failed (refused 1, timeout 2): its figures rest on the 11 that succeeded"},
		{"every scrape failed", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1] = summary.ServerTarget{URL: "http://gpu-2:9400/metrics", Kind: summary.TargetGPU, Scrapes: summary.Scrapes{Failed: map[string]int64{"status": 11}}}
		}, "every scrape of http://gpu-2:9400/metrics failed (status 11): no figures from it"},
		{"skipped scrapes are no failure", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Scrapes.Skipped = 2
		}, ""},
		{"a server without counts is not compared", func(s *summary.Summary, ts []summary.ServerTarget) {
			delete(ts[0].Figures, string(engines.Requests))
			delete(ts[0].Figures, string(engines.GenerationTokens))
			s.Serving.OK = 1
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarytest.Attached(tt.edit)
			got := s.Server.Warnings
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("warnings %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("warnings %q, want one with %q", got, tt.want)
			}
		})
	}
}

// A result with a server section reads back whole, and a file with a
// broken one is refused naming the field.
func TestServerSectionReadsBack(t *testing.T) {
	s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10, 10), summarytest.Streamed(70, 12))
	targets := []summary.ServerTarget{vllmTarget(), dcgmTarget()}
	targets[0].Instance = "1"
	targets[0].Scrapes.Failed = map[string]int64{"timeout": 1}
	targets[0].Series = []summary.ServerPoint{{T: 1, Running: num(2), Waiting: num(0), KVCacheUsage: num(0.1)}, {T: 2, Running: num(1)}}
	targets[1].Series = []summary.ServerPoint{{T: 1, GPUUtilization: num(0.5), GPUPower: num(250)}}
	targets[1].GPUs[0].ClockEventReasons = bits(0x40)
	summarize.AttachServer(s, targets)
	if len(s.Server.Warnings) == 0 {
		t.Fatal("want warnings kept in the file too")
	}
	back, err := summary.ReadJSON(summarytest.WriteResult(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Server, s.Server) {
		a, _ := json.Marshal(back.Server)
		b, _ := json.Marshal(s.Server)
		t.Errorf("read back\n%s\nwant\n%s", a, b)
	}

	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ old, new, want string }{
		{`"kind": "gpu"`, `"kind": "cpu"`, `server.targets[1].kind: "cpu", want "server" or "gpu"`},
		{`"url": "http://gpu-1:8000/metrics"`, `"url": ""`, "server.targets[0].url: missing"},
		{`"ok": 11`, `"ok": -1`, "server.targets[0].scrapes.ok: -1, want a count"},
		{`"le": 0.05`, `"le": 0.03`, "server.targets[0].figures.ttft.buckets[1].le: 0.03, not above the bucket before's 0.04"},
		{`"count": 60`, `"count": 30`, "server.targets[0].figures.ttft.buckets[1].count: 30, below the bucket before's 40 (the counts are cumulative)"},
		{`"count": 95`, `"count": 195`, "server.targets[0].figures.ttft.buckets[4].count: 195, want 0 to the figure's count 100"},
	} {
		bad := strings.Replace(buf.String(), tt.old, tt.new, 1)
		if _, err := summary.Parse("r.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("with %s: error %v, want %q", tt.new, err, tt.want)
		}
	}
}

// A version-3 file, written by llmrun before the server section, reads
// with its version and no server section, and merges into a version-4
// result.
func TestReadVersion3(t *testing.T) {
	s, err := summary.ReadJSON("testdata/v3-result.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != 3 || s.Server != nil || s.Serving.OK != 2 || len(s.Timeline) != 2 {
		t.Errorf("version %d, server %+v, %d completed, %d timeline points: want version 3, no server, 2, 2", s.SchemaVersion, s.Server, s.Serving.OK, len(s.Timeline))
	}
	cur := summarytest.Build(t, 10*time.Second, summarytest.Streamed(60, 10))
	cur.Meta.RunID = "cur"
	summarize.AttachServer(cur, []summary.ServerTarget{vllmTarget()})
	merged, err := summary.Merge(s, cur)
	if err != nil {
		t.Fatal(err)
	}
	if merged.SchemaVersion != 4 || merged.Server == nil || len(merged.Server.Targets) != 1 {
		t.Errorf("merged: version %d, server %+v; want 4 with the one target", merged.SchemaVersion, merged.Server)
	}
}

// Three instances of one run: instance 1 scraped the server and the GPUs,
// the others sent requests only. The merge keeps one copy of each target,
// the scraping instance's, its figures as they were (never summed), its
// series moved to the merged start; the counts are judged against the
// whole run's, which the server saw.
func TestMergeKeepsOneCopyPerTarget(t *testing.T) {
	instance := func(i string, start time.Time, targets ...summary.ServerTarget) *summary.Summary {
		s := summarytest.ClientRun()
		s.Meta.Start, s.Meta.End = start, start.Add(10*time.Second)
		s.Meta.Tags = map[string]string{"instance": i}
		s.Meta.Instances = 3
		s.Serving.Requests, s.Serving.OK, s.Serving.OutputTokens = 100, 100, 5000
		s.Metrics = map[string]summary.MetricSummary{}
		summarize.AttachServer(s, targets)
		return s
	}
	server := vllmTarget()
	server.Figures[string(engines.Requests)] = counter("requests", 300)
	server.Figures[string(engines.GenerationTokens)] = counter("tokens", 15000)
	server.Series = []summary.ServerPoint{{T: 1, Running: num(8)}}
	// Another instance was told of the target but left it to instance 1.
	idle := vllmTarget()
	idle.Scrapes, idle.Figures = summary.Scrapes{Skipped: 11}, nil
	a := instance("0", summarytest.T0.Add(2*time.Second), idle)
	b := instance("1", summarytest.T0.Add(2*time.Second), server, dcgmTarget())
	c := instance("2", summarytest.T0)
	if len(b.Server.Warnings) != 2 {
		t.Fatalf("instance 1 alone: warnings %q, want its counts to disagree with its third of the run", b.Server.Warnings)
	}
	merged, err := summary.Merge(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	sec := merged.Server
	if sec == nil || len(sec.Targets) != 2 {
		t.Fatalf("merged server section %+v, want two targets", sec)
	}
	got := sec.Targets[0]
	if got.Instance != "1" || got.Scrapes.OK != 11 || *got.Figures[string(engines.Requests)].Delta != 300 || *got.Figures[string(engines.Running)].Mean != 7.5 {
		t.Errorf("merged target %+v, want instance 1's copy as it was", got)
	}
	if len(got.Series) != 1 || got.Series[0].T != 3 {
		t.Errorf("series %+v, want its point 2 s later: instance 1 started 2 s after the merged start", got.Series)
	}
	if len(sec.Warnings) != 0 {
		t.Errorf("merged warnings %q, want none: the server's counts are the whole run's", sec.Warnings)
	}
	if e := sec.Energy; e == nil || e.Joules != 1000 || e.OutputTokens != 15000 {
		t.Errorf("merged energy %+v, want 1000 J over the whole run's 15000 tokens", e)
	}
	// In any order.
	again, err := summary.Merge(c, b, a)
	if err != nil || !reflect.DeepEqual(again.Server, sec) {
		t.Errorf("merge in another order: %+v, %v", again.Server, err)
	}
	// Results without a server section merge without one.
	none, err := summary.Merge(c, instance("1", summarytest.T0))
	if err != nil || none.Server != nil {
		t.Errorf("merge without targets: %+v, %v", none.Server, err)
	}
}

// TestMergeJudgesServerThresholdsOnTheMergedSection: in a distributed run
// the instance that scraped the target judged its thresholds, the others
// had no samples and failed them; the merge judges them again on the
// merged section, which has the scraping instance's figures.
func TestMergeJudgesServerThresholdsOnTheMergedSection(t *testing.T) {
	set, err := threshold.Parse([]byte(`{"server_kv_cache_usage": ["max<0.95"], "server_waiting": ["max<2"], "gpu_power": ["max<600"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(nil); err != nil {
		t.Fatal(err)
	}
	instance := func(i string, targets ...summary.ServerTarget) *summary.Summary {
		s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10))
		s.Meta.Tags = map[string]string{"instance": i}
		summarize.AttachServer(s, targets)
		summarize.JudgeServerThresholds(s, set.EvaluateEnd(nil, 10*time.Second, threshold.End{}))
		return s
	}
	scraper, other := instance("0", summarytest.VLLMTarget(2, 4)), instance("1")
	if other.Thresholds[0].Passed {
		t.Fatalf("the instance without a server section: %+v, want no samples, failed", other.Thresholds[0])
	}
	merged, err := summary.Merge(scraper, other)
	if err != nil {
		t.Fatal(err)
	}
	want := []summary.ThresholdResult{
		{Metric: "server_kv_cache_usage", Threshold: "max<0.95", Value: 0.88, Passed: true},
		{Metric: "server_waiting", Threshold: "max<2", Value: 3, Passed: false},
		// No instance had it: the merged outcome, failed.
		{Metric: "gpu_power", Threshold: "max<600", Passed: false, Note: "no samples: no target gave gpu_power's max (noSamples: 'pass' accepts that)"},
	}
	for i, w := range want {
		if got := merged.Thresholds[i]; got != w {
			t.Errorf("merged threshold %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
}
