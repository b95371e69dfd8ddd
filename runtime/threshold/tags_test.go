package threshold

import (
	"errors"
	"testing"
)

func TestCheckTags(t *testing.T) {
	closed := []ClosedTag{
		{Name: "scenario", Values: []string{"rag", "chat", "code"}, Noun: "scenario"},
		{Name: "error_class", Metrics: []string{"reqs"}, Values: []string{"timeout", "http_5xx", "connect"}},
	}
	tests := []struct {
		name, js string
		want     string // the joined errors, "" for none
	}{
		{"the issue's typo", `{"llm_ttft{scenario:chta}": ["p(99)<500"]}`,
			`thresholds["llm_ttft{scenario:chta}"]: no scenario is named "chta" (did you mean "chat"?): the scenarios are chat, code, rag`},
		{"nothing close", `{"lat{scenario:embeddings}": ["avg<1"]}`,
			`thresholds["lat{scenario:embeddings}"]: no scenario is named "embeddings": the scenarios are chat, code, rag`},
		{"real scenarios and open tags", `{"lat{scenario:chat}": ["avg<1"], "lat{model:anything, scenario:rag}": ["avg<1"], "lat{group:::x}": ["avg<1"], "lat": ["avg<1"]}`, ""},
		{"a closed tag on its metric", `{"reqs{error_class:timout}": ["count<1"]}`,
			`thresholds["reqs{error_class:timout}"]: error_class has no value "timout" on reqs (did you mean "timeout"?): its values are connect, http_5xx, timeout`},
		{"a closed tag on another metric is the script's", `{"lat{error_class:mine}": ["avg<1"], "reqs{error_class:http_5xx}": ["count<1"]}`, ""},
		{"each key once, in order, every tag checked",
			`{"lat{scenario:chta}": ["avg<1", "max<1"], "reqs{scenario:chat, error_class:5xx}": ["count<1"]}`,
			`thresholds["lat{scenario:chta}"]: no scenario is named "chta" (did you mean "chat"?): the scenarios are chat, code, rag` + "\n" +
				`thresholds["reqs{scenario:chat, error_class:5xx}"]: error_class has no value "5xx" on reqs: its values are connect, http_5xx, timeout`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			err := f.mustParse(t, tt.js).CheckTags(closed)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckTags: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("CheckTags:\n got %v\nwant %s", err, tt.want)
			}
			var te *Error
			if !errors.As(err, &te) || te.Index != -1 {
				t.Errorf("%T %+v is not an *Error about a key", err, te)
			}
		})
	}
}

// A note says why the values are those (the command line replaced the
// script's scenarios).
func TestCheckTagsNote(t *testing.T) {
	f := newFixture(t)
	closed := []ClosedTag{{Name: "scenario", Values: []string{"default"}, Noun: "scenario", Note: "flags replaced them"}}
	err := f.mustParse(t, `{"lat{scenario:chat}": ["avg<1"]}`).CheckTags(closed)
	const want = `thresholds["lat{scenario:chat}"]: no scenario is named "chat": the scenarios are default; flags replaced them`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
