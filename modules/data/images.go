package data

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/dataurl"
)

// Image is one image ready to send in a chat request: its data URL (or,
// for an http(s) URL a dataset names, the URL itself, whose bytes and
// size are unknown, 0).
type Image struct {
	// URL is the data URL ("data:image/jpeg;base64,..."), or the http(s)
	// URL as given.
	URL string
	// Bytes is the image file's size (the data URL's decoded length).
	Bytes int
	// Width and Height are its size in pixels.
	Width, Height int
	// Format is "png", "jpeg" or "gif"; "" for an http(s) URL.
	Format string
}

// ImageFormats are the formats Synthetic makes.
var ImageFormats = []string{"jpeg", "png"}

// Bounds of images: a side of a synthetic image, and an image file (the
// client bounds the images of one request: llm.MaxRequestImageBytes).
const (
	MaxImageSide  = 8192
	MaxImageBytes = 32 << 20
)

// jpegQuality is the quality of synthetic JPEGs: Pillow's default, with
// which vLLM's random-mm dataset encodes its images.
const jpegQuality = 75

// imageStreamKey keeps the images' random streams apart from the
// prompts' and the VUs'.
const imageStreamKey = 0x696d616765 // "image"

// Synthetic makes a width×height image in format ("jpeg" or "png") of
// uniform random RGB noise, as vLLM's random-mm dataset does, so that its
// size in bytes is that of vLLM's images (noise does not compress: a
// JPEG of about 0.6 bytes a pixel at quality 75, a PNG of 3 bytes a pixel,
// stored without compression, which costs nothing to deflate and would
// gain nothing). The pixels are determined by seed and keys: the same
// ones give byte-identical images.
func Synthetic(seed int64, width, height int, format string, keys ...uint64) (Image, error) {
	if width < 1 || height < 1 || width > MaxImageSide || height > MaxImageSide {
		return Image{}, fmt.Errorf("image size %d×%d: each side must be 1 to %d pixels", width, height, MaxImageSide)
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fillNoise(img.Pix, newStream(seed, append([]uint64{imageStreamKey}, keys...)...))
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	case "png":
		err = (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img)
	default:
		return Image{}, fmt.Errorf("image format %q: want one of %s", format, strings.Join(ImageFormats, ", "))
	}
	if err != nil {
		return Image{}, fmt.Errorf("encoding a %d×%d %s: %w", width, height, format, err)
	}
	return Image{URL: dataurl.Encode(format, buf.Bytes()), Bytes: buf.Len(), Width: width, Height: height, Format: format}, nil
}

// fillNoise fills RGBA pixels with random colours, opaque, two pixels
// of r at a time.
func fillNoise(pix []byte, r *rand.Rand) {
	i := 0
	for ; i+8 <= len(pix); i += 8 {
		binary.LittleEndian.PutUint64(pix[i:], r.Uint64()|0xff000000_ff000000)
	}
	if i < len(pix) { // an odd number of pixels
		binary.LittleEndian.PutUint32(pix[i:], r.Uint32()|0xff000000)
	}
}

// LoadImage reads the image file at path (at most MaxImageBytes) as an
// Image: its header must be a PNG's, a JPEG's or a GIF's.
func LoadImage(path string) (Image, error) {
	file, err := capped.ReadFile(path, MaxImageBytes)
	if err != nil {
		return Image{}, fmt.Errorf("image %s: %w", path, err)
	}
	img, err := imageOf(file)
	if err != nil {
		return Image{}, fmt.Errorf("image %s: %w", path, err)
	}
	return img, nil
}

// ParseImageURL reads an image a dataset names by URL: a base64 data URL
// (decoded to read its size), or an http(s) URL, kept as it is, whose
// bytes and size are unknown.
func ParseImageURL(u string) (Image, error) {
	payload, err := dataurl.Payload(u)
	if errors.Is(err, dataurl.ErrRemote) {
		return Image{URL: u}, nil
	}
	if err != nil {
		return Image{}, fmt.Errorf("image URL %w", err)
	}
	if size, err := dataurl.DecodedLen(payload); err != nil || size > MaxImageBytes {
		return Image{}, cmp.Or(err, fmt.Errorf("image data URL of %s: more than the %s an image may have", capped.Size(int64(size)), capped.Size(MaxImageBytes)))
	}
	file, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return Image{}, fmt.Errorf("image data URL: its base64 is broken: %w", err)
	}
	img, err := imageOf(file)
	if err != nil {
		return Image{}, fmt.Errorf("image data URL: %w", err)
	}
	return img, nil
}

// imageOf is the Image of an image file's bytes, sent as a data URL.
func imageOf(file []byte) (Image, error) {
	cfg, format, err := dataurl.FileHeader(file)
	if err != nil {
		return Image{}, err
	}
	return Image{URL: dataurl.Encode(format, file), Bytes: len(file), Width: cfg.Width, Height: cfg.Height, Format: format}, nil
}
