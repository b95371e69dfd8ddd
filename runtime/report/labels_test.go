package report

import "testing"

// A label goes to the first of its places whose text is inside the plot
// and clear of lines, dots, rings and other labels; none is free, none
// is placed.
func TestFirstFreeTakesTheFirstClearPlace(t *testing.T) {
	area := plot{left: 64, right: 576, top: 34, bottom: 334}
	const text = "config-1" // 8 characters: 52 px wide
	// Three places for a label: at the right of (300, 200), at its left,
	// above it.
	places := []Text{
		{X: "313.0", Y: "204.0", Anchor: "start"},
		{X: "287.0", Y: "204.0", Anchor: "end"},
		{X: "300.0", Y: "180.0", Anchor: "middle"},
	}
	for _, tc := range []struct {
		name  string
		area  plot
		drawn []polyline
		taken []box
		want  int // index of the place taken; -1 for none
	}{
		{"nothing near", area, nil, nil, 0},
		{"a line through the first place", area, []polyline{{{320, 150}, {340, 250}}}, nil, 1},
		{"a lone dot just right of the first place's end", area, []polyline{{{368, 200}}}, nil, 1},
		{"a dot well right of the first place's end", area, []polyline{{{380, 200}}}, nil, 0},
		{"a label taken at the first place", area, nil, []box{{330, 195, 350, 205}}, 1},
		{"a ring's square over the first two places", area, nil, []box{ringBox(300, 200, 12)}, 2},
		{"the plot ends inside the first place", plot{left: 64, right: 360, top: 34, bottom: 334}, nil, nil, 1},
		{"the first place's clearance only outside the plot", plot{left: 64, right: 366, top: 34, bottom: 334}, nil, nil, 0},
		{"every place taken", area, []polyline{{{200, 200}, {400, 200}}, {{300, 150}, {300, 250}}}, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := firstFree(text, places, tc.area, tc.drawn, tc.taken)
			if tc.want < 0 {
				if ok || got != (Text{}) {
					t.Errorf("placed at %+v, want nowhere", got)
				}
				return
			}
			want := places[tc.want]
			want.Text = text
			if !ok || got != want {
				t.Errorf("placed at %+v (%v), want %+v", got, ok, want)
			}
		})
	}
}

// A label's box is its text's extent, from its anchor, grown by the
// clearance: the same for every chart.
func TestTextBox(t *testing.T) {
	for _, tc := range []struct {
		anchor string
		want   box
	}{
		{"start", box{98, 88, 128, 105}},
		{"middle", box{85, 88, 115, 105}},
		{"end", box{72, 88, 102, 105}},
	} {
		if got := labelBox(Text{X: "100.0", Y: "100.0", Text: "abcd", Anchor: tc.anchor}); got != tc.want {
			t.Errorf("%s: box %v, want %v", tc.anchor, got, tc.want)
		}
	}
}
