package textfmt_test

import (
	"math"
	"strings"
	"testing"

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
