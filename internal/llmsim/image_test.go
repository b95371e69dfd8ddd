package llmsim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/data"
)

// testImageURL is a data URL of a w×h image in format ("png", "jpeg").
func testImageURL(t *testing.T, format string, w, h int) string {
	t.Helper()
	img, err := data.Synthetic(1, w, h, format)
	if err != nil {
		t.Fatal(err)
	}
	return img.URL
}

// withImages is a chat body whose one message is text then an OpenAI
// image_url part per URL.
func withImages(text string, urls ...string) map[string]any {
	parts := []any{map[string]any{"type": "text", "text": text}}
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}})
	}
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": parts}}, "max_tokens": 1}
}

// TestImagesCostPromptTokensByTheRule checks that the images of a chat
// message add to usage.prompt_tokens exactly ceil(w/patch)·ceil(h/patch)
// each, or --image-tokens each, in OpenAI's and Anthropic's formats.
func TestImagesCostPromptTokensByTheRule(t *testing.T) {
	t.Parallel()
	const text = "Describe these pictures."
	png100x60, jpeg28x29 := testImageURL(t, "png", 100, 60), testImageURL(t, "jpeg", 28, 29)
	for _, tc := range []struct {
		name        string
		patch, each int
		want        int // image tokens
	}{
		{"patch 28", 28, 0, 4*3 + 1*2},
		{"patch 14", 14, 0, 8*5 + 2*3},
		{"fixed", 28, 100, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := fastConfig()
			cfg.ImagePatch, cfg.ImageTokens = tc.patch, tc.each
			r := listen(t, cfg)
			plain := complete(t, r, "/v1/chat/completions", withImages(text)).Usage.PromptTokens
			got := complete(t, r, "/v1/chat/completions", withImages(text, png100x60, jpeg28x29)).Usage.PromptTokens
			if got-plain != tc.want {
				t.Errorf("prompt_tokens %d with the images, %d without: %d for the images, want %d", got, plain, got-plain, tc.want)
			}
			asStrings := withImages(text, png100x60, jpeg28x29)
			for _, part := range asStrings["messages"].([]any)[0].(map[string]any)["content"].([]any)[1:] {
				p := part.(map[string]any)
				p["image_url"] = p["image_url"].(map[string]any)["url"] // image_url: "data:..."
			}
			if n := complete(t, r, "/v1/chat/completions", asStrings).Usage.PromptTokens; n != got {
				t.Errorf("prompt_tokens %d with image_url strings, %d with { url } objects", n, got)
			}
			b64 := func(url string) string { _, payload, _ := strings.Cut(url, ";base64,"); return payload }
			anthropicPlain := anthropicInputTokens(t, r, map[string]any{"type": "text", "text": text})
			anthropicImages := anthropicInputTokens(t, r, map[string]any{"type": "text", "text": text},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(png100x60)}},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/jpeg", "data": b64(jpeg28x29)}})
			if anthropicImages-anthropicPlain != tc.want {
				t.Errorf("Anthropic: input_tokens %d with the images, %d without, want %d more", anthropicImages, anthropicPlain, tc.want)
			}
		})
	}
}

// TestImagesTheSimulatorRefuses checks the 400 of each image the
// simulator cannot read, naming the part.
func TestImagesTheSimulatorRefuses(t *testing.T) {
	t.Parallel()
	r := listen(t, fastConfig())
	for _, tc := range []struct {
		name, url, want string
	}{
		{"http URL", "https://example.com/cat.png", "content[1]: image_url.url is an http(s) URL: the simulator fetches no image"},
		{"broken base64", "data:image/png;base64,!!!!", "content[1]: the image's base64 is broken"},
		{"not base64", "data:image/png,xyz", "want a base64 data URL"},
		{"not an image", "data:image/png;base64,aGVsbG8h", "content[1]: not a PNG, JPEG or GIF image"},
		{"a header claiming 2²⁰ pixels a side", lyingPNG(1 << 20), "your request has 1402502507 input tokens"},
	} {
		resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/chat/completions", withImages("hi", tc.url))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: status %d, %s; want 400 saying %q", tc.name, resp.StatusCode, data, tc.want)
		}
	}
}

// lyingPNG is the data URL of a PNG file of only its header, which claims
// side pixels a side: a decompression bomb's header.
func lyingPNG(side uint32) string {
	ihdr := binary.BigEndian.AppendUint32(nil, side)
	ihdr = binary.BigEndian.AppendUint32(ihdr, side)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(ihdr)))
	chunk = append(append(chunk, "IHDR"...), ihdr...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), chunk...))
}

// anthropicInputTokens is usage.input_tokens of a Messages request whose
// one message has parts.
func anthropicInputTokens(t *testing.T, r *Running, parts ...any) int {
	t.Helper()
	body := map[string]any{"model": "m", "max_tokens": 1, "messages": []any{map[string]any{"role": "user", "content": parts}}}
	resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Usage.InputTokens == 0 {
		t.Fatalf("Anthropic: status %d, usage %+v, %v", resp.StatusCode, out.Usage, err)
	}
	return out.Usage.InputTokens
}
