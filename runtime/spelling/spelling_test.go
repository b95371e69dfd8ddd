package spelling

import (
	"errors"
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"llm_ttf", "llm_ttft", 1},
		{"kitten", "sitting", 3}, {"lat", "lat", 0}, {"ab", "ba", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"chat", "rag", "code", "nightly-chat"}
	for _, tt := range []struct {
		name, want string
	}{
		{"chta", "chat"}, {"rga", "rag"}, {"nightly-caht", "nightly-chat"}, {"chat", "chat"},
		{"summarize", ""}, {"", ""}, {"xyz", ""},
	} {
		if got := Nearest(tt.name, known); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Nearest("cat", nil); got != "" {
		t.Errorf("Nearest of nothing known = %q", got)
	}
}

func TestFlagHint(t *testing.T) {
	fs := pflag.NewFlagSet("llmrun run", pflag.ContinueOnError)
	fs.String("base-url", "", "")
	fs.String("model", "", "")
	fs.String("api-key-env", "", "")
	fs.String("rendezvous-addr", "", "")
	fs.String("rendezvous-timeout", "", "")
	fs.IntP("vus", "u", 1, "")
	fs.Bool("secret-debug", false, "")
	if err := fs.MarkHidden("secret-debug"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ err, want string }{
		{"unknown flag: --base-ur", "unknown flag: --base-ur (did you mean --base-url?)"},
		{"unknown flag: --modle=x", "unknown flag: --modle=x (did you mean --model?)"},
		{"unknown flag: --throughput", "unknown flag: --throughput"},
		{"unknown flag: --api-key=sk-1", "unknown flag: --api-key=sk-1 (did you mean --api-key-env?)"},
		{"unknown flag: --rendezvous", "unknown flag: --rendezvous"},
		{"unknown flag: --secret-debu", "unknown flag: --secret-debu"},
		{"unknown shorthand flag: 'x' in -x", "unknown shorthand flag: 'x' in -x"},
		{`invalid argument "x" for "-u, --vus" flag`, `invalid argument "x" for "-u, --vus" flag`},
	} {
		base := errors.New(tt.err)
		got := FlagHint(base, fs)
		if got.Error() != tt.want || !errors.Is(got, base) {
			t.Errorf("FlagHint(%q) = %q, want %q wrapping the parser's error", tt.err, got, tt.want)
		}
	}
}

func TestAllNearest(t *testing.T) {
	known := []string{"llm_ttfb", "llm_ttft", "llm_tpot", "llm_e2e", "llm_ttft"}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"llm_ttf", []string{"llm_ttfb", "llm_ttft"}},
		{"llm_ttftt", []string{"llm_ttft"}},
		{"llm_e2", []string{"llm_e2e"}},
		{"throughput", nil},
	} {
		if got := AllNearest(tt.name, known); !slices.Equal(got, tt.want) {
			t.Errorf("AllNearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
