package spelling

import "testing"

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
