package data

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/scriptpath"
)

// TestJSSyntheticImagesAreReproducible checks that images.synthetic's
// images are the seed's: the same on the same VU's same call in another
// run, the same for the same draw on any VU, different otherwise.
func TestJSSyntheticImagesAreReproducible(t *testing.T) {
	const calls = `
		const first = data.images.synthetic({ width: 64, height: 32, count: 2 });
		const second = data.images.synthetic({ width: 64, height: 32, format: 'png' });
		const drawn = data.images.synthetic({ width: 16, height: 16, draw: 7 });
		([first.map(i => i.url), second[0].url, drawn[0].url,
			first[0].width, first[0].height, first[0].format, second[0].format, first.length, second.length,
			first[0].part.type, first[0].part.image_url.url === first[0].url, first[0].bytes])
	`
	run := func(seed int64, vuNumber int64) []any {
		vu := newDataVU(t, &Module{Seed: seed}, vuNumber)
		return vu.Run(calls).Export().([]any)
	}
	a, again, otherVU, otherSeed := run(5, 1), run(5, 1), run(5, 2), run(6, 1)
	urls := func(r []any) []string {
		pair := r[0].([]any)
		return []string{pair[0].(string), pair[1].(string), r[1].(string), r[2].(string)}
	}
	ua := urls(a)
	if strings.Join(urls(again), "") != strings.Join(ua, "") {
		t.Error("the same seed and VU made other images")
	}
	if ua[0] == ua[1] || ua[0] == urls(otherVU)[0] || ua[0] == urls(otherSeed)[0] {
		t.Error("another image, VU or seed made the same image")
	}
	if ua[3] != urls(otherVU)[3] || ua[3] == urls(otherSeed)[3] {
		t.Error("a draw number made other images on another VU, or the same under another seed")
	}
	_, payload, _ := strings.Cut(ua[0], ";base64,")
	file, _ := base64.StdEncoding.DecodeString(payload)
	want := []any{64, 32, "jpeg", "png", 2, 1, "image_url", true, len(file)}
	for i, w := range want {
		if fmt.Sprint(a[3+i]) != fmt.Sprint(w) {
			t.Errorf("property %d: %v, want %v", i, a[3+i], w)
		}
	}
}

// TestJSImageFiles checks images.file on a file the script names, on
// data and http URLs, on the images a JSONL or CSV dataset's records
// name, and its errors.
func TestJSImageFiles(t *testing.T) {
	project := t.TempDir()
	img, err := Synthetic(1, 20, 10, "png")
	if err != nil {
		t.Fatal(err)
	}
	_, payload, _ := strings.Cut(img.URL, ";base64,")
	file, _ := base64.StdEncoding.DecodeString(payload)
	if err := os.MkdirAll(filepath.Join(project, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "img", "a.png"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"vision.jsonl": `{"prompt": "What is it?", "images": ["img/a.png", "https://example.com/b.jpg"]}` + "\n" + `{"prompt": "And now?"}` + "\n",
		"vision.csv":   "prompt,image\nWhat is it?,img/a.png\nAnd now?,\n",
	} {
		if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := scriptpath.New(scriptpath.Config{Script: filepath.Join(project, "bench.js")})
	vu := newDataVU(t, &Module{Seed: 1, Paths: paths}, 1)
	got := vu.Run(`
		const f = data.images.file('img/a.png');
		const d = data.images.file(f.url);
		const h = data.images.file('https://example.com/cat.jpg');
		JSON.stringify([f.width, f.height, f.bytes, f.format, f.url === d.url, d.bytes, h.url, h.bytes]);
	`).String()
	want := `[20,10,` + strconv.Itoa(len(file)) + `,"png",true,` + strconv.Itoa(len(file)) + `,"https://example.com/cat.jpg",0]`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	fromDatasets := vu.Run(`
		const jsonl = data.dataset('vision.jsonl'), csv = data.dataset('vision.csv');
		JSON.stringify([jsonl.get(0).images.map((p) => data.images.file(p).width), jsonl.get(1).images,
			csv.get(0).images.map((p) => data.images.file(p).height), csv.get(1).images]);
	`).String()
	if want := `[[20,0],[],[10],[]]`; fromDatasets != want {
		t.Errorf("the images datasets name: %s, want %s", fromDatasets, want)
	}
	for _, tc := range []struct{ src, want string }{
		{`data.images.file('img/absent.png')`, `images.file("img/absent.png")`},
		{`data.images.file('data:image/png;base64,@@@@')`, "its base64 is broken"},
		{`data.images.synthetic({ width: 9000, height: 10 })`, "each side must be 1 to 8192 pixels"},
		{`data.images.synthetic({ width: 10 })`, "height is required"},
		{`data.images.synthetic({ width: 10, height: 10, format: 'bmp' })`, `image format "bmp"`},
		{`data.images.synthetic({ width: 10, height: 10, count: 256 })`, "at most 255 images a call"},
		{`data.images.synthetic({ width: 10, height: 10, size: 3 })`, `unknown option "size"`},
	} {
		if msg := runErr(vu, tc.src); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want it to say %q", tc.src, msg, tc.want)
		}
	}
}
