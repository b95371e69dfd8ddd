package browsertest

import (
	"image"
	"os"
	"path/filepath"
	"testing"
)

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

// Screenshot returns the page as drawn, of the window's size, and
// Colours counts its pixels by colour, within a part of it or in all.
func TestScreenshotColours(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!DOCTYPE html><html><body style="margin:0;background:#fff">
<div style="height:100px;width:200px;background:#1864ab"></div>
<div style="height:50px;width:400px;background:#d9480f"></div>
</body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	img := Screenshot(t, Chromium(t), page, filepath.Join(dir, "page.png"), 800, 600)
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Fatalf("screenshot is %v, want 800×600", b)
	}
	blue, orange, white := RGB{0x18, 0x64, 0xab}, RGB{0xd9, 0x48, 0x0f}, RGB{0xff, 0xff, 0xff}
	all := Colours(img, image.Rectangle{})
	if all[blue] != 200*100 || all[orange] != 400*50 || all[white] != 800*600-200*100-400*50 {
		t.Errorf("colours of the whole page: blue %d, orange %d, white %d; want %d, %d, %d", all[blue], all[orange], all[white], 200*100, 400*50, 800*600-200*100-400*50)
	}
	top := Colours(img, image.Rect(0, 0, 800, 100))
	if top[blue] != 200*100 || top[orange] != 0 {
		t.Errorf("colours of the top 100 rows: blue %d, orange %d; want %d, 0", top[blue], top[orange], 200*100)
	}
}
