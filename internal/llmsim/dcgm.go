package llmsim

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// DCGMPath is where the simulator answers as a DCGM exporter.
const DCGMPath = "/dcgm/metrics"

// GET /dcgm/metrics is a simulated NVIDIA DCGM exporter: the fields,
// types, help texts and units of dcgm-exporter's etc/default-counters.csv
// and the labels its renderer writes (internal/pkg/rendermetrics,
// github.com/NVIDIA/dcgm-exporter at 13ad457, release 4.4.1-4.6.0: gpu,
// UUID, pci_bus_id, device, modelName, Hostname, and the
// DCGM_FI_DRIVER_VERSION label field; its main branch renamed Hostname
// to hostname in d5e5f51 after that release). The simulated GPUs, of
// Config.GPUs, serve the one model together (tensor parallel), so each
// sees the whole running batch.

// The simulated GPU: shaped like an H100 SXM and named as simulated, so
// that no report mistakes it for a real one; vLLM reserves its memory at start
// (gpu_memory_utilization 0.9).
const (
	gpuModelName      = "llmsim simulated GPU (H100 80GB-like)"
	gpuDriverVersion  = "550.54.15"
	gpuMemoryMiB      = 81559
	gpuMemoryUsedMiB  = gpuMemoryMiB * 9 / 10
	gpuSMClockIdleMHz = 345
	gpuSMClockBusyMHz = 1980
	gpuTempIdleC      = 30
	gpuTempRiseC      = 45 // at the power limit
)

// gpuLoad is the GPUs' power draw, Config.GPUIdlePower plus
// Config.GPUPowerPerSeq per running sequence up to Config.GPUPowerLimit,
// and each GPU's energy since the engine started: the exact integral of
// that power, which changes only when the running batch does. The engine
// goroutine sets the batch; scrapes read.
type gpuLoad struct {
	idle, perSeq, limit float64 // W

	mu      sync.Mutex
	since   time.Time // of the last change of running
	running int
	joules  float64 // drawn until since
}

func newGPULoad(cfg Config, now time.Time) *gpuLoad {
	return &gpuLoad{idle: cfg.GPUIdlePower, perSeq: cfg.GPUPowerPerSeq, limit: cfg.GPUPowerLimit, since: now}
}

// watts is one GPU's power with running sequences.
func (g *gpuLoad) watts(running int) float64 {
	return min(g.limit, g.idle+g.perSeq*float64(running))
}

// set notes that running sequences run from now on.
func (g *gpuLoad) set(now time.Time, running int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.joules += g.watts(g.running) * now.Sub(g.since).Seconds()
	g.since, g.running = now, running
}

// read returns the running sequences, one GPU's power and its energy
// drawn until now.
func (g *gpuLoad) read(now time.Time) (running int, watts, joules float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	watts = g.watts(g.running)
	return g.running, watts, g.joules + watts*now.Sub(g.since).Seconds()
}

// gpuIdentity is a simulated GPU's labels.
type gpuIdentity struct {
	labels []*dto.LabelPair
}

// newGPUIdentities returns the labels of n GPUs, their UUIDs drawn from
// seed so that a server keeps them across restarts.
func newGPUIdentities(n int, seed int64) []gpuIdentity {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "llmsim"
	}
	ids := make([]gpuIdentity, n)
	for i := range ids {
		b := sha256.Sum256(fmt.Appendf(nil, "llmsim-gpu:%d:%d", seed, i))
		uuid := fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		ids[i].labels = []*dto.LabelPair{
			label("gpu", strconv.Itoa(i)),
			label("UUID", uuid),
			label("pci_bus_id", fmt.Sprintf("00000000:%02X:00.0", 0x18+i)),
			label("device", "nvidia"+strconv.Itoa(i)),
			label("modelName", gpuModelName),
			label("Hostname", host),
			label("DCGM_FI_DRIVER_VERSION", gpuDriverVersion),
		}
	}
	return ids
}

// dcgmFamilies returns the GPUs' state as dcgm-exporter's metric
// families, at now.
func (s *Server) dcgmFamilies(now time.Time) []*dto.MetricFamily {
	g := s.engine.gpus
	running, watts, joules := g.read(now)
	util, clock := 0.0, float64(gpuSMClockIdleMHz)
	if running > 0 {
		util, clock = 100, gpuSMClockBusyMHz
	}
	temp := float64(gpuTempIdleC)
	if g.limit > g.idle {
		temp += math.Round(gpuTempRiseC * (watts - g.idle) / (g.limit - g.idle))
	}
	fields := []struct {
		name, help string
		kind       dto.MetricType
		value      float64
	}{
		{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", dto.MetricType_GAUGE, clock},
		{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", dto.MetricType_GAUGE, temp},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", dto.MetricType_GAUGE, watts},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", dto.MetricType_COUNTER, joules * 1000},
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", dto.MetricType_GAUGE, util},
		{"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", dto.MetricType_GAUGE, gpuMemoryMiB - gpuMemoryUsedMiB},
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", dto.MetricType_GAUGE, gpuMemoryUsedMiB},
	}
	families := make([]*dto.MetricFamily, len(fields))
	for i, f := range fields {
		family := &dto.MetricFamily{Name: ptr(f.name), Help: ptr(f.help), Type: f.kind.Enum()}
		for _, id := range s.gpus {
			m := &dto.Metric{Label: id.labels}
			if f.kind == dto.MetricType_COUNTER {
				m.Counter = &dto.Counter{Value: ptr(f.value)}
			} else {
				m.Gauge = &dto.Gauge{Value: ptr(f.value)}
			}
			family.Metric = append(family.Metric, m)
		}
		families[i] = family
	}
	return families
}
