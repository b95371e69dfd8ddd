package llmsim

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llmrun/llmrun/internal/dataurl"
)

// DefaultImagePatch is Config.ImagePatch's default: Qwen2-VL's 14-pixel
// patches, merged 2×2 into one token.
const DefaultImagePatch = 28

// contentPart is a part of a message's content array: text, an OpenAI
// image ({ type: 'image_url', image_url: { url } }, or the Responses
// API's { type: 'input_image', image_url: url }) or an Anthropic image
// ({ type: 'image', source: { type: 'base64', data } }).
type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text"`
	ImageURL *imageURL `json:"image_url"`
	Source   *struct {
		Type string `json:"type"`
		Data string `json:"data"`
	} `json:"source"`
}

// imageURL is an image_url part's image_url: { url }, or the URL alone
// (as some clients send it, and llmrun's client counts it).
type imageURL struct {
	URL string `json:"url"`
}

// UnmarshalJSON accepts { url } or a string.
func (u *imageURL) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &u.URL)
	}
	type plain imageURL
	return json.Unmarshal(b, (*plain)(u))
}

// imageSize is an image's size in pixels.
type imageSize struct{ width, height int }

// imageSize reads the size of an image part's image from its header. The
// simulator fetches nothing: an http(s) URL is refused.
func (p *contentPart) imageSize() (imageSize, error) {
	var payload string
	switch {
	case (p.Type == "image_url" || p.Type == "input_image") && p.ImageURL != nil:
		field := "image_url.url"
		if p.Type == "input_image" {
			field = "image_url" // the URL itself
		}
		var err error
		if payload, err = dataurl.Payload(p.ImageURL.URL); errors.Is(err, dataurl.ErrRemote) {
			return imageSize{}, fmt.Errorf("%s is an http(s) URL: the simulator fetches no image; send it as a base64 data URL", field)
		} else if err != nil {
			return imageSize{}, fmt.Errorf("%s %w", field, err)
		}
	case p.Type == "image" && p.Source != nil && p.Source.Type == "base64":
		payload = p.Source.Data
	default:
		return imageSize{}, fmt.Errorf("an %s part without its image (image_url.url, or source of type base64)", p.Type)
	}
	if _, err := dataurl.DecodedLen(payload); err != nil {
		return imageSize{}, err
	}
	cfg, _, err := dataurl.Header(payload)
	if err != nil {
		return imageSize{}, err
	}
	return imageSize{cfg.Width, cfg.Height}, nil
}

// imageRule is what images cost in prompt tokens (Config.ImagePatch and
// Config.ImageTokens).
type imageRule struct{ patch, perImage int }

// tokens is the prompt tokens of images: perImage each when set, else
// ceil(w/patch)·ceil(h/patch) each.
func (r imageRule) tokens(images []imageSize) int {
	n := 0
	for _, im := range images {
		if r.perImage > 0 {
			n += r.perImage
			continue
		}
		patch := max(r.patch, 1)
		n += ceilDiv(im.width, patch) * ceilDiv(im.height, patch)
	}
	return n
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
