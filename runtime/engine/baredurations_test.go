package engine

import (
	"strings"
	"testing"
)

// A duration written as a bare number is milliseconds, as in k6, and the
// run warns once for each such field, naming it, saying how many
// milliseconds it is and what to write for seconds; a duration with a
// unit, or a zero, is not warned about.
func TestBareNumberDurationsWarn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options string
		want    []string
	}{
		{"a scenario's duration", `{ scenarios: { chat: { executor: 'constant-vus', vus: 1, duration: 30 } } }`,
			[]string{"options.scenarios.chat.duration: 30 is 30 ms: a duration without a unit is milliseconds, as in k6; write '30s' for 30 seconds, or '30ms' to keep it without this warning"}},
		{"the shorthand's, as a string", `{ vus: 1, duration: '30' }`, []string{"options.duration: 30 is 30 ms"}},
		{"stages, timeUnit and a warmup", `{ scenarios: { a: { executor: 'ramping-arrival-rate', preAllocatedVUs: 1, timeUnit: 1000,
			stages: [{ duration: '1s', target: 1 }, { duration: 2.5, target: 1 }], warmup: { duration: 20 } } } }`,
			[]string{"options.scenarios.a.timeUnit: 1000 is 1000 ms: a duration without a unit is milliseconds, as in k6; write '1000s' for 1000 seconds, or '1s' to keep it",
				"options.scenarios.a.stages[1].duration: 2.5 is 2.5 ms: a duration without a unit is milliseconds, as in k6; write '2.5s' for 2.5 seconds, or '2.5ms' to keep it", "options.scenarios.a.warmup.duration: 20 is 20 ms"}},
		{"the early stop's", `{ vus: 1, duration: '1s', earlyStop: { backoff: 500, midRun: { for: 5000 } } }`,
			[]string{"options.earlyStop.backoff: 500 is 500 ms", "options.earlyStop.midRun.for: 5000 is 5000 ms"}},
		{"units and zeros", `{ scenarios: { chat: { executor: 'constant-vus', vus: 1, duration: '30ms', gracefulStop: 0 } }, setupTimeout: '1m' }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuffer{}
			load(t, testConfig(t, "export const options = "+tc.options+";\nexport default function () {}\n", nil, logs))
			out := logs.String()
			if got := strings.Count(out, "level=WARN"); got != len(tc.want) {
				t.Errorf("%d warnings, want %d:\n%s", got, len(tc.want), out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("logs lack %q:\n%s", w, out)
				}
			}
		})
	}
}
