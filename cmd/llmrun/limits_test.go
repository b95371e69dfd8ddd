package main

import (
	"context"
	"strings"
	"testing"
)

// Load beyond llmrun's limits is refused before anything is allocated for
// it: exit 104, naming the field or the flag.
func TestLoadBeyondTheLimitsIsRefused(t *testing.T) {
	script := writeScript(t, "s.js", `export default function () {}`)
	arrival := writeScript(t, "a.js", `
export const options = { scenarios: { x: { executor: 'constant-arrival-rate', rate: 1, duration: '1s', preAllocatedVUs: 1, maxVUs: 1e12 } } };
export default function () {}`)
	rate := writeScript(t, "r.js", `
export const options = { scenarios: { x: { executor: 'constant-arrival-rate', rate: 1e15, duration: '1s', preAllocatedVUs: 1 } } };
export default function () {}`)
	nan := writeScript(t, "n.js", `
export const options = { vus: NaN, duration: '1s' };
export default function () {}`)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-u", "1000000000000", "-d", "1s", script}, "--vus: 1000000000000 exceeds llmrun's limit of 100000 VUs per process (see docs/limits.md)"},
		{[]string{"-d", "100000h", script}, "--duration: 100000h0m0s exceeds llmrun's limit"},
		{[]string{arrival}, "options.scenarios.x.maxVUs: 1000000000000 exceeds llmrun's limit of 100000 VUs per process (see docs/limits.md)"},
		{[]string{rate}, "options.scenarios.x.rate: 1000000000000000 per 1s is 1000000000000000 iterations per second, above llmrun's limit"},
		{[]string{nan}, "options.vus: must be a finite value, got NaN, Infinity or null"},
	}
	for _, tc := range tests {
		args := append([]string{"run", "-q", "--no-preflight"}, tc.args...)
		code, _, stderr := cli(t, context.Background(), nil, args...)
		if code != exitInvalidConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitInvalidConfig, tc.want)
		}
	}
}
