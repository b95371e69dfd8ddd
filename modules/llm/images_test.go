package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/dataurl"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

// imageDataURL is a data URL of a w×h grey image in format ("png",
// "jpeg"), and its file's length.
func imageDataURL(t testing.TB, format string, w, h int) (string, int) {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	encode := png.Encode
	if format == "jpeg" {
		encode = func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }
	}
	if err := encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return dataurl.Encode(format, buf.Bytes()), buf.Len()
}

// chatWithParts is a chat body of one user message of parts.
func chatWithParts(parts ...any) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": parts}}, "max_tokens": int64(2)}
}

func imagePartOf(url string) map[string]any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}}
}

// TestImagesSentAreCounted checks that a request's images are counted
// from what it sends (their number, decoded bytes and pixels), reach its
// Record, and that the simulator charges them by its rule.
func TestImagesSentAreCounted(t *testing.T) {
	t.Parallel()
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	c, err := NewClient(Config{BaseURL: sim.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	pngURL, pngBytes := imageDataURL(t, "png", 512, 512)
	jpegURL, jpegBytes := imageDataURL(t, "jpeg", 100, 60)
	text := map[string]any{"type": "text", "text": "What differs?"}
	plain := c.Stream(t.Context(), Request{Body: chatWithParts(text)})
	res := c.Stream(t.Context(), Request{Body: chatWithParts(text, imagePartOf(pngURL), imagePartOf(jpegURL))})
	if !plain.OK || !res.OK {
		t.Fatalf("requests failed: %s; %s", plain.Error, res.Error)
	}
	if res.ImageCount != 2 || res.ImageBytes != pngBytes+jpegBytes || res.ImagePixels != 512*512+100*60 {
		t.Errorf("images %d, %d bytes, %d pixels; want 2, %d, %d", res.ImageCount, res.ImageBytes, res.ImagePixels, pngBytes+jpegBytes, 512*512+100*60)
	}
	if want := plain.PromptTokens + 19*19 + 4*3; res.PromptTokens != want {
		t.Errorf("%d prompt tokens, want %d: %d of text and the images' ceil(w/28)·ceil(h/28)", res.PromptTokens, want, plain.PromptTokens)
	}
	var rec Record
	res.Record(&rec, nil, nil)
	if rec.ImageCount != 2 || rec.ImageBytes != res.ImageBytes || rec.ImagePixels != res.ImagePixels {
		t.Errorf("record: %d images, %d bytes, %d pixels; want the result's", rec.ImageCount, rec.ImageBytes, rec.ImagePixels)
	}
	if plain.ImageCount != 0 || plain.ImageBytes != 0 {
		t.Errorf("a request without images: %d images, %d bytes", plain.ImageCount, plain.ImageBytes)
	}
}

// TestImagesCountedInEachFormat checks countImages on each way a body
// holds an image, and its refusals, which name the part.
func TestImagesCountedInEachFormat(t *testing.T) {
	t.Parallel()
	url, size := imageDataURL(t, "png", 30, 20)
	payload := strings.TrimPrefix(url, "data:image/png;base64,")
	for _, tc := range []struct {
		name    string
		parts   []any
		want    imageFigures
		wantErr string
	}{
		{"image_url object", []any{imagePartOf(url)}, imageFigures{1, int64(size), 600}, ""},
		{"image_url string", []any{map[string]any{"type": "image_url", "image_url": url}}, imageFigures{1, int64(size), 600}, ""},
		{"anthropic base64", []any{map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": payload}}}, imageFigures{1, int64(size), 600}, ""},
		{"http URL", []any{imagePartOf("https://example.com/a.png")}, imageFigures{count: 1}, ""},
		{"text only", []any{map[string]any{"type": "text", "text": "hi"}}, imageFigures{}, ""},
		{"broken base64", []any{map[string]any{"type": "text", "text": "hi"}, imagePartOf("data:image/png;base64,!!!!")}, imageFigures{}, "messages[0].content[1]: the image's base64 is broken"},
		{"not a data URL", []any{imagePartOf("file:///etc/passwd")}, imageFigures{}, "messages[0].content[0]: image_url.url \"file:///etc/passwd\": want a base64 data URL"},
		{"not an image", []any{imagePartOf("data:image/png;base64,aGVsbG8h")}, imageFigures{}, "messages[0].content[0]: not a PNG, JPEG or GIF image"},
		{"cut base64", []any{imagePartOf("data:image/png;base64,aGVsbG8")}, imageFigures{}, "not a multiple of 4"},
	} {
		got, err := countImages(chatWithParts(tc.parts...))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// TestImagesOfResponsesInput checks that the images of a Responses API
// body, input_image parts of its input's message items, are counted as a
// chat body's are, and that a broken one is refused naming its part.
func TestImagesOfResponsesInput(t *testing.T) {
	t.Parallel()
	url, size := imageDataURL(t, "png", 30, 20)
	input := func(parts ...any) map[string]any {
		return map[string]any{"input": []any{
			map[string]any{"role": "user", "content": "first"},
			map[string]any{"type": "message", "role": "user", "content": parts},
		}}
	}
	text := map[string]any{"type": "input_text", "text": "What is in it?"}
	for _, tc := range []struct {
		name    string
		body    map[string]any
		want    imageFigures
		wantErr string
	}{
		{"data URL", input(text, map[string]any{"type": "input_image", "image_url": url, "detail": "auto"}), imageFigures{1, int64(size), 600}, ""},
		{"https URL", input(map[string]any{"type": "input_image", "image_url": "https://example.com/a.png"}), imageFigures{count: 1}, ""},
		{"file_id", input(map[string]any{"type": "input_image", "file_id": "file-123"}), imageFigures{count: 1}, ""},
		{"input string", map[string]any{"input": "hello"}, imageFigures{}, ""},
		{"broken", input(text, map[string]any{"type": "input_image", "image_url": "data:image/png;base64,!!!!"}), imageFigures{}, "input[1].content[1]: the image's base64 is broken"},
	} {
		got, err := countImages(tc.body)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// TestImagesOverTheCapAreRefused checks that a request whose images pass
// MaxRequestImageBytes is refused before it is sent, naming the image.
func TestImagesOverTheCapAreRefused(t *testing.T) {
	t.Parallel()
	huge := "data:image/png;base64," + strings.Repeat("AAAA", MaxRequestImageBytes/3+1)
	c, err := NewClient(Config{BaseURL: "http://127.0.0.1:9", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	res := c.Stream(t.Context(), Request{Body: chatWithParts(imagePartOf(huge))})
	if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, "messages[0].content[0]: the request's images pass 64 MiB") {
		t.Errorf("class %s: %s; want invalid_request naming the image and the cap", res.Class, res.Error)
	}
}

// BenchmarkCountImages is what counting costs a request that sends a
// 1 MiB image (a 1024×1024 grey PNG, stored without compression).
func BenchmarkCountImages(b *testing.B) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, image.NewGray(image.Rect(0, 0, 1024, 1024))); err != nil {
		b.Fatal(err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	body := chatWithParts(map[string]any{"type": "text", "text": "hi"}, imagePartOf(url))
	b.ReportAllocs()
	for b.Loop() {
		if f, err := countImages(body); err != nil || f.bytes != int64(buf.Len()) {
			b.Fatal(f, err)
		}
	}
}

// TestImagesOfVLLMsExampleRequest counts the images of the request body
// of vLLM's example client (examples/openai_vision_api_client.py,
// https://docs.vllm.ai/en/v0.6.3/getting_started/examples/openai_vision_api_client.html):
// text, then an image_url part by base64 data URL (here a 3×2 PNG of 75
// bytes in place of its JPEG) and one by https URL, as OpenAI's chat API
// takes them (testdata/openai-chat-images.json).
func TestImagesOfVLLMsExampleRequest(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/openai-chat-images.json")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	got, err := countImages(body)
	if want := (imageFigures{count: 2, bytes: 75, pixels: 6}); err != nil || got != want {
		t.Errorf("%+v, %v; want %+v", got, err, want)
	}
}
