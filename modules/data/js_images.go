package data

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// maxImagesPerCall bounds images.synthetic's count (vLLM's random-mm
// allows 255 images a prompt by default).
const maxImagesPerCall = 255

// imagesObject is the 'images' export: { synthetic, file }.
func (in *instance) imagesObject() *goja.Object {
	o := in.vu.Runtime().NewObject()
	must(o.Set("synthetic", in.syntheticImages))
	must(o.Set("file", in.imageFile))
	return o
}

// syntheticImages is images.synthetic({ width, height, count, format,
// draw }): count images of random noise (1 by default; JPEG by default),
// as an array. Its images are the same in every run of the seed: those
// of the VU's n-th call, or with draw, of that number whichever VU asks.
func (in *instance) syntheticImages(opts goja.Value) []*goja.Object {
	const call = "images.synthetic({ width, height, count, format, draw })"
	o := in.options(call, opts, "width", "height", "count", "format", "draw")
	for _, k := range []string{"width", "height"} {
		if !given(o[k]) {
			in.typeError("%s: %s is required", call, k)
		}
	}
	width, height := in.count(call+": width", o["width"]), in.count(call+": height", o["height"])
	count := in.bound(call, "count", o["count"], 1)
	if count > maxImagesPerCall {
		in.typeError("%s: count %d: at most %d images a call", call, count, maxImagesPerCall)
	}
	format := "jpeg"
	if f := o["format"]; given(f) {
		format = f.String()
	}
	var keys []uint64
	if given(o["draw"]) {
		keys = []uint64{drawStreamKey, uint64(in.count(call+": draw", o["draw"]))}
	} else {
		in.imageCalls++
		keys = []uint64{uint64(in.vu.ID()), in.imageCalls}
	}
	out := make([]*goja.Object, count)
	for i := range out {
		img, err := Synthetic(in.m.Seed, width, height, format, append(keys, uint64(i))...)
		if err != nil {
			in.typeError("%s: %v", call, err)
		}
		out[i] = in.imageValue(img)
	}
	return out
}

// imageFile is images.file(pathOrURL): an image file, found by the
// script path rule, or an image a dataset names by its data URL or
// http(s) URL.
func (in *instance) imageFile(source string) *goja.Object {
	if strings.HasPrefix(source, "data:") || strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		img, err := ParseImageURL(source)
		if err != nil {
			in.throw(fmt.Errorf("images.file(): %w", err))
		}
		return in.imageValue(img)
	}
	path, err := in.m.Paths.Resolve(fmt.Sprintf("images.file(%q)", source), source)
	if err != nil {
		in.throw(err)
	}
	img, err := LoadImage(path)
	if err != nil {
		in.throw(fmt.Errorf("images.file(%q): %w", source, err))
	}
	return in.imageValue(img)
}

// imageValue is an image's JavaScript object: { url, bytes, width,
// height, format, part }, part being the chat content part that sends
// it: { type: 'image_url', image_url: { url } }.
func (in *instance) imageValue(img Image) *goja.Object {
	return in.object([]field{
		{"url", img.URL}, {"bytes", img.Bytes}, {"width", img.Width}, {"height", img.Height}, {"format", img.Format},
		{"part", map[string]any{"type": "image_url", "image_url": map[string]any{"url": img.URL}}},
	})
}
