package serverwatch

import (
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/gpumetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Now is what a target said at its last read, while the run goes: for
// the live view and the Prometheus output. A figure the target does not
// give is nil.
type Now struct {
	// Kind is summary.TargetServer or summary.TargetGPU.
	Kind string
	// URL is the target's, its credentials and query values redacted;
	// NvidiaSMI for the local GPUs.
	URL string
	// Engine and EngineTitle name the engine ("vllm", "vLLM"; "dcgm",
	// "DCGM exporter"); "" while none is known.
	Engine, EngineTitle string
	// At is when the last read that answered was taken; zero when none
	// has.
	At time.Time
	// Failed is the kind of failure of the last read ("timeout",
	// "status"), "" when it answered.
	Failed string

	// A server's requests running and waiting, its KV-cache use (a
	// fraction) at the last read, and the preemptions it counted since
	// the run's start mark.
	Running, Waiting, KVCacheUsage, Preemptions *float64

	// A GPU target's GPUs at the last read, their mean utilisation (a
	// fraction) and their power summed (watts).
	GPUs        []GPUNow
	Utilization *float64
	Power       *float64
}

// GPUNow is one GPU at a GPU target's last read.
type GPUNow struct {
	// ID is the GPU's index on its host.
	ID string
	// Utilization is a fraction, MemoryUsed bytes, Power watts.
	Utilization, MemoryUsed, Power *float64
}

// Now is what each target said at its last read, in the order of the
// Config (servers, then GPUs). It computes from the snapshots the reads
// left, never waiting for a read under way; safe to call from any
// goroutine while the watch runs.
func (w *Watch) Now() []Now {
	byURL := map[string]servermetrics.Latest{}
	for _, l := range w.scraper.Latest(MarkStart) {
		byURL[l.Target.URL] = l
	}
	out := make([]Now, 0, len(w.targets))
	for _, t := range w.targets {
		switch {
		case t.url == NvidiaSMI:
			out = append(out, w.smi.now())
		case t.kind == summary.TargetServer && !t.isDCGM():
			out = append(out, serverNow(t, byURL[t.url]))
		default:
			out = append(out, dcgmNow(t, byURL[t.url]))
		}
	}
	return out
}

// serverNow is a server target's gauges at its last read and its
// preemptions since the start mark.
func serverNow(t *target, l servermetrics.Latest) Now {
	n := Now{Kind: summary.TargetServer, URL: llm.RedactURL(t.url), At: l.Snapshot.Time}
	if l.Failed != nil {
		n.Failed = string(l.Failed.Kind)
	}
	eng := t.engine
	if eng == nil && !n.At.IsZero() {
		eng = engines.Detect(l.Snapshot.Families)
	}
	if eng != nil {
		n.Engine, n.EngineTitle = eng.Name, eng.Title
	}
	if eng == nil || n.At.IsZero() {
		return n
	}
	n.Running = gaugeNow(eng, l.Snapshot, engines.Running)
	n.Waiting = gaugeNow(eng, l.Snapshot, engines.Waiting)
	n.KVCacheUsage = gaugeNow(eng, l.Snapshot, engines.KVCacheUsage)
	if sel, ok := eng.Lookup(l.Snapshot.Families, engines.Preemptions, nil); ok && l.MarkOK {
		by := servermetrics.Selector{Name: sel.Source.Name, Labels: sel.Source.Filter(nil)}
		if d, ok := servermetrics.CounterDelta(l.Mark, l.Snapshot, by); ok {
			d *= sel.Source.Scale
			n.Preemptions = &d
		}
	}
	return n
}

// dcgmNow is a DCGM exporter's GPUs at its last read.
func dcgmNow(t *target, l servermetrics.Latest) Now {
	n := Now{Kind: summary.TargetGPU, URL: llm.RedactURL(t.url)}
	if l.Failed != nil {
		n.Failed = string(l.Failed.Kind)
	}
	eng := t.engine
	if eng == nil && !l.Snapshot.Time.IsZero() {
		eng = engines.Detect(l.Snapshot.Families)
	}
	if eng != nil {
		n.Engine, n.EngineTitle = eng.Name, eng.Title
	}
	if l.Snapshot.Time.IsZero() {
		return n
	}
	n.setGPUs(gpumetrics.FromDCGM(l.Snapshot.Families, l.Snapshot.Time))
	return n
}

// setGPUs sets a GPU target's figures from its last reading: each GPU's
// in canonical units, their utilisation averaged and power summed as the
// charts' points have them.
func (n *Now) setGPUs(r gpumetrics.Reading) {
	n.At = r.At
	for _, s := range r.GPUs {
		g := GPUNow{ID: s.GPU.Index, Power: s.PowerW}
		if s.UtilPercent != nil {
			u := *s.UtilPercent / 100
			g.Utilization = &u
		}
		if s.MemUsedMiB != nil {
			b := *s.MemUsedMiB * (1 << 20)
			g.MemoryUsed = &b
		}
		n.GPUs = append(n.GPUs, g)
	}
	p := gpuPoint(r, r.At)
	n.Utilization, n.Power = p.GPUUtilization, p.GPUPower
}

// now is the local GPUs at nvidia-smi's last run.
func (w *smiWatch) now() Now {
	n := Now{Kind: summary.TargetGPU, URL: NvidiaSMI, Engine: NvidiaSMI, EngineTitle: NvidiaSMI}
	if w.sampler == nil {
		n.Failed = gpumetrics.FailNotFound
		return n
	}
	w.mu.Lock()
	last, failed := w.last, w.lastFailed
	w.mu.Unlock()
	n.Failed = failed
	if !last.At.IsZero() {
		n.setGPUs(last)
	}
	return n
}
