package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

func TestParseGoodput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]summary.GoodputBounds{
		"ttft:500":                    {TTFT: 500},
		"ttft:500,tpot:50,e2el:10000": {TTFT: 500, TPOT: 50, E2E: 10000},
		"ttft:500 tpot:50":            {TTFT: 500, TPOT: 50},
		"e2e:1.5s":                    {E2E: 1500},
		"tpot:42.5":                   {TPOT: 42.5},
	} {
		got, err := ParseGoodput(in)
		if err != nil || got != want {
			t.Errorf("ParseGoodput(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseGoodputErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                  "empty",
		" , ":               "empty",
		"ttft=500":          "want KEY:MS",
		"itl:5":             `"itl": unknown metric`,
		"e2e:5,e2el:6":      "e2el given twice",
		"ttft:0":            "positive",
		"ttft:soon":         "want milliseconds",
		"ttft:500,tpot:-50": "tpot",
	} {
		got, err := ParseGoodput(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseGoodput(%q) = %+v, %v; want an error with %q", in, got, err, want)
		}
	}
}

// --goodput wins over options.goodput, which is an object or --goodput's
// text; a wrong one names the field.
func TestGoodputOption(t *testing.T) {
	t.Parallel()
	opts := func(raw string) engine.Options { return engine.Options{Goodput: json.RawMessage(raw)} }
	for _, tc := range []struct {
		raw  string
		flag summary.GoodputBounds
		want summary.GoodputBounds
	}{
		{`{"ttft": 500, "e2e": "2s"}`, summary.GoodputBounds{}, summary.GoodputBounds{TTFT: 500, E2E: 2000}},
		{`"tpot:40"`, summary.GoodputBounds{}, summary.GoodputBounds{TPOT: 40}},
		{`{"ttft": 500}`, summary.GoodputBounds{TPOT: 9}, summary.GoodputBounds{TPOT: 9}},
		{`null`, summary.GoodputBounds{}, summary.GoodputBounds{}},
		{``, summary.GoodputBounds{}, summary.GoodputBounds{}},
	} {
		got, err := Goodput(opts(tc.raw), tc.flag)
		if err != nil || got != tc.want {
			t.Errorf("Goodput(%s, %+v) = %+v, %v; want %+v", tc.raw, tc.flag, got, err, tc.want)
		}
	}
	for raw, want := range map[string]string{
		`{"itl": 5}`:   "options.goodput: itl: unknown metric",
		`[500]`:        "options.goodput: want an object",
		`{"ttft": -1}`: "options.goodput: ttft",
	} {
		_, err := Goodput(opts(raw), summary.GoodputBounds{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Goodput(%s): %v, want an error with %q", raw, err, want)
		}
	}
}
