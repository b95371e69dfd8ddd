package gpumetrics

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// describe writes a sample's identity and values on one line, "-" for a
// value the source did not give.
func describe(s GPUSample) string {
	f := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%g", *v)
	}
	reasons := "-"
	if s.Reasons != nil {
		reasons = fmt.Sprintf("%#x", *s.Reasons)
	}
	return fmt.Sprintf("key=%s index=%s host=%s model=%q util=%s mem=%s/%s power=%s energy=%s temp=%s memtemp=%s sm=%s reasons=%s",
		s.GPU.Key(), s.GPU.Index, s.GPU.Host, s.GPU.Model, f(s.UtilPercent), f(s.MemUsedMiB), f(s.MemTotalMiB),
		f(s.PowerW), f(s.EnergyJ), f(s.TempC), f(s.MemTempC), f(s.SMClockMHz), reasons)
}

func parseExposition(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return families
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestFromDCGM(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{
			name: "two GPUs, one with a blank memory temperature and throttled",
			text: readTestdata(t, "dcgm/two-gpus.prom"),
			want: []string{
				`key=GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418 index=0 host=gpu-node-7 model="NVIDIA H100 80GB HBM3" util=100 mem=19818/81559 power=631.95 energy=2.51885217371e+08 temp=59 memtemp=48 sm=1980 reasons=0x0`,
				`key=GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6 index=1 host=gpu-node-7 model="NVIDIA H100 80GB HBM3" util=87 mem=60930/81559 power=402.125 energy=2.60537897279e+08 temp=71 memtemp=- sm=1755 reasons=0x24`,
			},
		},
		{
			name: "MIG instances: device fields once, framebuffer summed",
			text: readTestdata(t, "dcgm/mig.prom"),
			want: []string{
				`key=GPU-c07eb90d-74b0-d3b4-e6ce-f18687564243 index=0 host=gpu-node-8 model="NVIDIA H100 80GB HBM3" util=- mem=11125/39600 power=433.78 energy=9.87654321e+07 temp=53 memtemp=- sm=- reasons=-`,
			},
		},
		{
			name: "dcgm-exporter's README: DCGM_INT64_NOT_SUPPORTED is no value",
			text: readTestdata(t, "dcgm/readme-quickstart.prom"),
			want: []string{
				`key=GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52 index=0 host= model="" util=- mem=-/- power=- energy=- temp=- memtemp=- sm=139 reasons=-`,
			},
		},
		{
			name: "no UUID: host and index tell GPUs apart; old reasons name; blanks of each kind",
			text: `# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",hostname="b"} 140737488355330
DCGM_FI_DEV_POWER_USAGE{gpu="0",hostname="a"} 250.5
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",hostname="b"} 2147483634
DCGM_FI_DEV_GPU_UTIL{gpu="0",hostname="a"} 42
# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0",hostname="a"} 1
`,
			want: []string{
				`key=a/0 index=0 host=a model="" util=42 mem=-/- power=250.5 energy=- temp=- memtemp=- sm=- reasons=0x1`,
				`key=b/0 index=0 host=b model="" util=- mem=-/- power=- energy=- temp=- memtemp=- sm=- reasons=-`,
			},
		},
		{
			name: "no DCGM families",
			text: "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n",
			want: nil,
		},
	}
	at := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reading := FromDCGM(parseExposition(t, tt.text), at)
			if !reading.At.Equal(at) {
				t.Errorf("reading at %v, want %v", reading.At, at)
			}
			var got []string
			for _, s := range reading.GPUs {
				got = append(got, describe(s))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestReasonNames(t *testing.T) {
	tests := []struct {
		mask uint64
		want string
	}{
		{0, ""},
		{ReasonGPUIdle, "gpu_idle"},
		{0x24, "sw_power_cap sw_thermal_slowdown"},
		{ReasonHWSlowdown | ReasonHWPowerBrakeSlowdown | 0x1000, "hw_slowdown hw_power_brake_slowdown 0x1000"},
	}
	for _, tt := range tests {
		if got := strings.Join(ReasonNames(tt.mask), " "); got != tt.want {
			t.Errorf("ReasonNames(%#x) = %q, want %q", tt.mask, got, tt.want)
		}
	}
}

// dcgmExposition is a DCGM exporter's text for GPUs of the given power
// (W) and energy counter (mJ; a negative one is not exported), in the
// exporter's format (see testdata/README.md).
func dcgmExposition(power []float64, energyMJ []int64) string {
	var b strings.Builder
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for i, w := range power {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\",pci_bus_id=\"\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"} %f\n", i, i, i, w)
	}
	b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
	for i, mj := range energyMJ {
		if mj >= 0 {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\",pci_bus_id=\"\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"} %d\n", i, i, i, mj)
		}
	}
	return b.String()
}

func TestDCGMWindowEnergy(t *testing.T) {
	tests := []struct {
		name           string
		start, end     []int64 // the counters at 0 s and 10 s, mJ
		joules         float64
		method         Method
		perToken, perJ float64
		gpuMethods     string
	}{
		{
			name:  "both GPUs have the counter",
			start: []int64{1_000_000, 7_000_000}, end: []int64{5_500_000, 9_500_000},
			joules: 4500 + 2500, method: MethodCounter, perToken: 7000.0 / 3500, perJ: 3500.0 / 7000,
			gpuMethods: "counter counter",
		},
		{
			name:  "the second GPU has no counter: its power integrated",
			start: []int64{1_000_000, -1}, end: []int64{5_500_000, -1},
			joules: 4500 + 200*10, method: MethodMixed, perToken: 6500.0 / 3500, perJ: 3500.0 / 6500,
			gpuMethods: "counter integral",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readings := []Reading{
				FromDCGM(parseExposition(t, dcgmExposition([]float64{400, 200}, tt.start)), at(0)),
				FromDCGM(parseExposition(t, dcgmExposition([]float64{500, 200}, tt.end)), at(10)),
			}
			f := Summarize(readings, at(0), at(10), 3500)
			var methods []string
			for _, g := range f.GPUs {
				methods = append(methods, string(g.Energy.Method))
			}
			if got := strings.Join(methods, " "); got != tt.gpuMethods {
				t.Errorf("GPUs' methods %q, want %q", got, tt.gpuMethods)
			}
			e := f.All.Energy
			if e.Joules == nil || *e.Joules != tt.joules || e.Method != tt.method {
				t.Fatalf("energy %v J by %q, want %v J by %q", deref(e.Joules), e.Method, tt.joules, tt.method)
			}
			if !sameValue(f.JoulesPerOutputToken, &tt.perToken) || !sameValue(f.OutputTokensPerJoule, &tt.perJ) {
				t.Errorf("J/token %v, tokens/J %v; want %v, %v", deref(f.JoulesPerOutputToken), deref(f.OutputTokensPerJoule), tt.perToken, tt.perJ)
			}
			if p := f.All.PowerW; *p.Mean != 650 || *p.Max != 700 {
				t.Errorf("all power mean %v max %v, want 650 and 700", *p.Mean, *p.Max)
			}
		})
	}
}
