package llm

import (
	"errors"
	"fmt"

	"github.com/llmrun/llmrun/internal/dataurl"
)

// MaxRequestImageBytes bounds the images of one request: their decoded
// bytes together. A request over it is refused as invalid_request,
// naming the image that passed it.
const MaxRequestImageBytes = 64 << 20

// imageFigures are what a request sends of images: how many, their bytes
// (decoded from the data URLs) and their pixels (from the images'
// headers). An image sent by http(s) URL counts as one of count, of
// unknown bytes and pixels.
type imageFigures struct {
	count         int
	bytes, pixels int64
}

// countImages finds the images of a body's messages: OpenAI's chat
// content parts { type: 'image_url', image_url: { url } } (or image_url
// a string), Anthropic's { type: 'image', source: { type: 'base64',
// data } }, and the Responses API's { type: 'input_image', image_url }
// in the message items of its "input". A data URL whose base64 or image
// header is broken, or images past MaxRequestImageBytes, are an error
// naming the part. It decodes only each image's header, once per
// request.
func countImages(body map[string]any) (imageFigures, error) {
	var f imageFigures
	for _, key := range [...]string{"messages", "input"} {
		messages, _ := body[key].([]any) // a Responses input may be a string: no images
		for i, m := range messages {
			msg, _ := m.(map[string]any)
			parts, _ := msg["content"].([]any)
			for j, p := range parts {
				part, _ := p.(map[string]any)
				payload, ok, err := imagePart(part)
				if err == nil && ok {
					err = f.add(payload)
				}
				if err != nil {
					return f, fmt.Errorf("%s[%d].content[%d]: %w", key, i, j, err)
				}
			}
		}
	}
	return f, nil
}

// imagePart returns the base64 payload of a content part that is an
// image ("" for an image sent by URL), and whether it is one.
func imagePart(part map[string]any) (string, bool, error) {
	switch part["type"] {
	case "image_url", "input_image":
		url, _ := part["image_url"].(string)
		if o, ok := part["image_url"].(map[string]any); ok {
			url, _ = o["url"].(string)
		}
		if url == "" && part["file_id"] != nil {
			return "", true, nil // a Responses input_image by file_id: its bytes are the server's
		}
		payload, err := dataurl.Payload(url)
		if errors.Is(err, dataurl.ErrRemote) {
			return "", true, nil
		}
		if err != nil {
			return "", true, fmt.Errorf("image_url.url %w", err)
		}
		return payload, true, nil
	case "image":
		source, _ := part["source"].(map[string]any)
		if source["type"] != "base64" {
			return "", true, nil // a URL source
		}
		data, ok := source["data"].(string)
		if !ok {
			return "", true, fmt.Errorf("source.data: want the image's base64, got %T", source["data"])
		}
		return data, true, nil
	}
	return "", false, nil
}

// add counts one image of base64 payload ("": one sent by URL).
func (f *imageFigures) add(payload string) error {
	f.count++
	if payload == "" {
		return nil
	}
	size, err := dataurl.DecodedLen(payload)
	if err != nil {
		return err
	}
	if f.bytes += int64(size); f.bytes > MaxRequestImageBytes {
		return fmt.Errorf("the request's images pass %d MiB, the most one request may send", MaxRequestImageBytes>>20)
	}
	cfg, _, err := dataurl.Header(payload)
	if err != nil {
		return err
	}
	f.pixels += int64(cfg.Width) * int64(cfg.Height)
	return nil
}
