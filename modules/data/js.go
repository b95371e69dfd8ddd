package data

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/scriptpath"
)

// Module is the 'data' JavaScript module of one run:
//
//	import { tokenizer, prompts, lengths, dataset } from 'data';
//	const promptLen = lengths.lognormal({ mean: 512, sigma: 0.8, min: 32, max: 8192 });
//	const text = prompts.synthetic(promptLen.sample());   // exactly that many tokens
//	const chats = dataset('data/sharegpt.json');          // init code only; shared by every VU
//	const [img] = images.synthetic({ width: 512, height: 512 }); // img.part goes in a message's content
//
// Tokenizers, synthesizers, prefix groups and datasets are built once per
// run and shared read-only by every VU; each VU draws from its own random
// streams, seeded by the run's seed, the VU's number and the order in which
// its script asked for them, so a run is reproducible under --seed.
type Module struct {
	// Seed is the run's seed (--seed).
	Seed int64
	// Tokenizer is the default tokenizer spec (--tokenizer); "" is
	// tokenizer.DefaultEncoding.
	Tokenizer string
	// Paths finds the files the script names (datasets, tokenizer
	// files); nil: relative paths are the working directory's.
	Paths *scriptpath.Resolver

	datasets Datasets

	mu      sync.Mutex
	synths  map[string]*Synthesizer
	groups  map[groupsKey]*PrefixGroups
	cursors map[*Dataset]*atomic.Int64
	// expected are the run's counts of the prefix-cache hits the prompts
	// built from hash ids imply, by block size and cache capacity.
	expected map[expectedKey]*ExpectedHits
}

type expectedKey struct{ blockSize, cacheBlocks int }

// Metrics are the data module's built-in metrics: the prompts built from
// a trace's hash ids (prompts.fromHashIds) and the prefix-cache hits they
// imply, whose ratio the console prints beside the server's hit rate.
type Metrics struct {
	HashInputTokens      *metrics.Metric
	ExpectedCachedTokens *metrics.Metric
}

// Names of the data module's metrics.
const (
	HashInputTokensMetric      = "trace_input_tokens"
	ExpectedCachedTokensMetric = "trace_expected_cached_tokens"
)

// RegisterMetrics registers the data module's built-in metrics.
func RegisterMetrics(reg *metrics.Registry) *Metrics {
	return &Metrics{
		HashInputTokens: reg.MustRegister(metrics.Metric{Name: HashInputTokensMetric, Type: metrics.Counter, Unit: "tokens",
			Desc: "input tokens of the prompts built from hash ids (prompts.fromHashIds)"}),
		ExpectedCachedTokens: reg.MustRegister(metrics.Metric{Name: ExpectedCachedTokensMetric, Type: metrics.Counter, Unit: "tokens",
			Desc: "those of them an earlier prompt's hash ids put in a prefix cache: the hit rate the trace implies"}),
	}
}

type groupsKey struct {
	tokenizer            string
	groups, prefixTokens int
}

// NewInstance implements modules.Module.
func (m *Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	in := &instance{m: m, vu: vu, metrics: RegisterMetrics(vu.Registry())}
	in.rng = in.stream()
	rt := vu.Runtime()
	in.exports = modules.LazyExports(rt, []string{"tokenizer", "dataset", "prompts", "lengths", "images"}, func(name string) any {
		switch name {
		case "tokenizer":
			return in.tokenizerObject
		case "dataset":
			return in.dataset
		case "prompts":
			return in.object([]field{{"synthetic", in.synthetic}, {"sharedPrefix", in.sharedPrefix}, {"fromHashIds", in.fromHashIDs}})
		case "lengths":
			return in.object([]field{{"fixed", in.fixed}, {"uniform", in.uniform}, {"normal", in.normal}, {"lognormal", in.lognormal}, {"empirical", in.empirical}})
		default:
			return in.imagesObject()
		}
	})
	return in, nil
}

// field is a property of an object the module exports.
type field struct {
	name  string
	value any
}

// object is a plain object of fields, in their order.
func (in *instance) object(fields []field) *goja.Object {
	obj := in.vu.Runtime().NewObject()
	for _, f := range fields {
		must(obj.Set(f.name, f.value))
	}
	return obj
}

// instance is one VU's 'data' module.
type instance struct {
	m       *Module
	vu      modules.VU
	metrics *Metrics
	exports *goja.Object
	// rng is the VU's stream for synthetic prompts and dataset samples;
	// each length distribution gets its own.
	rng     *rand.Rand
	streams uint64
	// imageCalls counts the VU's calls of images.synthetic without draw.
	imageCalls uint64
}

func (in *instance) Exports() *goja.Object { return in.exports }

// stream returns the VU's next random stream.
func (in *instance) stream() *rand.Rand {
	in.streams++
	return newStream(in.m.Seed, uint64(in.vu.ID()), in.streams)
}

// drawStream is the stream a synthetic text is drawn from: the VU's own
// without the option draw, else the stream of the run's seed and that
// number, so that the text drawn for a number is the same in every run of
// the seed whichever VU draws it (a benchmark numbering its requests sends
// the same prompts in the same order).
func (in *instance) drawStream(call string, draw goja.Value) *rand.Rand {
	if !given(draw) {
		return in.rng
	}
	return newStream(in.m.Seed, drawStreamKey, uint64(in.count(call+": draw", draw)))
}

// drawStreamKey keeps the numbered draws' streams apart from the VUs' and
// the prefixes'.
const drawStreamKey = 0x64726177 // "draw"

// loadTokenizer loads the tokenizer spec names: the script's, found by
// Paths, or for "" the run's default (--tokenizer, a path of the command
// line's, relative to the working directory); ctx ending (the VU's) stops
// a download.
func (m *Module) loadTokenizer(ctx context.Context, spec string) (tokenizer.Tokenizer, error) {
	switch {
	case spec != "":
		var err error
		if spec, err = m.Paths.ResolveTokenizer(fmt.Sprintf("tokenizer %q", spec), spec); err != nil {
			return nil, err
		}
	case m.Tokenizer != "":
		spec = m.Tokenizer
	default:
		spec = tokenizer.DefaultEncoding
	}
	return tokenizer.LoadEnv(ctx, spec, os.Getenv)
}

// synthesizer returns the run's synthesizer for the tokenizer spec names.
func (m *Module) synthesizer(ctx context.Context, spec string) (*Synthesizer, error) {
	tok, err := m.loadTokenizer(ctx, spec)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.synths[tok.Name()]; ok {
		return s, nil
	}
	s, err := NewSynthesizer(tok)
	if err != nil {
		return nil, err
	}
	if m.synths == nil {
		m.synths = map[string]*Synthesizer{}
	}
	m.synths[tok.Name()] = s
	return s, nil
}

// prefixGroups returns the run's prefix groups for the given parameters,
// built once.
func (m *Module) prefixGroups(s *Synthesizer, groups, prefixTokens int) (*PrefixGroups, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoized(&m.groups, groupsKey{s.tok.Name(), groups, prefixTokens}, func() (*PrefixGroups, error) {
		return NewPrefixGroups(s, m.Seed, groups, prefixTokens)
	})
}

// expectedHits returns the run's count of the hits prompts built from
// hash ids imply, for blocks of blockSize tokens and a cache of
// cacheBlocks of them (0: unbounded), made once.
func (m *Module) expectedHits(blockSize, cacheBlocks int) (*ExpectedHits, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoized(&m.expected, expectedKey{blockSize, cacheBlocks}, func() (*ExpectedHits, error) {
		return NewExpectedHits(blockSize, cacheBlocks)
	})
}

// memoized returns (*cache)[key], made by build and kept the first time
// it is asked for (a failure is not kept); the caller holds the lock that
// guards cache.
func memoized[K comparable, V any](cache *map[K]V, key K, build func() (V, error)) (V, error) {
	if v, ok := (*cache)[key]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	if *cache == nil {
		*cache = map[K]V{}
	}
	(*cache)[key] = v
	return v, nil
}

// cursor is the run's shared position in ds, for next().
func (m *Module) cursor(ds *Dataset) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.cursors[ds]; ok {
		return c
	}
	if m.cursors == nil {
		m.cursors = map[*Dataset]*atomic.Int64{}
	}
	c := &atomic.Int64{}
	m.cursors[ds] = c
	return c
}

// throw raises err in the VU's runtime as a JavaScript error.
func (in *instance) throw(err error) {
	panic(in.vu.Runtime().NewGoError(err))
}

// typeError raises a TypeError about a call's arguments.
func (in *instance) typeError(format string, args ...any) {
	panic(in.vu.Runtime().NewTypeError(append([]any{format}, args...)...))
}

// tokenizerSpec reads a tokenizer option: a spec string, or an object
// made by tokenizer() (its name).
func tokenizerSpec(v goja.Value) string {
	if !given(v) {
		return ""
	}
	if o, ok := v.(*goja.Object); ok {
		if name := o.Get("name"); given(name) {
			return name.String()
		}
	}
	return v.String()
}

// tokenizerObject is tokenizer(spec): { name, encode, decode, count }.
func (in *instance) tokenizerObject(spec goja.Value) *goja.Object {
	rt := in.vu.Runtime()
	tok, err := in.m.loadTokenizer(in.vu.Context(), tokenizerSpec(spec))
	if err != nil {
		in.throw(err)
	}
	o := rt.NewObject()
	must(o.Set("name", tok.Name()))
	must(o.Set("encode", func(text string) []int {
		ids, err := tok.Encode(text)
		if err != nil {
			in.throw(err)
		}
		return ids
	}))
	must(o.Set("decode", func(ids []int) string {
		text, err := tok.Decode(ids)
		if err != nil {
			in.throw(err)
		}
		return text
	}))
	must(o.Set("count", func(text string) int {
		n, err := tok.Count(text)
		if err != nil {
			in.throw(err)
		}
		return n
	}))
	return o
}

// synthetic is prompts.synthetic(n, { prefix, tokenizer }).
func (in *instance) synthetic(n goja.Value, opts goja.Value) string {
	tokens := in.count("prompts.synthetic(n)", n)
	const call = "prompts.synthetic(n, options)"
	o := in.options(call, opts, "prefix", "tokenizer", "draw")
	s, err := in.m.synthesizer(in.vu.Context(), tokenizerSpec(o["tokenizer"]))
	if err != nil {
		in.throw(err)
	}
	rng := in.drawStream(call, o["draw"])
	var text string
	if p := o["prefix"]; given(p) {
		text, err = s.WithPrefix(rng, p.String(), tokens)
	} else {
		text, err = s.Text(rng, tokens)
	}
	if err != nil {
		in.throw(err)
	}
	return text
}

// sharedPrefix is prompts.sharedPrefix({ groups, prefixTokens, tokenizer }):
// { groups, prefixTokens, prefixes, prompt(suffixTokens, group) }.
func (in *instance) sharedPrefix(opts goja.Value) *goja.Object {
	const call = "prompts.sharedPrefix(options)"
	o := in.options(call, opts, "groups", "prefixTokens", "tokenizer")
	for _, k := range []string{"groups", "prefixTokens"} {
		if !given(o[k]) {
			in.typeError("%s: %s is required", call, k)
		}
	}
	s, err := in.m.synthesizer(in.vu.Context(), tokenizerSpec(o["tokenizer"]))
	if err != nil {
		in.throw(err)
	}
	g, err := in.m.prefixGroups(s, in.count(call+": groups", o["groups"]), in.count(call+": prefixTokens", o["prefixTokens"]))
	if err != nil {
		in.throw(err)
	}
	rt := in.vu.Runtime()
	obj := rt.NewObject()
	must(obj.Set("groups", len(g.Prefixes)))
	must(obj.Set("prefixTokens", g.PrefixTokens))
	must(obj.Set("prefixes", slices.Clone(g.Prefixes)))
	must(obj.Set("prompt", func(suffixTokens, group, opts goja.Value) *goja.Object {
		const call = "prompt(suffixTokens, group, options)"
		n := in.count("prompt(suffixTokens)", suffixTokens)
		gi := -1
		if given(group) {
			gi = in.count("prompt(suffixTokens, group)", group)
		}
		o := in.options(call, opts, "draw")
		p, err := g.Prompt(in.drawStream(call, o["draw"]), gi, n)
		if err != nil {
			in.throw(err)
		}
		return in.object([]field{{"group", p.Group}, {"prefix", p.Prefix}, {"suffix", p.Suffix}, {"text", p.Text}, {"tokens", p.Tokens}})
	}))
	return obj
}

// fromHashIDs is prompts.fromHashIds(record, { blockSize, cacheBlocks,
// request, tokenizer }): { text, tokens, hashedTokens,
// expectedCachedTokens }, the prompt of a trace record ({ hashIds,
// inputTokens, index }: a trace-replay iteration's record, or plain
// values, the options among them when there is no second argument) whose
// blocks are its hash ids' (see Synthesizer.BlockPrompt). The request's
// number is request, else the record's index, else a random one. In an
// iteration it counts the prompt as sent: the run's ExpectedHits of its
// block size and cache capacity adds it, and the module's metrics record
// it.
func (in *instance) fromHashIDs(record, opts goja.Value) *goja.Object {
	const call = "prompts.fromHashIds(record, options)"
	o := in.options(call, record, "hashIds", "inputTokens", "index", "start", "outputTokens", "fields", "blockSize", "cacheBlocks", "request", "tokenizer")
	maps.Copy(o, in.options(call, opts, "blockSize", "cacheBlocks", "request", "tokenizer"))
	if !given(o["inputTokens"]) {
		in.typeError("%s: inputTokens is required", call)
	}
	ids := in.hashIDs(call, o["hashIds"])
	tokens := in.count(call+": inputTokens", o["inputTokens"])
	blockSize := in.bound(call, "blockSize", o["blockSize"], DefaultHashBlockTokens)
	cacheBlocks := in.bound(call, "cacheBlocks", o["cacheBlocks"], 0)
	request := in.rng.Uint64()
	for _, k := range []string{"request", "index"} {
		if given(o[k]) {
			request = uint64(in.count(call+": "+k, o[k]))
			break
		}
	}
	s, err := in.m.synthesizer(in.vu.Context(), tokenizerSpec(o["tokenizer"]))
	if err != nil {
		in.throw(err)
	}
	p, err := s.BlockPrompt(in.m.Seed, ids, tokens, blockSize, request)
	if err != nil {
		in.throw(err)
	}
	expected, err := in.m.expectedHits(blockSize, cacheBlocks)
	if err != nil {
		in.throw(err)
	}
	hits := 0
	if st := in.vu.State(); st != nil {
		hits = expected.Add(ids, tokens)
		now := time.Now()
		st.Samples.AddSamples([]metrics.Sample{
			{Metric: in.metrics.HashInputTokens, Tags: st.Tags, Time: now, Value: float64(tokens)},
			{Metric: in.metrics.ExpectedCachedTokens, Tags: st.Tags, Time: now, Value: float64(hits)},
		})
	}
	obj := in.vu.Runtime().NewObject()
	must(obj.Set("text", p.Text))
	must(obj.Set("tokens", p.Tokens))
	must(obj.Set("hashedTokens", p.HashedTokens))
	must(obj.Set("expectedCachedTokens", hits))
	return obj
}

// hashIDs reads a record's hash ids: an array of whole numbers, none
// when absent.
func (in *instance) hashIDs(call string, v goja.Value) []int64 {
	if !given(v) {
		return nil
	}
	var values []float64
	if err := in.vu.Runtime().ExportTo(v, &values); err != nil {
		in.typeError("%s: hashIds must be an array of whole numbers, got %s", call, v)
	}
	ids := make([]int64, len(values))
	for i, f := range values {
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			in.typeError("%s: hashIds[%d] must be a whole number, got %v", call, i, f)
		}
		ids[i] = int64(f)
	}
	return ids
}

// maxLength is the default upper bound of the distributions that have
// none: far beyond any context window.
const maxLength = 1 << 24

func (in *instance) fixed(n goja.Value) *goja.Object {
	return in.lengthObject(Fixed{N: in.count("lengths.fixed(n)", n)}, nil)
}

func (in *instance) uniform(opts goja.Value) *goja.Object {
	const call = "lengths.uniform({ min, max })"
	o := in.options(call, opts, "min", "max")
	for _, k := range []string{"min", "max"} {
		if !given(o[k]) {
			in.typeError("%s: %s is required", call, k)
		}
	}
	return in.lengthObject(Uniform{Min: in.count(call+": min", o["min"]), Max: in.count(call+": max", o["max"])}, nil)
}

func (in *instance) normal(opts goja.Value) *goja.Object {
	const call = "lengths.normal({ mean, stddev, min, max })"
	o := in.options(call, opts, "mean", "stddev", "min", "max")
	d := Normal{Mean: in.number(call, "mean", o["mean"], true), StdDev: in.number(call, "stddev", o["stddev"], true),
		Min: in.bound(call, "min", o["min"], 1), Max: in.bound(call, "max", o["max"], maxLength)}
	return in.lengthObject(d, nil)
}

func (in *instance) lognormal(opts goja.Value) *goja.Object {
	const call = "lengths.lognormal({ mean | median, sigma, min, max })"
	o := in.options(call, opts, "mean", "median", "sigma", "min", "max")
	d := LogNormal{Sigma: in.number(call, "sigma", o["sigma"], true),
		Min: in.bound(call, "min", o["min"], 1), Max: in.bound(call, "max", o["max"], maxLength)}
	switch mean, median := given(o["mean"]), given(o["median"]); {
	case mean && median:
		in.typeError("%s: give mean or median, not both", call)
	case median:
		d.Mean = in.number(call, "median", o["median"], true) * math.Exp(d.Sigma*d.Sigma/2)
	default:
		d.Mean = in.number(call, "mean", o["mean"], true)
	}
	return in.lengthObject(d, nil)
}

// empirical is lengths.empirical(values), or lengths.empirical(dataset,
// 'prompt' | 'output') for the token counts of a dataset's records.
func (in *instance) empirical(src goja.Value, field goja.Value) *goja.Object {
	const call = "lengths.empirical(values | dataset, field)"
	rt := in.vu.Runtime()
	if o, ok := src.(*goja.Object); ok {
		if h, ok := exported[*datasetRef](o.Get(datasetHandle)); ok {
			which := "prompt"
			if given(field) {
				which = field.String()
			}
			if which != "prompt" && which != "output" {
				in.typeError("%s: field must be 'prompt' or 'output', got %q", call, which)
			}
			return in.lengthObject(nil, h.sampler(in, which))
		}
	}
	var values []int
	if err := rt.ExportTo(src, &values); err != nil || len(values) == 0 {
		in.typeError("%s: want a non-empty array of token counts or a dataset, got %s", call, src)
	}
	return in.lengthObject(Empirical{Values: values}, nil)
}

// lengthObject is the JavaScript face of a distribution: { sample(),
// toString() }. draw, when set, replaces d's own sampling (a dataset's
// lengths, counted as they are drawn).
func (in *instance) lengthObject(d Length, draw func(*rand.Rand) int) *goja.Object {
	if d != nil {
		if err := Validate(d); err != nil {
			panic(in.vu.Runtime().NewTypeError("lengths.%v", err))
		}
		draw = d.Sample
	}
	r := in.stream()
	o := in.vu.Runtime().NewObject()
	desc := "empirical(dataset)"
	if d != nil {
		desc = d.String()
	}
	must(o.Set("sample", func() int { return draw(r) }))
	must(o.Set("toString", func() string { return desc }))
	return o
}

// options reads an options object, rejecting keys not in known.
func (in *instance) options(call string, v goja.Value, known ...string) map[string]goja.Value {
	out := map[string]goja.Value{}
	if !given(v) {
		return out
	}
	o, ok := v.(*goja.Object)
	if !ok {
		in.typeError("%s: options must be an object, got %s", call, v)
	}
	for _, k := range o.Keys() {
		if !slices.Contains(known, k) {
			in.typeError("%s: unknown option %q (known: %s)", call, k, strings.Join(known, ", "))
		}
		out[k] = o.Get(k)
	}
	return out
}

// count reads a whole, non-negative number.
func (in *instance) count(what string, v goja.Value) int {
	if !given(v) {
		in.typeError("%s: a whole number is required", what)
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 || math.IsNaN(f) {
		in.typeError("%s: want a whole number ≥ 0, got %s", what, v)
	}
	return int(f)
}

// number reads a finite number.
func (in *instance) number(call, field string, v goja.Value, required bool) float64 {
	if !given(v) {
		if required {
			in.typeError("%s: %s is required", call, field)
		}
		return 0
	}
	f := v.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		in.typeError("%s: %s must be a number, got %s", call, field, v)
	}
	return f
}

// bound reads an optional whole-number bound, def when absent.
func (in *instance) bound(call, field string, v goja.Value, def int) int {
	if !given(v) {
		return def
	}
	return in.count(call+": "+field, v)
}

// exported returns v's Go value as a T, if it holds one.
func exported[T any](v goja.Value) (T, bool) {
	var zero T
	if v == nil {
		return zero, false
	}
	t, ok := v.Export().(T)
	return t, ok
}

func given(v goja.Value) bool {
	return v != nil && !goja.IsUndefined(v) && !goja.IsNull(v)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

var errInitOnly = errors.New("datasets are loaded in init code (the top level of the script), not in iterations")
