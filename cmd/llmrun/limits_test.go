package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// Load beyond llmrun's limits is refused before anything is allocated for
// it: exit 104, naming the field or the flag.
func TestLoadBeyondTheLimitsIsRefused(t *testing.T) {
	t.Parallel()
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
		{[]string{rate}, "options.scenarios.x.rate: 1000000000000000 per second is 1000000000000000 iterations per second, above llmrun's limit"},
		{[]string{nan}, "options.vus: must be a finite value, got NaN, Infinity or null"},
	}
	for _, tc := range tests {
		args := append([]string{"run", "-q", "--no-preflight"}, tc.args...)
		code, _, stderr := cli(t, context.Background(), nil, args...)
		if code != exitcode.InvalidConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitcode.InvalidConfig, tc.want)
		}
	}
}

// A base URL that is not http or https is refused at start (exit 104),
// with one message, and no request is tried to find the model.
func TestBaseURLOfAnotherSchemeIsRefused(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "s.js", `export default function () {}`)
	code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "-i", "1", "--base-url", "ftp://127.0.0.1:1/v1", script)
	want := `invalid base URL "ftp://127.0.0.1:1/v1": the scheme must be http or https, not "ftp"`
	if code != exitcode.InvalidConfig || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitcode.InvalidConfig, want)
	}
	if strings.Contains(stderr, "could not be found") {
		t.Errorf("stderr %q: the model was looked for on a base URL the client refuses", stderr)
	}
}

// A tag whose values do not repeat stops making series at
// metrics.MaxSeries: the summary says so, and the totals stay whole.
func TestTagsBeyondTheSeriesLimit(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "tags.js", `
import { Counter } from 'metrics';
const hits = new Counter('hits');
export const options = { vus: 1, iterations: 1 };
export default function () { for (let i = 0; i < 10100; i++) hits.add(1, { id: String(i) }); }`)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--no-preflight", script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"more than 10000 distinct tag sets", "WARNING: hits had samples of more than 10000 distinct tag sets", "100 samples of later tag sets were kept untagged in series tagged series_overflow=true"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "count=10100") {
		t.Errorf("the metric's total is not whole:\n%s", stdout)
	}
}
