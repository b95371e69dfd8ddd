package gpumetrics

import (
	"fmt"
	"strings"
	"testing"
)

func TestSeriesBounded(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		add    int
		pinned map[int]bool
		want   string
	}{
		{"under the bound, all kept", 8, 5, nil, "0 1 2 3 4"},
		{"one halving: every second, and the newest", 8, 9, nil, "0 2 4 6 8"},
		{"one halving, the newest off the stride", 8, 10, nil, "0 2 4 6 8 9"},
		{"two halvings: every fourth, evenly over the run", 8, 30, nil, "0 8 16 24 29"},
		{"pinned readings stay", 8, 30, map[int]bool{5: true, 27: true}, "0 5 8 16 24 27 29"},
		{"more pins than room: they give way", 4, 12, map[int]bool{1: true, 2: true, 3: true, 5: true, 6: true, 7: true, 9: true, 10: true, 11: true}, "0 9 10 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSeries(tt.max)
			for i := range tt.add {
				s.add(Reading{At: at(float64(i))}, tt.pinned[i])
				if len(s.entries) > tt.max {
					t.Fatalf("%d readings kept after %d added, more than %d", len(s.entries), i+1, tt.max)
				}
			}
			var got []string
			for _, r := range s.readings() {
				got = append(got, fmt.Sprint(r.At.Sub(t0).Seconds()))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("kept %s, want %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}
