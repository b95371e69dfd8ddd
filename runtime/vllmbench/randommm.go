package vllmbench

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/modules/data"
)

// RandomMM is vLLM's random-mm dataset (RandomMultiModalDataset,
// vllm/benchmarks/datasets.py): the random dataset's prompts, each with
// images of random noise whose number and sizes are drawn per request.
// llmrun sends images only, as JPEG data URLs (as vLLM does).
type RandomMM struct {
	// BaseItems is --random-mm-base-items-per-request: the images a
	// request has around which their number is drawn.
	BaseItems int
	// RangeRatio is --random-mm-num-mm-items-range-ratio r: the number is
	// uniform in [floor(n·(1−r)), ceil(n·(1+r))], n = BaseItems.
	RangeRatio float64
	// ImageLimit is --random-mm-limit-mm-per-prompt's "image": the most
	// images a request has.
	ImageLimit int
	// Buckets are --random-mm-bucket-config's image sizes with their
	// probabilities (normalized when drawn).
	Buckets []ImageBucket
}

// ImageBucket is an image size of --random-mm-bucket-config and the
// probability of drawing it.
type ImageBucket struct {
	Width, Height int
	P             float64
}

// randomMMDefaults are vLLM's defaults: 1 image a request, at most 255,
// 256×256 or 1280×720 with even chances (its third, video, bucket has
// probability 0).
func randomMMDefaults() RandomMM {
	return RandomMM{BaseItems: 1, ImageLimit: 255, Buckets: []ImageBucket{{256, 256, 0.5}, {1280, 720, 0.5}}}
}

// randomMMFlags are the random-mm flags as given.
type randomMMFlags struct {
	limit, buckets string
}

// bucketEntry is one "(height, width, frames): p" of a bucket config, its
// tuple quoted or not.
var bucketEntry = regexp.MustCompile(`^\s*"?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)"?\s*:\s*([^,]+?)\s*$`)

// parseBuckets parses --random-mm-bucket-config: a Python dict such as
// '{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}' of (height, width,
// num_frames) to probability. A bucket of more than one frame is a
// video, which llmrun does not send: refused unless its probability is 0.
func parseBuckets(s string) ([]ImageBucket, error) {
	const flag = "--random-mm-bucket-config"
	body, opened := strings.CutPrefix(strings.TrimSpace(s), "{")
	body, closed := strings.CutSuffix(body, "}")
	if !opened || !closed || strings.TrimSpace(body) == "" {
		return nil, fmt.Errorf("%s %q: want a dict of (height, width, num_frames) to probability, e.g. '{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}'", flag, s)
	}
	var out []ImageBucket
	total := 0.0
	for _, entry := range splitEntries(body) {
		m := bucketEntry.FindStringSubmatch(entry)
		if m == nil {
			return nil, fmt.Errorf("%s: %q: want (height, width, num_frames): probability", flag, strings.TrimSpace(entry))
		}
		h, _ := strconv.Atoi(m[1])
		w, _ := strconv.Atoi(m[2])
		frames, _ := strconv.Atoi(m[3])
		p, err := strconv.ParseFloat(m[4], 64)
		if err != nil || p < 0 || math.IsInf(p, 0) || math.IsNaN(p) {
			return nil, fmt.Errorf("%s: %q: the probability must be a number ≥ 0", flag, strings.TrimSpace(entry))
		}
		switch {
		case p == 0:
			continue
		case frames != 1:
			return nil, fmt.Errorf("%s: %q: a bucket of %d frames is a video, and llmrun bench sends images only (num_frames 1); give it probability 0", flag, strings.TrimSpace(entry), frames)
		case w < 1 || h < 1 || w > data.MaxImageSide || h > data.MaxImageSide:
			return nil, fmt.Errorf("%s: %q: each side must be 1 to %d pixels", flag, strings.TrimSpace(entry), data.MaxImageSide)
		}
		out = append(out, ImageBucket{Width: w, Height: h, P: p})
		total += p
	}
	if total == 0 {
		return nil, fmt.Errorf("%s %q: no image bucket has a probability above 0", flag, s)
	}
	return out, nil
}

// splitEntries splits a dict's body at the commas outside parentheses.
func splitEntries(body string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range body {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, body[start:i])
				start = i + 1
			}
		}
	}
	if rest := body[start:]; strings.TrimSpace(rest) != "" {
		out = append(out, rest)
	}
	return out
}

// parseImageLimit reads --random-mm-limit-mm-per-prompt, a JSON object
// of modality to count, for its "image" (255 when it names none).
func parseImageLimit(s string) (int, error) {
	var limits map[string]int
	if err := json.Unmarshal([]byte(s), &limits); err != nil {
		return 0, fmt.Errorf(`--random-mm-limit-mm-per-prompt %q: want a JSON object such as '{"image": 3, "video": 0}'`, s)
	}
	n, ok := limits["image"]
	if !ok {
		return randomMMDefaults().ImageLimit, nil
	}
	if n < 0 {
		return 0, fmt.Errorf("--random-mm-limit-mm-per-prompt: image must not be negative, got %d", n)
	}
	return n, nil
}

// complete fills o.RandomMM from the flags as given.
func (f *randomMMFlags) complete(o *Options) error {
	var err error
	if f.limit != "" {
		if o.RandomMM.ImageLimit, err = parseImageLimit(f.limit); err != nil {
			return err
		}
	}
	if f.buckets != "" {
		if o.RandomMM.Buckets, err = parseBuckets(f.buckets); err != nil {
			return err
		}
	}
	return nil
}

// itemRange is the range of a request's number of images, as vLLM's
// get_mm_item_range: [floor(n·(1−r)), ceil(n·(1+r))], the top clamped
// to the limit.
func (m RandomMM) itemRange() (low, high int, err error) {
	if m.BaseItems < 0 {
		return 0, 0, fmt.Errorf("--random-mm-base-items-per-request must not be negative, got %d", m.BaseItems)
	}
	if !(m.RangeRatio >= 0 && m.RangeRatio <= 1) {
		return 0, 0, fmt.Errorf("--random-mm-num-mm-items-range-ratio must be in [0, 1], got %v", m.RangeRatio)
	}
	low = int(math.Floor(float64(m.BaseItems) * (1 - m.RangeRatio)))
	high = min(int(math.Ceil(float64(m.BaseItems)*(1+m.RangeRatio))), m.ImageLimit)
	if low > high {
		return 0, 0, fmt.Errorf("--random-mm-base-items-per-request %d with --random-mm-num-mm-items-range-ratio %v needs at least %d images a request, more than --random-mm-limit-mm-per-prompt's %d",
			m.BaseItems, m.RangeRatio, low, m.ImageLimit)
	}
	return low, high, nil
}

// checkRandomMM checks the random-mm dataset's options.
func (o Options) checkRandomMM() error {
	if o.DatasetName != "random-mm" {
		return nil
	}
	if o.api() != "chat" {
		return fmt.Errorf("--dataset-name random-mm sends images in chat messages: it needs --backend openai-chat (or --endpoint /v1/chat/completions)")
	}
	if o.RandomMM.ImageLimit >= maxImagesPerRequest {
		return fmt.Errorf("--random-mm-limit-mm-per-prompt: image %d: llmrun bench sends at most %d images a request", o.RandomMM.ImageLimit, maxImagesPerRequest-1)
	}
	_, _, err := o.RandomMM.itemRange()
	return err
}

// randomMMStream keeps the image draws' random stream apart from the
// others a seed starts.
const randomMMStream = 0x72616e646f6d6d6d // "randommm"

// imageSizes are the sizes ([width, height]) of the images of each of
// the run's n requests, drawn from the seed before the run.
func (m RandomMM) imageSizes(n int, seed int64) [][][2]int {
	low, high, err := m.itemRange()
	if err != nil {
		return nil // Validate refused these options
	}
	total := 0.0
	for _, b := range m.Buckets {
		total += b.P
	}
	rng := rand.New(rand.NewPCG(uint64(seed), randomMMStream))
	out := make([][][2]int, n)
	for i := range out {
		k := low + rng.IntN(high-low+1)
		sizes := make([][2]int, k)
		for j := range sizes {
			x := rng.Float64() * total
			b := m.Buckets[len(m.Buckets)-1]
			for _, c := range m.Buckets {
				if x < c.P {
					b = c
					break
				}
				x -= c.P
			}
			sizes[j] = [2]int{b.Width, b.Height}
		}
		out[i] = sizes
	}
	return out
}

// maxImagesPerRequest is the most images a request may have: the draw
// numbers of a request's images (images.synthetic's draw) are its
// number × this + the image's.
const maxImagesPerRequest = 256
