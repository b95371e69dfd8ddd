package textfmt_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

func TestFigures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format func(float64) string
		in     float64
		want   string
	}{
		{"Millis", textfmt.Millis, 0, "0"},
		{"Millis", textfmt.Millis, 1.23456, "1.235"},
		{"Millis", textfmt.Millis, 42.987, "43.0"},
		{"Millis", textfmt.Millis, 1234.5, "1234"},
		{"Millis", textfmt.Millis, math.NaN(), "-"},
		{"Millis", textfmt.Millis, math.Inf(1), "-"},
		{"Num", textfmt.Num, 0, "0"},
		{"Num", textfmt.Num, 42, "42"},
		{"Num", textfmt.Num, 2.5, "2.50"},
		{"Num", textfmt.Num, 123.45, "123.5"},
		{"Num", textfmt.Num, math.NaN(), "-"},
		{"Num", textfmt.Num, math.Inf(-1), "-"},
	} {
		if got := tc.format(tc.in); got != tc.want {
			t.Errorf("%s(%v) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{textfmt.Count(0, "iteration"), "0 iterations"},
		{textfmt.Count(1, "iteration"), "1 iteration"},
		{textfmt.Count(2, "iteration"), "2 iterations"},
		{textfmt.Count(int64(1), "point"), "1 point"},
		{textfmt.Count(int64(100000), "point"), "100000 points"},
		{textfmt.Count(1.0, "iteration"), "1 iteration"},
		{textfmt.Count(0.5, "iteration"), "0.5 iterations"},
		{textfmt.Count(2.25, "iteration"), "2.25 iterations"},
		{textfmt.Count(1e6, "iteration"), "1000000 iterations"},
		{textfmt.Count(1, "looping VU"), "1 looping VU"},
		{textfmt.Count(uint64(1), "cycle"), "1 cycle"},
		{textfmt.Count(uint64(7), "cycle"), "7 cycles"},
		{textfmt.Count(16, "looping VU"), "16 looping VUs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestPer(t *testing.T) {
	for unit, want := range map[time.Duration]string{
		time.Second:            "per second",
		time.Minute:            "per minute",
		time.Hour:              "per hour",
		500 * time.Millisecond: "per 500ms",
		2 * time.Second:        "per 2s",
		90 * time.Second:       "per 1m30s",
		time.Nanosecond:        "per 1ns",
	} {
		if got := textfmt.Per(unit); got != want {
			t.Errorf("Per(%s) = %q, want %q", unit, got, want)
		}
	}
}

func TestFit(t *testing.T) {
	parts := []string{"llmrun dev", "script s.js", "run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{200, []string{"llmrun dev · script s.js · run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}},
		{80, []string{"llmrun dev · script s.js", "run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}},
		{24, []string{"llmrun dev · script s.js", "run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}},
		{23, []string{"llmrun dev", "script s.js", "run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}},
		{1, []string{"llmrun dev", "script s.js", "run 0f8c2a4e-5b7d-4e21-9c3a-7d1e6f2b8a90 of test nightly"}},
	} {
		if got := textfmt.Fit(parts, " · ", tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("width %d: %q, want %q", tc.width, got, tc.want)
		}
	}
	if got := textfmt.Fit(nil, " · ", 80); len(got) != 0 {
		t.Errorf("no parts: %q", got)
	}
}

func TestStyle(t *testing.T) {
	if got := (textfmt.Style{}).Red("x"); got != "x" {
		t.Errorf("without colour Red(x) = %q, want x", got)
	}
	if got := (textfmt.Style{Color: true}).Red("x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("with colour Red(x) = %q", got)
	}
}

func TestTableAlignsFigures(t *testing.T) {
	var b strings.Builder
	err := textfmt.Table(&b, []string{"name", "n"}, []tw.Align{tw.AlignLeft, tw.AlignRight}, [][]string{{"a", "1"}, {"bbbb", "100"}})
	if err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "   1 ") || !strings.Contains(out, "bbbb") {
		t.Errorf("table:\n%s", out)
	}
}
