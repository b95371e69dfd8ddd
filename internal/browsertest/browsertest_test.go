package browsertest

import "testing"

// Boxes finds each selector's elements where the layout puts them: the
// second of two stacked blocks under the first, with their sizes, and
// nothing for a selector that matches nothing.
func TestBoxes(t *testing.T) {
	page := `<!DOCTYPE html><html><body style="margin:0">
<div class="b" style="height:120px;width:300px"></div>
<div class="b" style="height:30px;width:50px"></div>
</body></html>`
	boxes := Boxes(t, Chromium(t), page, 800, "div.b", "p")
	b := boxes["div.b"]
	if len(b) != 2 {
		t.Fatalf("div.b: %d boxes, want 2", len(b))
	}
	want := []Box{{Top: 0, Left: 0, Width: 300, Height: 120}, {Top: 120, Left: 0, Width: 50, Height: 30}}
	for i := range want {
		if b[i] != want[i] {
			t.Errorf("box %d is %+v, want %+v", i, b[i], want[i])
		}
	}
	if n := len(boxes["p"]); n != 0 {
		t.Errorf("p: %d boxes, want none", n)
	}
}
