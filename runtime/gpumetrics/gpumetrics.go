// Package gpumetrics reads GPU telemetry and turns it into a window's
// figures: utilisation, memory, power, energy and clock throttling per GPU
// and over all GPUs, and energy per output token.
//
// A Reading is one look at every GPU at one time. It comes from a DCGM
// exporter's metric families (FromDCGM, the families parsed by the
// Prometheus project's expfmt from the exporter's /metrics) or from
// nvidia-smi's CSV (ParseSMI, and the SMISampler that runs nvidia-smi on an
// interval). Summarize turns the readings of a window into its Figures.
package gpumetrics

import (
	"fmt"
	"math/bits"
	"time"
)

// GPU names one GPU. Readings of the same GPU share its Key.
type GPU struct {
	// UUID is the GPU's UUID ("GPU-604ac76c-…"), when the source gives it.
	UUID string `json:"uuid,omitempty"`
	// Index is the GPU's index on its host ("0").
	Index string `json:"index"`
	// Host is the host the GPU is in, when the source names it (DCGM's
	// Hostname label).
	Host string `json:"host,omitempty"`
	// Model is the GPU's product name ("NVIDIA H100 80GB HBM3").
	Model string `json:"model,omitempty"`
}

// Key identifies the GPU across readings: its UUID, else its host and
// index.
func (g GPU) Key() string {
	if g.UUID != "" {
		return g.UUID
	}
	return g.Host + "/" + g.Index
}

// GPUSample is one GPU's telemetry at one time. A nil field is a value the
// source did not give ([N/A], [Not Supported], a DCGM blank, a field the
// exporter was not configured to export).
type GPUSample struct {
	GPU GPU
	// UtilPercent is the share of the last sample period in which a kernel
	// ran, 0–100.
	UtilPercent *float64
	// MemUsedMiB and MemTotalMiB are the framebuffer memory used and in
	// all, in MiB.
	MemUsedMiB  *float64
	MemTotalMiB *float64
	// PowerW is the board's power draw in watts.
	PowerW *float64
	// EnergyJ is the board's energy counter since the driver loaded, in
	// joules (DCGM gives millijoules; nvidia-smi has no such field).
	EnergyJ *float64
	// TempC and MemTempC are the GPU's and its memory's temperatures in °C.
	TempC    *float64
	MemTempC *float64
	// SMClockMHz is the SM clock in MHz.
	SMClockMHz *float64
	// Reasons is the bitmask of active clock event (throttle) reasons, as
	// NVML defines it (nvmlClocksEventReason*).
	Reasons *uint64
}

// Reading is every GPU a source reports, read at one time.
type Reading struct {
	At   time.Time
	GPUs []GPUSample
}

// The clock event reasons of NVML (nvml.h, nvmlClocksEventReason*; DCGM's
// DCGM_CLOCKS_EVENT_REASON_* have the same bits), named as nvidia-smi
// names its clocks_event_reasons.* fields.
const (
	ReasonGPUIdle uint64 = 1 << iota
	ReasonApplicationsClocksSetting
	ReasonSWPowerCap
	ReasonHWSlowdown
	ReasonSyncBoost
	ReasonSWThermalSlowdown
	ReasonHWThermalSlowdown
	ReasonHWPowerBrakeSlowdown
	ReasonDisplayClockSetting
)

var reasonNames = map[uint64]string{
	ReasonGPUIdle:                   "gpu_idle",
	ReasonApplicationsClocksSetting: "applications_clocks_setting",
	ReasonSWPowerCap:                "sw_power_cap",
	ReasonHWSlowdown:                "hw_slowdown",
	ReasonSyncBoost:                 "sync_boost",
	ReasonSWThermalSlowdown:         "sw_thermal_slowdown",
	ReasonHWThermalSlowdown:         "hw_thermal_slowdown",
	ReasonHWPowerBrakeSlowdown:      "hw_power_brake_slowdown",
	ReasonDisplayClockSetting:       "display_clock_setting",
}

// ReasonNames names the bits set in mask, lowest first; a bit NVML does
// not define is named by its hexadecimal value.
func ReasonNames(mask uint64) []string {
	var names []string
	for mask != 0 {
		bit := uint64(1) << bits.TrailingZeros64(mask)
		mask &^= bit
		if name, ok := reasonNames[bit]; ok {
			names = append(names, name)
		} else {
			names = append(names, fmt.Sprintf("0x%x", bit))
		}
	}
	return names
}
