package runner_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/runtime/runner"
)

// A script that sends two images a request, against the built-in
// simulator: each request's line in the JSONL output records the images'
// number, bytes and pixels as sent, and the simulator's prompt tokens
// count their ceil(w/28)·ceil(h/28) tokens.
func TestImagesSentAreRecordedPerRequest(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var bytesSent int
	for i, img := range []struct {
		w, h   int
		format string
	}{{40, 30, "png"}, {100, 60, "jpeg"}} {
		made, err := data.Synthetic(int64(i), img.w, img.h, img.format)
		if err != nil {
			t.Fatal(err)
		}
		_, payload, _ := strings.Cut(made.URL, ";base64,")
		path := filepath.Join(dir, fmt.Sprintf("img%d.%s", i, img.format))
		if err := os.WriteFile(path, mustBase64(t, payload), 0o644); err != nil {
			t.Fatal(err)
		}
		files, bytesSent = append(files, path), bytesSent+made.Bytes
	}
	script := fmt.Sprintf(`
import llm from 'llm';
import { images } from 'data';
export const options = { iterations: 3 };
const pics = [images.file(%q), images.file(%q)];
export default function () {
  llm.stream({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Compare.' }, ...pics.map((p) => p.part)] }], max_tokens: 2 });
  llm.stream({ messages: [{ role: 'user', content: 'Compare.' }], max_tokens: 2 });
}
`, files[0], files[1])
	records := filepath.Join(dir, "r.jsonl")
	r := run(t, script, func(c *runner.Config) { c.Outputs = []string{"jsonl=" + records} })
	if r.outcome.Verdict != runner.Passed {
		t.Fatalf("outcome %+v\nstderr:\n%s", r.outcome, r.stderr)
	}
	f, err := os.Open(records)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		OK          bool `json:"ok"`
		InputTokens int  `json:"input_tokens"`
		ImageCount  int  `json:"image_count"`
		ImageBytes  int  `json:"image_bytes"`
		ImagePixels int  `json:"image_pixels"`
	}
	var with, without []line
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || !l.OK {
			t.Fatalf("line %s: %v", sc.Text(), err)
		}
		if l.ImageCount > 0 {
			with = append(with, l)
		} else {
			without = append(without, l)
		}
	}
	if len(with) != 3 || len(without) != 3 {
		t.Fatalf("%d requests with images and %d without, want 3 and 3", len(with), len(without))
	}
	const imageTokens = 2*2 + 4*3 // 40×30 and 100×60 in 28-pixel squares
	for _, l := range with {
		want := line{OK: true, InputTokens: without[0].InputTokens + imageTokens, ImageCount: 2, ImageBytes: bytesSent, ImagePixels: 40*30 + 100*60}
		if l != want {
			t.Errorf("a request with images recorded %+v, want %+v", l, want)
		}
	}
	if l := without[0]; l.ImageBytes != 0 || l.ImagePixels != 0 {
		t.Errorf("a request without images recorded %+v", l)
	}
}

func mustBase64(t *testing.T, payload string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
