package data

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/llmrun/llmrun/internal/tokenizer"

	"github.com/dop251/goja"
)

// datasetHandle is the hidden property of a dataset object that holds its
// Go side, for lengths.empirical(dataset).
const datasetHandle = "__dataset"

// datasetRef is a VU's handle on a shared dataset.
type datasetRef struct {
	ds     *Dataset
	tok    tokenizer.Tokenizer
	cursor *atomic.Int64
}

// Preload loads the dataset file at path (absolute) in format for the
// run, before any script asks for it: a program that wrote the script
// (llmrun bench) reports a bad file against its own flag, and
// dataset(path, { format }) then finds it loaded. The load (the wait for
// a named pipe's writer) ends when ctx does.
func (m *Module) Preload(ctx context.Context, path string, format Format) error {
	_, err := m.datasets.Open(ctx, path, format)
	return err
}

// dataset is dataset(path, { format, tokenizer }): the file loaded once
// for the run, as { path, format, length, skipped, get(i), sample(),
// next() }.
func (in *instance) dataset(path string, opts goja.Value) *goja.Object {
	const call = "dataset(path, options)"
	if !in.vu.InitContext() {
		in.throw(fmt.Errorf("dataset(%q): %w", path, errInitOnly))
	}
	o := in.options(call, opts, "format", "tokenizer")
	var format Format
	if f := o["format"]; given(f) {
		var err error
		if format, err = ParseFormat(f.String()); err != nil {
			in.typeError("%s: %v", call, err)
		}
	}
	p, err := in.m.Paths.Resolve(fmt.Sprintf("dataset(%q)", path), path)
	if err != nil {
		in.throw(err)
	}
	ds, err := in.m.datasets.Open(in.vu.Context(), p, format)
	if err != nil {
		in.throw(err)
	}
	tok, err := in.m.loadTokenizer(in.vu.Context(), tokenizerSpec(o["tokenizer"]))
	if err != nil {
		in.throw(err)
	}
	ref := &datasetRef{ds: ds, tok: tok, cursor: in.m.cursor(ds)}
	rt := in.vu.Runtime()
	obj := rt.NewObject()
	must(obj.DefineDataProperty(datasetHandle, rt.ToValue(ref), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	must(obj.Set("path", ds.Path))
	must(obj.Set("format", string(ds.Format)))
	must(obj.Set("length", len(ds.Records)))
	must(obj.Set("skipped", ds.Skipped))
	must(obj.Set("get", func(i goja.Value) *goja.Object {
		k := in.count("get(i)", i)
		if k >= len(ds.Records) {
			in.throw(fmt.Errorf("%s: get(%d): the dataset has %d records, from 0", ds.Path, k, len(ds.Records)))
		}
		return in.record(ref, k)
	}))
	must(obj.Set("sample", func() *goja.Object { return in.record(ref, in.rng.IntN(len(ds.Records))) }))
	must(obj.Set("next", func() *goja.Object {
		return in.record(ref, int((ref.cursor.Add(1)-1)%int64(len(ds.Records))))
	}))
	return obj
}

// record is record i of ref's dataset as { index, id, prompt, completion,
// messages, promptTokens, outputTokens, images }; the token counts are the
// dataset tokenizer's, counted once per record and run.
func (in *instance) record(ref *datasetRef, i int) *goja.Object {
	rt := in.vu.Runtime()
	rec := &ref.ds.Records[i]
	promptTokens, err := ref.ds.PromptTokens(i, ref.tok)
	if err != nil {
		in.throw(err)
	}
	outputTokens, err := ref.ds.OutputTokens(i, ref.tok)
	if err != nil {
		in.throw(err)
	}
	msgs := make([]any, len(rec.Messages))
	for k, m := range rec.Messages {
		mo := rt.NewObject()
		must(mo.Set("role", m.Role))
		must(mo.Set("content", m.Content))
		msgs[k] = mo
	}
	o := rt.NewObject()
	must(o.Set("index", i))
	must(o.Set("id", rec.ID))
	must(o.Set("prompt", rec.Prompt))
	must(o.Set("completion", rec.Completion))
	must(o.Set("messages", rt.NewArray(msgs...)))
	must(o.Set("promptTokens", promptTokens))
	must(o.Set("outputTokens", outputTokens))
	must(o.Set("images", rt.NewArray(anySlice(rec.Images)...)))
	return o
}

// sampler draws the prompt or output token counts of random records, for
// lengths.empirical(dataset, field).
func (ref *datasetRef) sampler(in *instance, field string) func(*rand.Rand) int {
	count := ref.ds.PromptTokens
	if field == "output" {
		count = ref.ds.OutputTokens
	}
	return func(r *rand.Rand) int {
		n, err := count(r.IntN(len(ref.ds.Records)), ref.tok)
		if err != nil {
			in.throw(err)
		}
		return n
	}
}

// anySlice is ss as values of a JavaScript array.
func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
