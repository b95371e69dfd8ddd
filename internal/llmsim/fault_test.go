package llmsim

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Fault
		str  string
	}{
		{"refuse", Fault{Name: "refuse"}, "refuse"},
		{"reset", Fault{Name: "reset", After: 1}, "reset;after=1"},
		{" reset ; after = 10 ", Fault{Name: "reset", After: 10}, "reset;after=10"},
		{"http_429;retry_after=30", Fault{Name: "http_429", RetryAfter: 30}, "http_429;retry_after=30"},
		{"http_5xx", Fault{Name: "http_5xx", Status: 500}, "http_5xx;status=500"},
		{"http_5xx;status=503", Fault{Name: "http_5xx", Status: 503}, "http_5xx;status=503"},
		{"stall", Fault{Name: "stall", After: 1, Duration: time.Second}, "stall;after=1;duration=1s"},
		{"stall;duration=forever;after=0", Fault{Name: "stall", Duration: Forever}, "stall;after=0;duration=forever"},
		{"malformed;after=3", Fault{Name: "malformed", After: 3}, "malformed;after=3"},
		{"big_line", Fault{Name: "big_line", After: 1}, "big_line;after=1"},
		{"slow_headers;duration=250ms", Fault{Name: "slow_headers", Duration: 250 * time.Millisecond}, "slow_headers;duration=250ms"},
		{"wrong_content_type", Fault{Name: "wrong_content_type"}, "wrong_content_type"},
		{"error_event;after=0", Fault{Name: "error_event"}, "error_event;after=0"},
		{"early_close", Fault{Name: "early_close", After: 1}, "early_close;after=1"},
	} {
		f, err := ParseFault(tc.in)
		if err != nil || f != tc.want || f.String() != tc.str {
			t.Errorf("ParseFault(%q) = %+v (%s), %v; want %+v (%s)", tc.in, f, f, err, tc.want, tc.str)
			continue
		}
		if again, err := ParseFault(f.String()); again != f || err != nil {
			t.Errorf("%s does not parse back: %+v, %v", f, again, err)
		}
	}
}

func TestParseFaultErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                      `unknown fault ""; the faults are big_line, early_close, error_event, http_429, http_5xx, malformed, refuse, reset, slow_headers, stall, wrong_content_type`,
		"resett":                `unknown fault "resett"`,
		"refuse;after=1":        "fault refuse takes no parameters, got after",
		"reset;duration=1s":     `fault reset takes after, not "duration"`,
		"stall;status=500":      `fault stall takes after, duration, not "status"`,
		"reset;after":           `parameter "after" is not PARAM=VALUE`,
		"reset;":                `parameter "" is not PARAM=VALUE`,
		"reset;after=x":         "after=x: want a number of tokens, 0 or more",
		"reset;after=-1":        "after=-1: want a number of tokens, 0 or more",
		"reset;after=1;after=2": "parameter after given twice",
		"stall;duration=0s":     "duration=0s: want a positive duration (500ms, 2s, ...) or forever",
		"stall;duration=soon":   "duration=soon: want a positive duration",
		"http_5xx;status=404":   "status=404: want a status from 500 to 599",
		"http_429;retry_after=": "retry_after=: want a number of seconds, 0 or more",
	} {
		if _, err := ParseFault(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFault(%q): %v; want an error with %q", in, err, want)
		}
	}
}

func TestParseFaultRule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FaultRule
		str  string
	}{
		{"http_5xx:0.05", FaultRule{Fault{Name: "http_5xx", Status: 500}, 0.05}, "http_5xx:0.05:status=500"},
		{"reset:0.01:after=10", FaultRule{Fault{Name: "reset", After: 10}, 0.01}, "reset:0.01:after=10"},
		{"stall:1:after=5,duration=2s", FaultRule{Fault{Name: "stall", After: 5, Duration: 2 * time.Second}, 1}, "stall:1:after=5,duration=2s"},
		{"refuse:.5", FaultRule{Fault{Name: "refuse"}, 0.5}, "refuse:0.5"},
	} {
		r, err := ParseFaultRule(tc.in)
		if err != nil || r != tc.want || r.String() != tc.str {
			t.Errorf("ParseFaultRule(%q) = %+v (%s), %v; want %+v (%s)", tc.in, r, r, err, tc.want, tc.str)
		}
	}
	for in, want := range map[string]string{
		"reset":                       "want NAME:RATE[:PARAM=VALUE,...], such as reset:0.01:after=10",
		"reset:often":                 `rate "often" is not a number`,
		"reset:0":                     "rate 0: want a share of requests in (0, 1]",
		"reset:1.5":                   "rate 1.5: want a share of requests in (0, 1]",
		"reset:NaN":                   "rate NaN: want",
		"nope:0.1":                    `unknown fault "nope"`,
		"refuse:0.1:after=3":          "fault refuse takes no parameters",
		"stall:0.1:after=1;duration=": "after=1;duration=: want a number of tokens",
	} {
		if _, err := ParseFaultRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFaultRule(%q): %v; want an error with %q", in, err, want)
		}
	}
}

func TestFaultFlag(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Faults = []FaultRule{{Fault{Name: "refuse"}, 0.5}}
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	if def := fs.Lookup("fault").DefValue; def != "refuse:0.5" {
		t.Errorf("--fault default %q", def)
	}
	if usage := fs.FlagUsages(); !strings.Contains(usage, "--fault NAME:RATE[:PARAM=VALUE,...]") {
		t.Errorf("usage:\n%s", usage)
	}
	if err := fs.Parse([]string{"--fault", "early_close:0.2:after=3"}); err != nil {
		t.Fatal(err)
	}
	if want := []FaultRule{{Fault{Name: "early_close", After: 3}, 0.2}}; len(cfg.Faults) != 1 || cfg.Faults[0] != want[0] {
		t.Errorf("the flag's first use gave %v, want %v replacing the configured rules", cfg.Faults, want)
	}

	err := fs.Parse([]string{"--fault", "reset:0.1:duration=1s"})
	if want := `invalid argument "reset:0.1:duration=1s" for "--fault" flag: fault reset takes after, not "duration"`; err == nil || err.Error() != want {
		t.Errorf("bad --fault: %v\nwant %s", err, want)
	}
}

func TestValidateFaults(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Faults = []FaultRule{{Fault{Name: "http_5xx", Status: 503}, 0.1}, {Fault{Name: "reset"}, 0.2}, {Fault{Name: "refuse"}, 0.7}}
	if err := cfg.Validate(); err != nil {
		t.Errorf("rates adding up to 1 (but for rounding): %v", err)
	}
	cfg.Faults = []FaultRule{{Fault{Name: "stall"}, 0.6}, {Fault{Name: "reset"}, 0.5}, {Fault{Name: "bogus"}, 0.1}}
	err := cfg.Validate()
	for _, want := range []string{
		"fault stall:0.6:after=0,duration=0s: duration=0s: want a positive duration",
		`fault bogus:0.1: unknown fault "bogus"`,
		"fault rates add up to 1.2, more than 1",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nwant an error with %q", err, want)
		}
	}
}
