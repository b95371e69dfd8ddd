package console

import (
	"fmt"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// ProgressWindow is how far back the live view's run-wide output tok/s looks:
// long enough to smooth over the ticks of a few readings, short enough to
// follow the tokens as they arrive.
const ProgressWindow = 3 * time.Second

// ProgressMeter formats the one-line live status of a run from readings
// of its progress taken one after the other. The output tok/s is that of
// the last Window: the tokens that arrived since the reading Window ago
// (or since the start, early in the run), over the time between. The zero
// value is ready; one goroutine uses it.
type ProgressMeter struct {
	// Window is how far back the rate looks; zero means ProgressWindow.
	Window time.Duration
	// readings are those still needed, oldest first: the last one taken
	// ProgressWindow or more before the newest, and those after it.
	readings []tokenReading
}

// tokenReading is how many output tokens had arrived at a time of the run.
type tokenReading struct {
	elapsed time.Duration
	tokens  int64
}

// Line records the reading p and formats the live view's heading line.
func (m *ProgressMeter) Line(p engine.Progress) string {
	return fmt.Sprintf("running %7s  VUs %d/%d  requests %d  failed %d  output %s tok/s",
		p.Elapsed.Truncate(100*time.Millisecond), p.ActiveVUs, p.MaxVUs, p.Requests, p.Failed, textfmt.Num(m.rate(p.Elapsed, p.OutputTokens)))
}

// rate records a reading and returns the tokens per second since the
// oldest one it still needs: the run's start (no token) at first.
func (m *ProgressMeter) rate(elapsed time.Duration, tokens int64) float64 {
	if len(m.readings) == 0 {
		m.readings = append(m.readings, tokenReading{})
	}
	m.readings = append(m.readings, tokenReading{elapsed, tokens})
	window := m.Window
	if window == 0 {
		window = ProgressWindow
	}
	drop := 0
	for drop+1 < len(m.readings) && m.readings[drop+1].elapsed <= elapsed-window {
		drop++
	}
	m.readings = append(m.readings[:0], m.readings[drop:]...)
	base := m.readings[0]
	secs := (elapsed - base.elapsed).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(tokens-base.tokens) / secs
}
