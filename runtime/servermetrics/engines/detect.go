package engines

import (
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Detect returns the engine whose metrics a target exposes, judged by the
// families' names, or nil when they are no known engine's. An engine with a
// family only it exposes (llm-d's simulator) is tried before the engine
// whose names it shares.
func Detect(families map[string]*dto.MetricFamily) *Engine {
	for _, e := range Engines {
		if e.exposedBy(families) {
			return e
		}
	}
	return nil
}

func (e *Engine) exposedBy(families map[string]*dto.MetricFamily) bool {
	if e.marker != "" {
		_, ok := families[e.marker]
		return ok
	}
	for name := range families {
		for _, p := range e.prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
	}
	return false
}
