package llmsim

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// dcgmFields are the fields GET /dcgm/metrics serves, with their types in
// dcgm-exporter's etc/default-counters.csv.
var dcgmFields = map[string]dto.MetricType{
	"DCGM_FI_DEV_SM_CLOCK":                 dto.MetricType_GAUGE,
	"DCGM_FI_DEV_GPU_TEMP":                 dto.MetricType_GAUGE,
	"DCGM_FI_DEV_POWER_USAGE":              dto.MetricType_GAUGE,
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": dto.MetricType_COUNTER,
	"DCGM_FI_DEV_GPU_UTIL":                 dto.MetricType_GAUGE,
	"DCGM_FI_DEV_FB_FREE":                  dto.MetricType_GAUGE,
	"DCGM_FI_DEV_FB_USED":                  dto.MetricType_GAUGE,
}

// TestDCGMFamilies scrapes a real simulator with two GPUs: every field of
// its type, one series per GPU with dcgm-exporter's labels, the GPUs told
// apart by gpu, UUID and device, and an idle GPU at its idle power.
func TestDCGMFamilies(t *testing.T) {
	cfg := fastConfig()
	cfg.GPUs = 2
	r := listen(t, cfg)
	fams := scrape(t, r, "/dcgm/metrics")
	if len(fams) != len(dcgmFields) {
		t.Errorf("%d families, want %d", len(fams), len(dcgmFields))
	}
	for name, typ := range dcgmFields {
		f := family(t, fams, name, typ)
		if len(f.Metric) != 2 {
			t.Fatalf("%s has %d series, want 2", name, len(f.Metric))
		}
		uuids := map[string]bool{}
		for i, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			want := []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}
			if len(labels) != len(want) {
				t.Fatalf("%s labels %v, want %v", name, labels, want)
			}
			for _, k := range want {
				if labels[k] == "" {
					t.Fatalf("%s: label %s missing in %v", name, k, labels)
				}
			}
			if labels["gpu"] != strconv.Itoa(i) || labels["device"] != "nvidia"+strconv.Itoa(i) || !strings.HasPrefix(labels["UUID"], "GPU-") {
				t.Errorf("%s series %d labels %v", name, i, labels)
			}
			uuids[labels["UUID"]] = true
		}
		if len(uuids) != 2 {
			t.Errorf("%s: the GPUs share a UUID", name)
		}
	}
	for _, m := range fams["DCGM_FI_DEV_POWER_USAGE"].Metric {
		if got := m.GetGauge().GetValue(); got != cfg.GPUIdlePower {
			t.Errorf("idle power %g W, want %g", got, cfg.GPUIdlePower)
		}
	}
	free := fams["DCGM_FI_DEV_FB_FREE"].Metric[0].GetGauge().GetValue()
	used := fams["DCGM_FI_DEV_FB_USED"].Metric[0].GetGauge().GetValue()
	if free <= 0 || used <= 0 || free+used != gpuMemoryMiB {
		t.Errorf("memory free %g + used %g MiB, want %d in all", free, used, gpuMemoryMiB)
	}
}

// dcgmSample is one GPU's figures read from /dcgm/metrics in process.
type dcgmSample struct {
	watts, millijoules, util, clock float64
}

func readDCGM(t *testing.T, s *Server) dcgmSample {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/dcgm/metrics", nil))
	fams := parseFamilies(t, rec.Body)
	value := func(name string) float64 {
		m := fams[name].GetMetric()
		if len(m) != 1 {
			t.Fatalf("%s has %d series, want 1", name, len(m))
		}
		return m[0].GetGauge().GetValue() + m[0].GetCounter().GetValue()
	}
	return dcgmSample{
		watts:       value("DCGM_FI_DEV_POWER_USAGE"),
		millijoules: value("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
		util:        value("DCGM_FI_DEV_GPU_UTIL"),
		clock:       value("DCGM_FI_DEV_SM_CLOCK"),
	}
}

// TestDCGMEnergyIsPowerIntegral runs the simulator on synctest's clock: a
// request of 5 tokens holds a batch slot for exactly 50 ms (a 10 ms
// prefill, then four 10 ms decode steps), so the GPU draws idle plus
// per-sequence power for those 50 ms and idle power otherwise, and the
// energy counter is that power's integral at every scrape.
func TestDCGMEnergyIsPowerIntegral(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fastConfig()
		cfg.Tokenizer = TokenizerBytes
		cfg.PrefillBase, cfg.DecodeBase = 10*time.Millisecond, 10*time.Millisecond
		cfg.GPUIdlePower, cfg.GPUPowerPerSeq, cfg.GPUPowerLimit = 70, 12.5, 700
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const busy = 50 * time.Millisecond
		idle, perSeq := cfg.GPUIdlePower, cfg.GPUPowerPerSeq
		integral := func(elapsed time.Duration) float64 { // mJ
			return 1000 * (idle*elapsed.Seconds() + perSeq*min(elapsed, busy).Seconds())
		}

		start := time.Now()
		go func() {
			body := `{"prompt":"hi","max_tokens":5,"ignore_eos":true}`
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(body)))
			if rec.Code != http.StatusOK {
				t.Errorf("status %d: %s", rec.Code, rec.Body)
			}
		}()
		for _, c := range []struct {
			at          time.Duration
			watts, util float64
			clock       float64
		}{
			{25 * time.Millisecond, idle + perSeq, 100, gpuSMClockBusyMHz},
			{45 * time.Millisecond, idle + perSeq, 100, gpuSMClockBusyMHz},
			{200 * time.Millisecond, idle, 0, gpuSMClockIdleMHz},
			{1200 * time.Millisecond, idle, 0, gpuSMClockIdleMHz},
		} {
			time.Sleep(time.Until(start.Add(c.at)))
			synctest.Wait()
			got := readDCGM(t, s)
			want := integral(c.at)
			if got.watts != c.watts || got.util != c.util || got.clock != c.clock {
				t.Errorf("at %s: %g W, %g %%, %g MHz; want %g W, %g %%, %g MHz", c.at, got.watts, got.util, got.clock, c.watts, c.util, c.clock)
			}
			if diff := got.millijoules - want; diff > 1e-6 || diff < -1e-6 {
				t.Errorf("at %s: %.9f mJ, want the integral of power %.9f mJ", c.at, got.millijoules, want)
			}
		}
	})
}

// TestGPUPowerLimit: power rises with the batch up to the limit.
func TestGPUPowerLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GPUIdlePower, cfg.GPUPowerPerSeq, cfg.GPUPowerLimit = 70, 2.5, 700
	g := newGPULoad(cfg, time.Now())
	for _, c := range []struct {
		running int
		watts   float64
	}{{0, 70}, {1, 72.5}, {100, 320}, {252, 700}, {256, 700}} {
		if got := g.watts(c.running); got != c.watts {
			t.Errorf("%d running: %g W, want %g", c.running, got, c.watts)
		}
	}
}
