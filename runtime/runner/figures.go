package runner

import (
	"time"

	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/rendezvous"
)

// figuresSender sends instance 0 this instance's figures every period
// it asked for, from a goroutine of its own: the run never waits for it.
type figuresSender struct {
	sender   *rendezvous.Sender
	reporter *dashboard.Reporter
	stop     chan struct{}
	done     chan struct{}
	// failed says a send failed: instance 0 is gone, and was told of once.
	failed bool
}

// askFigures makes instance 0 of a distributed run with a dashboard ask
// the other instances for their figures, which its dashboard merges into
// its own: a run without a dashboard exchanges nothing after the start.
func (r *run) askFigures(cfg *rendezvous.Config) {
	if r.dashboard == nil || cfg.Instance != 0 || cfg.Instances < 2 {
		return
	}
	r.instances = dashboard.NewInstances(cfg.Instances)
	// A longer period than the rendezvous takes gets figures more often.
	cfg.Figures, cfg.FiguresEvery = r.instances, min(r.cfg.Dashboard.Period, rendezvous.MaxFiguresEvery)
}

// sendFigures starts sending this instance's figures to instance 0 when
// it asked for them (s is not nil).
func (r *run) sendFigures(s *rendezvous.Sender) {
	if s == nil {
		return
	}
	f := &figuresSender{sender: s, reporter: dashboard.NewReporter(r.engine.Progress), stop: make(chan struct{}), done: make(chan struct{})}
	r.sinks.report.Store(f.reporter.Collector())
	r.figures = f
	go func() {
		defer close(f.done)
		t := time.NewTicker(s.Every)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
				if err := s.Send(f.reporter.Report(false)); err != nil {
					f.failed = true
					s.Close() // instance 0 sees the connection end, not a silence
					r.printf("%v: instance 0's dashboard no longer gets this instance's figures; this instance's run goes on", err)
					return
				}
			}
		}
	}()
}

// stopFigures sends instance 0 the last figures, marked as the last, and
// hangs up; a run's end need not reach an instance 0 that is gone.
func (r *run) stopFigures() {
	f := r.figures
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
	if !f.failed {
		f.sender.Send(f.reporter.Report(true))
	}
	f.sender.Close()
}
