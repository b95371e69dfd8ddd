package engine

import (
	"fmt"
	"testing"
	"time"
)

// The longest a run can take adds up the scenarios' chain, graceful stops
// included, the setup and teardown timeouts (their defaults where the
// script gives none) and handleSummary's when it is exported.
func TestMaxRunTime(t *testing.T) {
	const chain = `export const options = { %s scenarios: {
  a: { executor: 'constant-vus', vus: 1, duration: '10s', gracefulStop: '5s', startTime: '1s' },
  b: { executor: 'constant-vus', vus: 1, duration: '20s', gracefulStop: '0s', startAfter: 'a', startTime: '2s' },
  c: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '3s', startTime: '4s' } } };
export default function () {}
`
	tests := []struct {
		name, options, extra string
		plan, run            time.Duration
	}{
		// a ends by 1 + 10 + 5 = 16 s, b by 16 + 2 + 20 = 38 s; c by 4 + 3 + 30 = 37 s.
		{"defaults", "", "", 38 * time.Second, 60*time.Second + 38*time.Second + 60*time.Second},
		{"timeouts given", "setupTimeout: '5s', teardownTimeout: '7s',", "", 38 * time.Second, 50 * time.Second},
		{"handleSummary", "setupTimeout: '5s', teardownTimeout: '7s',", "export function handleSummary() { return {}; }\n",
			38 * time.Second, 50*time.Second + HandleSummaryTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := load(t, testConfig(t, fmt.Sprintf(chain, tt.options)+tt.extra, nil, nil))
			if got := e.MaxDuration(); got != tt.plan {
				t.Errorf("MaxDuration %s, want %s", got, tt.plan)
			}
			if got := e.MaxRunTime(); got != tt.run {
				t.Errorf("MaxRunTime %s, want %s", got, tt.run)
			}
		})
	}
}
