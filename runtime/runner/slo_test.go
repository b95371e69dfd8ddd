package runner

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]summary.SLO{
		"ttft_p99=500":                   {TTFTP99: 500},
		"tpot_p99=50":                    {TPOTP99: 50},
		"ttft_p99=500,tpot_p99=50":       {TTFTP99: 500, TPOTP99: 50},
		" tpot_p99 = 42.5 , ttft_p99=2s": {TTFTP99: 2000, TPOTP99: 42.5},
		"ttft_p99=750ms":                 {TTFTP99: 750},
		"ttft_p99=1e3":                   {TTFTP99: 1000},
	} {
		got, err := ParseSLO(in)
		if err != nil || got != want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseSLOErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                         "empty",
		"  ":                       "empty",
		"ttft_p99":                 "want KEY=MS",
		"ttft_p99=500,":            "want KEY=MS",
		"e2e_p99=500":              `"e2e_p99": unknown objective`,
		"TTFT_P99=500":             "unknown objective",
		"ttft_p99=500,ttft_p99=60": "ttft_p99 given twice",
		"ttft_p99=":                "want milliseconds",
		"ttft_p99=fast":            "want milliseconds",
		"ttft_p99=0":               "positive",
		"ttft_p99=-5":              "positive",
		"ttft_p99=-5ms":            "positive",
		"tpot_p99=NaN":             "positive",
		"tpot_p99=Inf":             "positive",
	} {
		got, err := ParseSLO(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSLO(%q) = %+v, %v; want an error with %q", in, got, err, want)
		}
	}
}
