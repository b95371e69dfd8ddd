package vllmbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/dataurl"
	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/runtime/runner"
)

// randomMMArgs are a random-mm benchmark's flags: 1 to 3 images a
// request, of two sizes (and a video bucket of probability 0).
var randomMMArgs = []string{"--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--dataset-name", "random-mm",
	"--num-prompts", "6", "--max-concurrency", "3", "--random-input-len", "8", "--random-output-len", "2", "--seed", "3",
	"--random-mm-base-items-per-request", "2", "--random-mm-num-mm-items-range-ratio", "0.5",
	"--random-mm-limit-mm-per-prompt", `{"image": 3, "video": 0}`,
	"--random-mm-bucket-config", `{(32, 48, 1): 0.5, (16, 16, 1): 0.5, (64, 64, 16): 0}`}

// TestRandomMMSendsImages runs a random-mm benchmark against the
// simulator and checks that each request sent, as content parts of its
// message, the images drawn for it from the seed: their number and sizes.
func TestRandomMMSendsImages(t *testing.T) {
	t.Parallel()
	sim, err := llmsim.New(llmsimtest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var mu sync.Mutex
	var sent []string // each request's image sizes, "48x32 16x16"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			sizes, err := sentImageSizes(body)
			if err != nil {
				t.Errorf("a request's images: %v", err)
			}
			mu.Lock()
			sent = append(sent, sizes)
			mu.Unlock()
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := benchmark(t, randomMMArgs...)
	outcome, stdout, stderr, err := runBenchmark(t, b, srv.URL)
	if err != nil || outcome.Verdict != runner.Passed {
		t.Fatalf("outcome %+v, %v\nstdout:\n%s\nstderr:\n%s", outcome, err, stdout, stderr)
	}
	var want []string
	for _, sizes := range NewCollector(b.Options).Images {
		var s []string
		for _, wh := range sizes {
			s = append(s, fmt.Sprintf("%dx%d", wh[0], wh[1]))
		}
		if len(s) < 1 || len(s) > 3 {
			t.Errorf("a request of %d images, want 1 to 3", len(s))
		}
		want = append(want, strings.Join(s, " "))
	}
	slices.Sort(want)
	slices.Sort(sent)
	if !slices.Equal(sent, want) {
		t.Errorf("the requests' images (width×height):\n%q\nwant those drawn:\n%q", sent, want)
	}
	for _, s := range want {
		for _, size := range strings.Fields(s) {
			if size != "48x32" && size != "16x16" {
				t.Errorf("an image of %s, not a bucket's size", size)
			}
		}
	}
}

// sentImageSizes reads the sizes of a chat body's images from their
// data URLs: "48x32 16x16".
func sentImageSizes(body []byte) (string, error) {
	var req struct {
		Messages []struct {
			Content []struct {
				Type     string `json:"type"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 1 {
		return "", fmt.Errorf("not one message of parts: %v", err)
	}
	var sizes []string
	for _, p := range req.Messages[0].Content {
		if p.Type != "image_url" {
			continue
		}
		payload, err := dataurl.Payload(p.ImageURL.URL)
		if err != nil {
			return "", err
		}
		cfg, format, err := dataurl.Header(payload)
		if err != nil || format != "jpeg" {
			return "", fmt.Errorf("an image of format %q: %v", format, err)
		}
		sizes = append(sizes, fmt.Sprintf("%dx%d", cfg.Width, cfg.Height))
	}
	return strings.Join(sizes, " "), nil
}

// TestRandomMMFlagsRefused checks the errors of random-mm's flags, each
// naming its flag.
func TestRandomMMFlagsRefused(t *testing.T) {
	t.Parallel()
	chat := []string{"--backend", "openai-chat", "--dataset-name", "random-mm"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-name", "random-mm"}, "--dataset-name random-mm sends images in chat messages: it needs --backend openai-chat"},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "{(720, 1280, 16): 1}"), "a bucket of 16 frames is a video"},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "{256: 1}"), `--random-mm-bucket-config: "256: 1": want (height, width, num_frames): probability`},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "(1,1,1)"), "want a dict of (height, width, num_frames) to probability"},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "(1, 1, 1): 1}"), "want a dict of (height, width, num_frames) to probability"},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "{(1, 1, 1): 0}"), "no image bucket has a probability above 0"},
		{append(slices.Clone(chat), "--random-mm-bucket-config", "{(9000, 10, 1): 1}"), "each side must be 1 to 8192 pixels"},
		{append(slices.Clone(chat), "--random-mm-limit-mm-per-prompt", "3"), "--random-mm-limit-mm-per-prompt \"3\": want a JSON object"},
		{append(slices.Clone(chat), "--random-mm-limit-mm-per-prompt", `{"image": 300}`), "at most 255 images a request"},
		{append(slices.Clone(chat), "--random-mm-base-items-per-request", "4", "--random-mm-limit-mm-per-prompt", `{"image": 2}`), "needs at least 4 images a request, more than --random-mm-limit-mm-per-prompt's 2"},
		{append(slices.Clone(chat), "--random-mm-num-mm-items-range-ratio", "1.5"), "--random-mm-num-mm-items-range-ratio must be in [0, 1]"},
		{append(slices.Clone(chat), "--dataset-path", "x.json"), "--dataset-path: cannot be used with --dataset-name random-mm"},
	} {
		fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
		c := AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		_, err := c.Benchmark(fs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
