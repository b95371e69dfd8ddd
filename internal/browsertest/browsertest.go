// Package browsertest opens pages in headless Chromium for tests: the DOM
// it builds, a screenshot and the colours inked in it, and where elements
// land once it has laid the page out. A test that finds no Chromium is skipped, or fails when
// LLMRUN_REQUIRE_CHROMIUM is set (as .ci/run sets it).
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// timeout bounds one Chromium run.
const timeout = 60 * time.Second

// Chromium returns the path of a Chromium binary, skipping the test when
// there is none unless LLMRUN_REQUIRE_CHROMIUM is set.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("LLMRUN_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium or chromium-browser on PATH, and LLMRUN_REQUIRE_CHROMIUM is set")
	}
	t.Skip("no chromium or chromium-browser on PATH (set LLMRUN_REQUIRE_CHROMIUM to make this a failure)")
	return ""
}

// Run runs headless Chromium on the page file (or http:// URL) with extra arguments,
// within a minute, and returns its stdout; it fails on JavaScript errors
// or console messages in Chromium's log.
func Run(t testing.TB, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	url := page
	if !strings.HasPrefix(page, "http://") {
		url = "file://" + page
	}
	cmd := exec.CommandContext(ctx, bin, slices.Concat(base, args, []string{url})...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("chromium %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium %s: still running after %v\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "CONSOLE") {
			t.Errorf("chromium logged: %s", line)
		}
	}
	return stdout.Bytes()
}

// Box is where an element lies on the laid-out page, in CSS pixels from
// the page's top left corner (not the window's).
type Box struct {
	Top, Left, Width, Height float64
}

// boxesID is the element the measuring script writes its findings into.
const boxesID = "browsertest-boxes"

// Boxes lays the page (its HTML) out in Chromium in a window width pixels
// wide and returns, for each CSS selector, the boxes of the elements it
// matches in document order. It measures a copy of the page with a
// script added at the end of its body; the page itself is not changed.
func Boxes(t testing.TB, bin, page string, width int, selectors ...string) map[string][]Box {
	t.Helper()
	end := strings.LastIndex(page, "</body>")
	if end < 0 {
		t.Fatal("measuring a page: it has no </body>")
	}
	sel, err := json.Marshal(selectors)
	if err != nil {
		t.Fatal(err)
	}
	script := `<script>(function () {
  var out = {};
  for (const s of ` + string(sel) + `) {
    out[s] = Array.from(document.querySelectorAll(s), function (e) {
      var r = e.getBoundingClientRect();
      return {Top: r.top + window.scrollY, Left: r.left + window.scrollX, Width: r.width, Height: r.height};
    });
  }
  var pre = document.createElement("pre");
  pre.id = "` + boxesID + `";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();</script>`
	file := filepath.Join(t.TempDir(), "measured.html")
	if err := os.WriteFile(file, []byte(page[:end]+script+page[end:]), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(Run(t, bin, file, "--dump-dom", fmt.Sprintf("--window-size=%d,2000", width)))
	open := `<pre id="` + boxesID + `">`
	i := strings.Index(dom, open)
	j := strings.Index(dom[max(i, 0):], "</pre>")
	if i < 0 || j < 0 {
		t.Fatal("chromium's DOM has no measurements: the script did not run")
	}
	var boxes map[string][]Box
	if err := json.Unmarshal([]byte(html.UnescapeString(dom[i+len(open):i+j])), &boxes); err != nil {
		t.Fatalf("reading the measurements: %v", err)
	}
	return boxes
}

// Screenshot takes a screenshot of the page file in a window width×height
// pixels, writes it to shot (a path a person can open to look at it) and
// returns it decoded.
func Screenshot(t testing.TB, bin, page, shot string, width, height int) image.Image {
	t.Helper()
	Run(t, bin, page, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", width, height))
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding the screenshot %s: %v", shot, err)
	}
	return img
}

// RGB is a pixel's colour, 8 bits a channel: {0x18, 0x64, 0xab} is #1864ab.
type RGB [3]uint8

// Colours counts the pixels of each colour in the part of img within r
// (all of it for an empty r).
func Colours(img image.Image, r image.Rectangle) map[RGB]int {
	b := img.Bounds()
	if !r.Empty() {
		b = b.Intersect(r)
	}
	out := map[RGB]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			out[RGB{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}]++
		}
	}
	return out
}
