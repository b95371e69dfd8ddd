package influxdb

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A run's server section lands as documented: an llm_server point per
// target with its window figures, one per GPU, one for the section's
// energy (target _all), and the targets' series as llm_server_series
// points at their own times; the target's URL stored redacted. A run
// without a server section stores neither measurement.
func testServerSection(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	o := startOutput(t, testConfig(s), run)
	sum := testSummary(run.Start)
	targets := summarytest.ServerTargets(3)
	targets[0].URL = "http://user:secret@gpu-1:8000/metrics?key=abc"
	summarize.AttachServer(sum, targets)
	rep := o.Finish(context.Background(), sum)
	if rep.Dropped != 0 || rep.Err != "" {
		t.Fatalf("report %+v", rep)
	}
	where := fmt.Sprintf(" WHERE run_id='%s'", run.ID)
	runTags := row{"run_id": run.ID, "testid": "chat", "env": "ci", "model": "m1,m2"}
	at := run.Start.UTC().Format(time.RFC3339Nano)
	vllm := row{"target": "http://user:xxxxx@gpu-1:8000/metrics?key=xxxxx", "kind": "server", "engine": "vllm"}
	dcgm := row{"target": "http://gpu-1:9400/metrics", "kind": "gpu", "engine": "dcgm"}

	t.Run("llm_server", func(t *testing.T) {
		want := map[string]row{
			"_all/": with(runTags, row{"time": at, "target": "_all", "targets": 2.0, "warnings": float64(len(sum.Server.Warnings)),
				"energy_joules": 1000.0, "energy_method": "counter", "output_tokens": 170.0,
				"joules_per_output_token": 1000.0 / 170, "output_tokens_per_joule": 0.17}),
			"vllm/": with(runTags, vllm, row{"time": at, "version": "0.11.0", "gpus": 0.0,
				"scrapes_ok": 11.0, "scrapes_failed": 2.0, "scrapes_failed_timeout": 2.0, "scrapes_skipped": 1.0,
				"running_mean": 7.5, "running_max": 8.0, "waiting_mean": 0.5, "waiting_max": 3.0,
				"kv_cache_usage_mean": 0.41, "kv_cache_usage_max": 0.88, "preemptions_delta": 2.0,
				"prefix_cache_queries_delta": 2000.0, "prefix_cache_hits_delta": 500.0, "prefix_cache_hit_rate": 0.25,
				"queue_time_p50": 0.002, "queue_time_p90": 0.01, "queue_time_p99": 0.015, "queue_time_count": 100.0, "queue_time_sum": 0.4,
				"prefill_time_p50": 0.02, "prefill_time_p90": 0.05, "prefill_time_p99": 0.08, "prefill_time_count": 100.0, "prefill_time_sum": 2.5,
				"ttft_p50": 0.025, "ttft_p90": 0.07, "ttft_p99": 0.101, "ttft_count": 100.0, "ttft_sum": 3.1}),
			"dcgm/": with(runTags, dcgm, row{"time": at, "gpus": 2.0, "scrapes_ok": 11.0, "scrapes_failed": 0.0, "scrapes_skipped": 0.0,
				"energy_joules": 1000.0, "energy_method": "counter",
				"gpu_utilization_mean": 0.7, "gpu_utilization_max": 1.0, "gpu_power_mean": 100.0, "gpu_power_max": 190.0, "gpu_energy_delta": 1000.0}),
			"dcgm/0": with(runTags, dcgm, row{"time": at, "gpu": "0", "gpu_uuid": "GPU-0", "gpu_model": "NVIDIA H100", "gpu_host": "gpu-1",
				"clock_event_reasons": 4.0, "gpu_utilization_mean": 0.8, "gpu_utilization_max": 1.0, "gpu_power_mean": 60.0, "gpu_power_max": 110.0, "gpu_energy_delta": 600.0}),
			"dcgm/1": with(runTags, dcgm, row{"time": at, "gpu": "1", "gpu_uuid": "GPU-1", "gpu_model": "NVIDIA H100", "gpu_host": "gpu-1",
				"clock_event_reasons": 0.0, "gpu_utilization_mean": 0.6, "gpu_utilization_max": 1.0, "gpu_power_mean": 40.0, "gpu_power_max": 90.0, "gpu_energy_delta": 400.0}),
		}
		got := map[string]row{}
		for _, r := range selectRows(t, s, "SELECT * FROM llm_server"+where) {
			key := fmt.Sprintf("%v/", r["engine"])
			if r["target"] == "_all" {
				key = "_all/"
			}
			if r["gpu"] != nil {
				key += r["gpu"].(string)
			}
			got[key] = r
		}
		if len(got) != len(want) {
			t.Errorf("%d llm_server points, want %d: %v", len(got), len(want), got)
		}
		for k, w := range want {
			if !rowsNear(got[k], w) {
				t.Errorf("llm_server point %s:\ngot  %v\nwant %v", k, got[k], w)
			}
		}
	})

	t.Run("llm_server_series", func(t *testing.T) {
		rows := selectRows(t, s, "SELECT * FROM llm_server_series"+where+` GROUP BY "target"`)
		var want []row
		for _, tags := range []row{dcgm, vllm} {
			for i := 1; i <= 3; i++ {
				w := with(runTags, tags, row{"time": run.Start.Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano)})
				if tags["kind"] == summary.TargetGPU {
					w["gpu_utilization"], w["gpu_power_watts"] = float64(i)/3, 100*float64(i)
				} else {
					w["running"], w["waiting"], w["kv_cache_usage"] = float64(i), 3-float64(i), float64(i)/3
				}
				want = append(want, w)
			}
		}
		// One series per target, in the order of their URLs (the DCGM
		// exporter's first), each in time order.
		if len(rows) != len(want) {
			t.Fatalf("%d llm_server_series points, want %d: %v", len(rows), len(want), rows)
		}
		for i := range want {
			if !rowsNear(rows[i], want[i]) {
				t.Errorf("llm_server_series point %d:\ngot  %v\nwant %v", i, rows[i], want[i])
			}
		}
	})

	t.Run("field types", func(t *testing.T) {
		for m, want := range map[string]map[string]string{
			"llm_server":        {"energy_method": "string", "version": "string", "gpu_uuid": "string", "gpu_model": "string", "gpu_host": "string", "targets": "integer", "warnings": "integer", "output_tokens": "integer", "gpus": "integer", "scrapes_ok": "integer", "scrapes_failed": "integer", "scrapes_failed_timeout": "integer", "scrapes_skipped": "integer", "clock_event_reasons": "integer"},
			"llm_server_series": {},
		} {
			for _, r := range selectRows(t, s, "SHOW FIELD KEYS FROM "+m) {
				k, typ := r["fieldKey"].(string), r["fieldType"].(string)
				if w, ok := want[k]; ok && typ != w || !ok && typ != "float" {
					t.Errorf("%s's field %s is %s, want %s", m, k, typ, map[bool]string{true: w, false: "float"}[ok])
				}
			}
		}
	})

	// ServerHistory reads back what trend judges of each target: every
	// window figure's statistics, the hit rate, the energy, a GPU
	// target's figures as its total's; not the GPUs' or the _all point.
	t.Run("read back", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		other := testRun(t)
		got, err := ServerHistory(ctx, testConfig(s), "chat", []RunRecord{{RunID: run.ID, Time: run.Start}, {RunID: other.ID, Time: run.Start}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[other.ID]; ok || len(got[run.ID]) != 2 {
			t.Fatalf("read back %v, want the run's 2 targets and none of a run not stored", got)
		}
		for i, g := range got[run.ID] {
			w := sum.Server.Targets[len(sum.Server.Targets)-1-i] // the GPU target (kind gpu) sorts first
			if g.URL != w.URL || g.Kind != w.Kind || g.Engine != w.Engine || g.Version != w.Version {
				t.Errorf("target %d: %s %s %s %s, want %s %s %s %s", i, g.URL, g.Kind, g.Engine, g.Version, w.URL, w.Kind, w.Engine, w.Version)
			}
			want := w.Figures
			if w.GPUTotal != nil {
				want = w.GPUTotal.Figures
				if g.GPUTotal == nil || !reflect.DeepEqual(g.GPUTotal.Figures, g.Figures) {
					t.Errorf("GPU target %s: its total's figures %v, want its own", g.URL, g.GPUTotal)
				}
			}
			for name, wf := range want {
				wf.Kind, wf.Unit = "", ""
				if !reflect.DeepEqual(g.Figures[name], wf) {
					t.Errorf("%s's %s: %+v, want %+v", g.URL, name, g.Figures[name], wf)
				}
			}
			if len(g.Figures) != len(want) {
				t.Errorf("%s: %d figures, want %d", g.URL, len(g.Figures), len(want))
			}
			if !reflect.DeepEqual(g.PrefixCacheHitRate, w.PrefixCacheHitRate) || !reflect.DeepEqual(g.Energy, w.Energy) {
				t.Errorf("%s: hit rate %v energy %v, want %v %v", g.URL, g.PrefixCacheHitRate, g.Energy, w.PrefixCacheHitRate, w.Energy)
			}
		}
	})

	t.Run("without a server section", func(t *testing.T) {
		run := testRun(t)
		o := startOutput(t, testConfig(s), run)
		if rep := o.Finish(context.Background(), testSummary(run.Start)); rep.Dropped != 0 || rep.Err != "" {
			t.Fatalf("report %+v", rep)
		}
		for _, m := range []string{"llm_server", "llm_server_series"} {
			if n := countPoints(t, s, m, run.ID); n != 0 {
				t.Errorf("%d %s points of a run without a server section", n, m)
			}
		}
		if n := countPoints(t, s, "llm_run", run.ID); n != 3 {
			t.Errorf("%d llm_run points, want 3: the run was not stored", n)
		}
	})
}

// Each llm_server point of a run has a series of its own, so that none
// overwrites another: a GPU the telemetry names by neither index nor UUID
// is told apart by its place.
func TestServerPointsSeries(t *testing.T) {
	targets := summarytest.ServerTargets(0)
	for i := range targets[1].GPUs {
		targets[1].GPUs[i].ID, targets[1].GPUs[i].UUID = "", ""
	}
	s := testSummary(time.Now())
	summarize.AttachServer(s, targets)
	seen := map[string]bool{}
	for _, p := range serverPoints(s, runTags{id: "r", testID: "chat"}, s.Meta.Start) {
		var key []string
		for _, tag := range p.TagList() {
			key = append(key, tag.Key+"="+tag.Value)
		}
		k := strings.Join(key, ",")
		if seen[k] {
			t.Errorf("two llm_server points of series %s", k)
		}
		seen[k] = true
	}
	if len(seen) != 5 {
		t.Errorf("%d llm_server points, want 5: the section's, two targets', two GPUs'", len(seen))
	}
}

// rowsNear says whether got has want's columns and no other, the numbers
// within 1e-9 relative.
func rowsNear(got, want row) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		wf, wok := w.(float64)
		gf, gok := g.(float64)
		if wok && gok {
			if math.Abs(gf-wf) > 1e-9*math.Max(1, math.Abs(wf)) {
				return false
			}
		} else if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}
