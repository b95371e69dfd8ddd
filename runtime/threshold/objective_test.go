package threshold

import (
	"encoding/json"
	"slices"
	"testing"
)

func ttft(p, ms float64) Objective { return Objective{Metric: "llm_ttft", Percentile: p, Bound: ms} }
func tpot(p, ms float64) Objective { return Objective{Metric: "llm_tpot", Percentile: p, Bound: ms} }
func e2e(ms float64) Objective     { return Objective{Metric: "llm_e2e", Bound: ms} }

// Every spelling --slo and --goodput took before their parsers were one
// gives the same objectives, and every bad input the same error, word for
// word.
func TestObjectivesParse(t *testing.T) {
	tests := []struct {
		g    Objectives
		in   string
		want []Objective
		err  string
	}{
		{SLO, "ttft_p99=500", []Objective{ttft(99, 500)}, ""},
		{SLO, "tpot_p99=50", []Objective{tpot(99, 50)}, ""},
		{SLO, "ttft_p99=500,tpot_p99=50", []Objective{ttft(99, 500), tpot(99, 50)}, ""},
		{SLO, " tpot_p99 = 42.5 , ttft_p99=2s", []Objective{tpot(99, 42.5), ttft(99, 2000)}, ""},
		{SLO, "ttft_p99=750ms", []Objective{ttft(99, 750)}, ""},
		{SLO, "ttft_p99=1e3", []Objective{ttft(99, 1000)}, ""},
		{SLO, "", nil, "empty: want KEY=MS pairs such as ttft_p99=500,tpot_p99=50"},
		{SLO, "  ", nil, "empty: want KEY=MS pairs such as ttft_p99=500,tpot_p99=50"},
		{SLO, "ttft_p99", nil, `"ttft_p99": want KEY=MS, as in ttft_p99=500`},
		{SLO, "ttft_p99=500,", nil, `"": want KEY=MS, as in ttft_p99=500`},
		{SLO, "ttft_p99=500, tpot_p99 ", nil, `"tpot_p99": want KEY=MS, as in ttft_p99=500`},
		{SLO, "e2e_p99=500", nil, `"e2e_p99": unknown objective; want ttft_p99 or tpot_p99`},
		{SLO, "TTFT_P99=500", nil, `"TTFT_P99": unknown objective; want ttft_p99 or tpot_p99`},
		{SLO, "ttft_p99=500,ttft_p99=60", nil, "ttft_p99 given twice"},
		{SLO, "ttft_p99=", nil, `ttft_p99: "": want milliseconds (500) or a duration (500ms, 1.5s)`},
		{SLO, "ttft_p99=fast", nil, `ttft_p99: "fast": want milliseconds (500) or a duration (500ms, 1.5s)`},
		{SLO, "ttft_p99=0", nil, `ttft_p99: "0": want a positive latency`},
		{SLO, "ttft_p99=-5", nil, `ttft_p99: "-5": want a positive latency`},
		{SLO, "ttft_p99=-5ms", nil, `ttft_p99: "-5ms": want a positive latency`},
		{SLO, "tpot_p99=NaN", nil, `tpot_p99: "NaN": want a positive latency`},
		{SLO, "tpot_p99=Inf", nil, `tpot_p99: "Inf": want a positive latency`},

		{Goodput, "ttft:500", []Objective{ttft(0, 500)}, ""},
		{Goodput, "ttft:500,tpot:50,e2el:10000", []Objective{ttft(0, 500), tpot(0, 50), e2e(10000)}, ""},
		{Goodput, "ttft:500 tpot:50", []Objective{ttft(0, 500), tpot(0, 50)}, ""},
		{Goodput, " ttft:500 ,, tpot:50 ", []Objective{ttft(0, 500), tpot(0, 50)}, ""},
		{Goodput, "e2e:1.5s", []Objective{e2e(1500)}, ""},
		{Goodput, "tpot:42.5", []Objective{tpot(0, 42.5)}, ""},
		{Goodput, "", nil, "empty: " + goodputWant},
		{Goodput, " , ", nil, "empty: " + goodputWant},
		{Goodput, "ttft=500", nil, `"ttft=500": ` + goodputWant},
		{Goodput, "itl:5", nil, `"itl": unknown metric; want ttft, tpot, e2e or e2el`},
		{Goodput, "e2e:5,e2el:6", nil, "e2el given twice"},
		{Goodput, "ttft:5 ttft:6", nil, "ttft given twice"},
		{Goodput, "ttft:0", nil, `ttft: "0": want a positive latency`},
		{Goodput, "ttft:soon", nil, `ttft: "soon": want milliseconds (500) or a duration (500ms, 1.5s)`},
		{Goodput, "ttft:500,tpot:-50", nil, `tpot: "-50": want a positive latency`},
		{Goodput, "ttft:\t500", nil, `ttft: "\t500": want milliseconds (500) or a duration (500ms, 1.5s)`},
	}
	for _, tt := range tests {
		got, err := tt.g.Parse(tt.in)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("%s.Parse(%q) = %+v, %v; want the error %q", tt.g.Noun, tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("%s.Parse(%q) = %+v, %v; want %+v", tt.g.Noun, tt.in, got, err, tt.want)
		}
	}
}

// The script's option is an object of the same keys, each a number of
// milliseconds or a duration string (null skipped), in the order of its
// keys, or the flag's text.
func TestObjectivesParseOption(t *testing.T) {
	tests := []struct {
		g    Objectives
		raw  string
		want []Objective
		err  string
	}{
		{SLO, `{"ttft_p99": 2000, "tpot_p99": "80ms"}`, []Objective{tpot(99, 80), ttft(99, 2000)}, ""},
		{SLO, `"ttft_p99=2000,tpot_p99=80"`, []Objective{ttft(99, 2000), tpot(99, 80)}, ""},
		{SLO, `{}`, nil, ""},
		{SLO, `{"ttft_p99": null}`, nil, ""},
		{SLO, `{"e2e_p99": 5}`, nil, "e2e_p99: unknown objective; want ttft_p99 or tpot_p99"},
		{SLO, `[2000]`, nil, "want an object such as { ttft_p99: 2000, tpot_p99: 50 } (milliseconds)"},
		{SLO, `{"ttft_p99": "soon"}`, nil, `ttft_p99: "soon": want milliseconds (500) or a duration (500ms, 1.5s)`},
		{SLO, `""`, nil, "empty: want KEY=MS pairs such as ttft_p99=500,tpot_p99=50"},

		{Goodput, `{"ttft": 500, "e2e": "2s"}`, []Objective{e2e(2000), ttft(0, 500)}, ""},
		{Goodput, `{"e2e": 1, "e2el": 2}`, []Objective{e2e(1), e2e(2)}, ""},
		{Goodput, `"tpot:40"`, []Objective{tpot(0, 40)}, ""},
		{Goodput, `{"itl": 5}`, nil, "itl: unknown metric; want ttft, tpot, e2e or e2el"},
		{Goodput, `[500]`, nil, "want an object such as { ttft: 500, tpot: 50, e2e: 10000 } (milliseconds)"},
		{Goodput, `{"ttft": -1}`, nil, `ttft: "-1": want a positive latency`},
	}
	for _, tt := range tests {
		got, err := tt.g.ParseOption(json.RawMessage(tt.raw))
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("%s.ParseOption(%s) = %+v, %v; want the error %q", tt.g.Noun, tt.raw, got, err, tt.err)
		case tt.err == "" && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("%s.ParseOption(%s) = %+v, %v; want %+v", tt.g.Noun, tt.raw, got, err, tt.want)
		}
	}
}
