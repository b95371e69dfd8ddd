package js

import (
	"strings"
	"testing"
)

func TestVLQ(t *testing.T) {
	for _, v := range []int{0, 1, -1, 15, 16, -16, 31, 32, 1000, -123456} {
		var b strings.Builder
		writeVLQ(&b, v)
		got, err := decodeSegment(b.String())
		if err != nil || len(got) != 1 || got[0] != v {
			t.Errorf("%d encodes to %q, which decodes to %v, %v", v, b.String(), got, err)
		}
	}
	for _, seg := range []string{"", "A*", "g"} {
		if _, err := decodeSegment(seg); err == nil {
			t.Errorf("decodeSegment(%q) succeeded, want an error", seg)
		}
	}
}

func TestOneBasedColumns(t *testing.T) {
	tests := []struct{ in, want string }{
		// Line 1: [0,0,0,0] [4,0,0,4]; line 2: [2,0,1,-2].
		{"AAAA,IAAI;EACF", "CAAC,IAAI;GACF"},
		// A first segment without a source: the first with one moves.
		{"A,CAAA;;AACA", "C,CAAC;;CACA"},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := oneBasedColumns(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("oneBasedColumns(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}
