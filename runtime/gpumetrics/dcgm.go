package gpumetrics

import (
	"math"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The DCGM exporter's fields llmrun reads, with their units as
// dcgm-exporter's etc/default-counters.csv gives them.
const (
	dcgmUtil        = "DCGM_FI_DEV_GPU_UTIL"                 // gauge, %
	dcgmFBUsed      = "DCGM_FI_DEV_FB_USED"                  // gauge, MiB
	dcgmFBFree      = "DCGM_FI_DEV_FB_FREE"                  // gauge, MiB
	dcgmFBReserved  = "DCGM_FI_DEV_FB_RESERVED"              // gauge, MiB
	dcgmFBTotal     = "DCGM_FI_DEV_FB_TOTAL"                 // gauge, MiB (not exported by default)
	dcgmPower       = "DCGM_FI_DEV_POWER_USAGE"              // gauge, W
	dcgmEnergy      = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // counter, mJ since boot
	dcgmTemp        = "DCGM_FI_DEV_GPU_TEMP"                 // gauge, °C
	dcgmMemTemp     = "DCGM_FI_DEV_MEMORY_TEMP"              // gauge, °C
	dcgmSMClock     = "DCGM_FI_DEV_SM_CLOCK"                 // gauge, MHz
	dcgmReasons     = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"     // gauge, bitmask (newer DCGM)
	dcgmReasonsOld  = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"   // the same field in older DCGM
	dcgmMIGInstance = "GPU_I_ID"                             // label of a MIG GPU instance's series
)

// DCGM's blank values (dcgm_structs.h): a field it cannot read holds
// BLANK, NOT_FOUND, NOT_SUPPORTED or NOT_PERMISSIONED, the base below plus
// 0 to 3. Older exporters print them as numbers (9223372036854775794 in
// dcgm-exporter's README is DCGM_INT64_NOT_SUPPORTED). Power is a double
// field; the other fields llmrun reads are integers, whose blanks lie far
// above any reading (the energy counter's millijoules included).
const (
	dcgmFP64Blank  = 140737488355328.0           // DCGM_FP64_BLANK, 2^47
	dcgmInt32Blank = float64(0x7ffffff0)         // DCGM_INT32_BLANK
	dcgmInt64Blank = float64(0x7ffffffffffffff0) // DCGM_INT64_BLANK (2^63 as a float64)
)

// FromDCGM reads one GPUSample per GPU from a DCGM exporter's metric
// families, at the time at. GPUs are identified by their UUID label
// (UUID, or uuid in the exporter's 1.x-compatible output), else by their
// gpu label and Hostname; they come sorted by index, then key.
//
// On a GPU split by MIG the exporter gives a series per GPU instance
// (label GPU_I_ID) and repeats the whole device's power, energy,
// temperatures, clocks and reasons on each: those are read once, and the
// framebuffer used and free are summed over the instances. A series of the
// whole device, when there is one, is preferred to the instances'.
func FromDCGM(families map[string]*dto.MetricFamily, at time.Time) Reading {
	gpus := map[string]*dcgmGPU{}
	var order []string
	for _, name := range []string{dcgmUtil, dcgmFBUsed, dcgmFBFree, dcgmFBReserved, dcgmFBTotal, dcgmPower, dcgmEnergy, dcgmTemp, dcgmMemTemp, dcgmSMClock, dcgmReasons, dcgmReasonsOld} {
		family := families[name]
		if family == nil {
			continue
		}
		for _, m := range family.GetMetric() {
			id := dcgmIdentity(m)
			g := gpus[id.Key()]
			if g == nil {
				g = &dcgmGPU{gpu: id, fields: map[string]dcgmField{}}
				gpus[id.Key()] = g
				order = append(order, id.Key())
			}
			g.add(name, m)
		}
	}
	reading := Reading{At: at}
	for _, key := range order {
		reading.GPUs = append(reading.GPUs, gpus[key].sample())
	}
	sort.SliceStable(reading.GPUs, func(i, j int) bool {
		a, b := reading.GPUs[i].GPU, reading.GPUs[j].GPU
		ai, aerr := strconv.Atoi(a.Index)
		bi, berr := strconv.Atoi(b.Index)
		if aerr == nil && berr == nil && ai != bi {
			return ai < bi
		}
		return a.Key() < b.Key()
	})
	return reading
}

// dcgmGPU gathers one GPU's series.
type dcgmGPU struct {
	gpu    GPU
	fields map[string]dcgmField
}

// dcgmField is one field of one GPU: the whole device's value, or the
// values of its MIG instances by instance id.
type dcgmField struct {
	device    *float64
	instances map[string]*float64
	first     string
}

func (g *dcgmGPU) add(name string, m *dto.Metric) {
	v := dcgmValue(m, name == dcgmPower)
	f := g.fields[name]
	instance := label(m, dcgmMIGInstance)
	switch {
	case instance == "":
		if f.device == nil {
			f.device = v
		}
	case f.instances == nil:
		f.instances = map[string]*float64{instance: v}
		f.first = instance
	default:
		if _, seen := f.instances[instance]; !seen {
			f.instances[instance] = v
		}
	}
	g.fields[name] = f
}

// one is the field's device-wide value: the whole device's series, else
// the first instance's (the exporter repeats device fields on each).
func (f dcgmField) one() *float64 {
	if f.device != nil || f.instances == nil {
		return f.device
	}
	return f.instances[f.first]
}

// summed is the field's value for the whole device: the device's series,
// else the sum over its instances (nil when any instance has none).
func (f dcgmField) summed() *float64 {
	if f.device != nil || f.instances == nil {
		return f.device
	}
	var sum float64
	for _, v := range f.instances {
		if v == nil {
			return nil
		}
		sum += *v
	}
	return &sum
}

func (g *dcgmGPU) sample() GPUSample {
	s := GPUSample{
		GPU:         g.gpu,
		UtilPercent: g.fields[dcgmUtil].one(),
		MemUsedMiB:  g.fields[dcgmFBUsed].summed(),
		PowerW:      g.fields[dcgmPower].one(),
		TempC:       g.fields[dcgmTemp].one(),
		MemTempC:    g.fields[dcgmMemTemp].one(),
		SMClockMHz:  g.fields[dcgmSMClock].one(),
	}
	if mj := g.fields[dcgmEnergy].one(); mj != nil {
		s.EnergyJ = ptr(*mj / 1000)
	}
	s.MemTotalMiB = g.fields[dcgmFBTotal].summed()
	if free := g.fields[dcgmFBFree].summed(); s.MemTotalMiB == nil && free != nil && s.MemUsedMiB != nil {
		total := *s.MemUsedMiB + *free
		if reserved := g.fields[dcgmFBReserved].summed(); reserved != nil {
			total += *reserved
		}
		s.MemTotalMiB = &total
	}
	reasons := g.fields[dcgmReasons].one()
	if reasons == nil {
		reasons = g.fields[dcgmReasonsOld].one()
	}
	if reasons != nil && *reasons >= 0 {
		s.Reasons = ptr(uint64(*reasons))
	}
	return s
}

// dcgmIdentity is the GPU a series belongs to, from its labels.
func dcgmIdentity(m *dto.Metric) GPU {
	return GPU{
		UUID:  label(m, "UUID", "uuid"),
		Index: label(m, "gpu"),
		Host:  label(m, "Hostname", "hostname"),
		Model: label(m, "modelName", "model_name"),
	}
}

// label is the value of the first of names m has.
func label(m *dto.Metric, names ...string) string {
	for _, name := range names {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name {
				return lp.GetValue()
			}
		}
	}
	return ""
}

// dcgmValue is a series' value, nil when it is not a number or is one of
// DCGM's blanks for a double field (double) or an integer one.
func dcgmValue(m *dto.Metric, double bool) *float64 {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.Gauge.GetValue()
	case m.Counter != nil:
		v = m.Counter.GetValue()
	case m.Untyped != nil:
		v = m.Untyped.GetValue()
	default:
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || isDCGMBlank(v, double) {
		return nil
	}
	return &v
}

func isDCGMBlank(v float64, double bool) bool {
	if double {
		return v >= dcgmFP64Blank && v <= dcgmFP64Blank+3
	}
	return v >= dcgmInt64Blank || (v >= dcgmInt32Blank && v <= dcgmInt32Blank+3)
}

func ptr[T any](v T) *T { return &v }
