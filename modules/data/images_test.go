package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decoded is the image file behind a data URL, decoded whole.
func decoded(t *testing.T, img Image) (image.Image, string) {
	t.Helper()
	_, payload, ok := strings.Cut(img.URL, ";base64,")
	if !ok {
		t.Fatalf("not a data URL: %.40s", img.URL)
	}
	file, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(file) != img.Bytes {
		t.Errorf("Bytes = %d, the data URL holds %d", img.Bytes, len(file))
	}
	m, format, err := image.Decode(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	return m, format
}

func TestSyntheticImagesAreTheirSizeAndFormat(t *testing.T) {
	for _, tc := range []struct {
		format        string
		width, height int
		// minBytes, maxBytes bound the file: noise does not compress.
		minBytes, maxBytes int
	}{
		{"png", 512, 512, 3 * 512 * 512, 3*512*512 + 4096},
		{"jpeg", 512, 512, 512 * 512 / 4, 3 * 512 * 512},
		{"jpeg", 3, 5, 1, 2000},
		{"png", 1, 1, 1, 200},
	} {
		img, err := Synthetic(7, tc.width, tc.height, tc.format, 1)
		if err != nil {
			t.Fatal(err)
		}
		m, format := decoded(t, img)
		if got := m.Bounds().Size(); got.X != tc.width || got.Y != tc.height || img.Width != tc.width || img.Height != tc.height {
			t.Errorf("%s %d×%d: decodes to %v, says %d×%d", tc.format, tc.width, tc.height, got, img.Width, img.Height)
		}
		if format != tc.format || img.Format != tc.format || !strings.HasPrefix(img.URL, "data:image/"+tc.format+";base64,") {
			t.Errorf("%s: decodes as %s, says %s, URL %.30s", tc.format, format, img.Format, img.URL)
		}
		if img.Bytes < tc.minBytes || img.Bytes > tc.maxBytes {
			t.Errorf("%s %d×%d: %d bytes, want %d to %d", tc.format, tc.width, tc.height, img.Bytes, tc.minBytes, tc.maxBytes)
		}
	}
}

func TestSyntheticImagesAreDeterminedBySeedAndKeys(t *testing.T) {
	hash := func(seed int64, keys ...uint64) [32]byte {
		img, err := Synthetic(seed, 64, 48, "jpeg", keys...)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256([]byte(img.URL))
	}
	first := hash(42, 1, 0)
	if hash(42, 1, 0) != first {
		t.Error("the same seed and keys made different images")
	}
	for name, other := range map[string][32]byte{"seed": hash(43, 1, 0), "call": hash(42, 2, 0), "index": hash(42, 1, 1)} {
		if other == first {
			t.Errorf("another %s made the same image", name)
		}
	}
}

func TestImagesRefuseWhatTheyCannotBe(t *testing.T) {
	dir := t.TempDir()
	notImage := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notImage, []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"too wide", func() error { _, err := Synthetic(1, MaxImageSide+1, 1, "png"); return err }, "each side must be 1 to 8192"},
		{"no pixels", func() error { _, err := Synthetic(1, 0, 10, "png"); return err }, "each side must be 1 to 8192"},
		{"format", func() error { _, err := Synthetic(1, 8, 8, "webp"); return err }, `image format "webp": want one of jpeg, png`},
		{"missing file", func() error { _, err := LoadImage(filepath.Join(dir, "absent.png")); return err }, "absent.png"},
		{"not an image", func() error { _, err := LoadImage(notImage); return err }, "notes.txt: not a PNG, JPEG or GIF image"},
		{"broken base64", func() error { _, err := ParseImageURL("data:image/png;base64,!!!!"); return err }, "its base64 is broken"},
		{"no base64", func() error { _, err := ParseImageURL("data:image/png,abc"); return err }, "want a base64 data URL"},
		{"not an image URL", func() error { _, err := ParseImageURL("data:image/png;base64,aGVsbG8="); return err }, "not a PNG, JPEG or GIF"},
		{"oversized data URL", func() error {
			_, err := ParseImageURL("data:image/png;base64," + strings.Repeat("A", MaxImageBytes/3*4+8))
			return err
		}, "more than the 32 MiB an image may have"},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestImageFilesAndURLsAreRead(t *testing.T) {
	img, err := Synthetic(3, 40, 30, "png")
	if err != nil {
		t.Fatal(err)
	}
	_, payload, _ := strings.Cut(img.URL, ";base64,")
	file, _ := base64.StdEncoding.DecodeString(payload)
	path := filepath.Join(t.TempDir(), "a.png")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	fromURL, err := ParseImageURL(img.URL)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]Image{"file": fromFile, "data URL": fromURL} {
		if got != img {
			t.Errorf("from its %s: %+v, want %+v", name, got, img)
		}
	}
	web, err := ParseImageURL("https://example.com/cat.png")
	if err != nil || web != (Image{URL: "https://example.com/cat.png"}) {
		t.Errorf("an https URL: %+v, %v; want it kept as it is, of unknown size", web, err)
	}
}

func BenchmarkSyntheticImage(b *testing.B) {
	for _, side := range []int{512, 1024} {
		for _, format := range ImageFormats {
			b.Run(fmt.Sprintf("%s-%d", format, side), func(b *testing.B) {
				var size int
				for i := range b.N {
					img, err := Synthetic(1, side, side, format, uint64(i))
					if err != nil {
						b.Fatal(err)
					}
					size = img.Bytes
				}
				b.ReportMetric(float64(size), "image-bytes")
			})
		}
	}
}
