package serverwatch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/llmrun/llmrun/runtime/gpumetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// dcgmTarget is what a DCGM exporter said over the window: each GPU's
// figures, their total and energy, and a series of utilisation and power.
func dcgmTarget(r servermetrics.TargetResult, win Window) summary.ServerTarget {
	out := summary.ServerTarget{URL: r.Target.URL, Kind: summary.TargetGPU, Scrapes: scrapes(r.Counts)}
	b := windowOf(r, win)
	readings := make([]gpumetrics.Reading, 0, len(r.Series))
	for _, snap := range r.Series {
		readings = append(readings, gpumetrics.FromDCGM(snap.Families, snap.Time))
	}
	if len(r.Series) > 0 {
		if eng := engines.Detect(r.Series[len(r.Series)-1].Families); eng != nil {
			out.Engine = eng.Name
		}
	}
	setGPUs(&out, readings, b.start, b.end, win.Origin)
	return out
}

// setGPUs sets a GPU target's figures from its readings over [from, to].
func setGPUs(out *summary.ServerTarget, readings []gpumetrics.Reading, from, to, origin time.Time) {
	f := gpumetrics.Summarize(readings, from, to, 0)
	for _, g := range f.GPUs {
		out.GPUs = append(out.GPUs, gpuOf(g))
	}
	if len(f.GPUs) > 0 {
		total := gpuOf(f.All)
		out.GPUTotal = &total
	}
	if j := f.All.Energy.Joules; j != nil {
		out.Energy = &summary.Energy{Joules: *j, Method: energyMethod(f.All.Energy.Method)}
	}
	for _, r := range readings {
		out.Series = append(out.Series, gpuPoint(r, origin))
	}
}

// energyMethod names a gpumetrics method as the result file does.
func energyMethod(m gpumetrics.Method) string {
	switch m {
	case gpumetrics.MethodCounter:
		return summary.EnergyCounter
	case gpumetrics.MethodIntegral:
		return summary.EnergyIntegrated
	}
	return summary.EnergyCounter + ", " + summary.EnergyIntegrated
}

// gpuOf is a GPU's window figures in canonical units: utilisation a
// fraction, memory bytes, power watts, energy joules.
func gpuOf(g gpumetrics.GPUFigures) summary.GPU {
	out := summary.GPU{ID: g.GPU.Index, UUID: g.GPU.UUID, Model: g.GPU.Model, Host: g.GPU.Host, Figures: map[string]summary.WindowFigure{}}
	gauge := func(f engines.Figure, s gpumetrics.Stat, scale float64) {
		if s.Mean == nil || s.Max == nil {
			return
		}
		mean, largest := *s.Mean*scale, *s.Max*scale
		out.Figures[string(f)] = summary.WindowFigure{Kind: engines.Gauge.String(), Unit: unit(f), Mean: &mean, Max: &largest}
	}
	gauge(engines.GPUUtilization, g.UtilPercent, 0.01)
	gauge(engines.GPUMemoryUsed, g.MemUsedMiB, 1<<20)
	gauge(engines.GPUPower, g.PowerW, 1)
	if j := g.Energy.Joules; j != nil {
		joules := *j
		out.Figures[string(engines.GPUEnergy)] = summary.WindowFigure{Kind: engines.Counter.String(), Unit: unit(engines.GPUEnergy), Delta: &joules}
	}
	if len(g.ThrottleReasons) > 0 {
		mask := reasonMask(g.ThrottleReasons)
		out.ClockEventReasons = &mask
	}
	return out
}

// unit is a figure's unit as its definition gives it.
func unit(f engines.Figure) string {
	def, _ := engines.Define(f)
	return string(def.Unit)
}

// reasonMask is the mask of the clock event reasons gpumetrics names.
func reasonMask(names []string) uint64 {
	var mask uint64
	for bit := range 64 {
		if slices.Contains(names, gpumetrics.ReasonNames(1 << bit)[0]) {
			mask |= 1 << bit
		}
	}
	return mask
}

// gpuPoint is a reading as a chart's point: the GPUs' utilisation
// averaged (a fraction), their power summed.
func gpuPoint(r gpumetrics.Reading, origin time.Time) summary.ServerPoint {
	p := summary.ServerPoint{T: seconds(r.At, origin)}
	var util, power float64
	var nUtil, nPower int
	for _, s := range r.GPUs {
		if s.UtilPercent != nil {
			util += *s.UtilPercent / 100
			nUtil++
		}
		if s.PowerW != nil {
			power += *s.PowerW
			nPower++
		}
	}
	if nUtil > 0 {
		util /= float64(nUtil)
		p.GPUUtilization = &util
	}
	if nPower > 0 {
		p.GPUPower = &power
	}
	return p
}

// smiWatch samples the local GPUs with nvidia-smi, and remembers when
// each mark's reading came.
type smiWatch struct {
	sampler *gpumetrics.SMISampler
	err     error // why nvidia-smi could not be run; nil when it runs
	polled  chan gpumetrics.Reading

	mu    sync.Mutex
	ok    int
	marks map[string]time.Time
	// last is the last reading, lastFailed the kind of failure of the
	// last run ("" when it gave a reading): what now reads.
	last       gpumetrics.Reading
	lastFailed string
}

// startSMI starts sampling nvidia-smi; one that cannot be run is
// remembered, said in the banner and counted, never an error of the run.
func startSMI(ctx context.Context, command string, interval time.Duration) *smiWatch {
	w := &smiWatch{polled: make(chan gpumetrics.Reading, 1), marks: map[string]time.Time{}}
	w.sampler, w.err = gpumetrics.StartSMI(context.WithoutCancel(ctx), gpumetrics.SMIConfig{
		Command: command, Interval: interval, OnPoll: w.onPoll,
	})
	return w
}

// onPoll counts a reading and passes it to a mark that waits for one.
func (w *smiWatch) onPoll(r gpumetrics.Reading, err error) {
	if err != nil {
		kind := gpumetrics.FailExit
		if failed := (*gpumetrics.PollError)(nil); errors.As(err, &failed) {
			kind = failed.Kind
		}
		w.mu.Lock()
		w.lastFailed = kind
		w.mu.Unlock()
		return
	}
	w.mu.Lock()
	w.ok++
	w.last, w.lastFailed = r, ""
	w.mu.Unlock()
	select {
	case <-w.polled:
	default:
	}
	select {
	case w.polled <- r:
	default:
	}
}

// mark asks for a reading now and remembers its time under name: the
// first reading taken at or after the mark (a run already under way when
// it was asked may be earlier, and another is asked for). It waits at
// most one sampler timeout.
func (w *smiWatch) mark(ctx context.Context, name string) {
	if w.sampler == nil {
		return
	}
	asked := time.Now()
	ctx, cancel := context.WithTimeout(ctx, gpumetrics.DefaultSMITimeout)
	defer cancel()
	w.sampler.Poke()
	for {
		select {
		case r := <-w.polled:
			if r.At.Before(asked) {
				w.sampler.Poke()
				continue
			}
			w.mu.Lock()
			w.marks[name] = r.At
			w.mu.Unlock()
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *smiWatch) stop() {
	if w.sampler != nil {
		w.sampler.Stop()
	}
}

// target is what nvidia-smi said over the window.
func (w *smiWatch) target(win Window) summary.ServerTarget {
	out := summary.ServerTarget{URL: NvidiaSMI, Kind: summary.TargetGPU}
	if w.sampler == nil {
		out.Scrapes.Failed = map[string]int64{gpumetrics.FailNotFound: 1}
		return out
	}
	failures, _ := w.sampler.Failures()
	w.mu.Lock()
	out.Scrapes.OK = int64(w.ok)
	from, fromOK := w.marks[win.From]
	to, toOK := w.marks[win.To]
	w.mu.Unlock()
	for kind, n := range failures {
		if out.Scrapes.Failed == nil {
			out.Scrapes.Failed = map[string]int64{}
		}
		out.Scrapes.Failed[kind] = int64(n)
	}
	if !fromOK {
		from = win.Start
	}
	if !toOK {
		to = win.End
	}
	setGPUs(&out, w.sampler.Readings(), from, to, win.Origin)
	return out
}
