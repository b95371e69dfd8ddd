package llmsim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// Config sets the simulated model and the engine's timing. Durations are
// simulated GPU time; zero durations make the engine as fast as the host
// allows.
type Config struct {
	// Model is the name GET /v1/models lists and responses carry when a
	// request names no model.
	Model string
	// Seed seeds the generated text, output lengths and fault draws.
	Seed int64
	// MaxNumSeqs is the number of batch slots: at most this many sequences
	// are generated concurrently; the rest wait in a FIFO queue.
	MaxNumSeqs int
	// MaxNumBatchedTokens caps the prompt tokens one prefill step
	// computes, those found in the prefix cache apart. A request with more
	// is admitted alone.
	MaxNumBatchedTokens int
	// MaxModelLen is the context length: prompt plus output tokens. Longer
	// requests are rejected with 400.
	MaxModelLen int
	// DefaultMaxTokens is max_tokens for requests that give none, capped so
	// that prompt plus output fit MaxModelLen.
	DefaultMaxTokens int
	// OutputMean is the mean output length, in tokens, of requests without
	// ignore_eos (before capping at max_tokens).
	OutputMean int
	// PrefillBase is the fixed cost of a prefill step.
	PrefillBase time.Duration
	// PrefillPerToken is the cost of each prompt token in a prefill step,
	// but those found in the prefix cache.
	PrefillPerToken time.Duration
	// DecodeBase is the duration of a decode step with one sequence.
	DecodeBase time.Duration
	// DecodePerSeq is the cost added to a decode step by each running
	// sequence.
	DecodePerSeq time.Duration
	// Tokenizer counts prompt tokens: a spec of tokenizer.Load (one of
	// the encodings the tokenizer package embeds, "cl100k_base" and
	// "o200k_base", a tokenizer.json file or a Hugging Face model id), or
	// "bytes" for the tokenizer-free approximation of ceil(bytes/4) per
	// text, which is cheaper and has no token ids, so no prefix cache.
	Tokenizer string
	// PrefixCacheBlocks is the capacity, in blocks of PrefixBlockTokens
	// tokens, of the prefix (KV) cache, which spares the prefill of the
	// leading blocks a prompt shares with earlier ones; 0 turns it off, as
	// does the tokenizer "bytes".
	PrefixCacheBlocks int
	// KVCacheBlocks is the KV cache's pool, in blocks of
	// PrefixBlockTokens tokens, against which GET /metrics reports the
	// blocks the running sequences hold (vllm:kv_cache_usage_perc). The
	// engine does not bound its batch by it.
	KVCacheBlocks int
	// GPUs is the number of simulated GPUs that GET /dcgm/metrics
	// reports, serving the model together. Each draws GPUIdlePower plus
	// GPUPowerPerSeq per running sequence, up to GPUPowerLimit (watts).
	GPUs           int
	GPUIdlePower   float64
	GPUPowerPerSeq float64
	GPUPowerLimit  float64
	// Faults are injected at random into generation requests; their
	// rates must add up to at most 1.
	Faults []FaultRule
	// ImagePatch is the side, in pixels, of the square an image token
	// covers: an image of w×h pixels in a chat message costs
	// ceil(w/ImagePatch)·ceil(h/ImagePatch) prompt tokens (28, Qwen2-VL's
	// 14-pixel patches merged 2×2), unless ImageTokens is set.
	ImagePatch int
	// ImageTokens, when not 0, is the prompt tokens every image costs,
	// whatever its size.
	ImageTokens int
	// InstanceID is a name the simulator's starter chose, answered in GET
	// /stats (Stats.InstanceID) and in no response that llmrun measures,
	// so that a harness can tell the simulator it started from another
	// server on the address. Empty by default.
	InstanceID string
}

// maxGPUs bounds Config.GPUs: a node of simulated GPUs.
const maxGPUs = 64

// TokenizerDefault is Config.Tokenizer's default; TokenizerBytes names
// the tokenizer-free approximation.
const (
	TokenizerDefault = "cl100k_base"
	TokenizerBytes   = "bytes"
)

// DefaultConfig returns a configuration shaped like a mid-size model on one
// GPU: a lone request sees TTFT ≈ 20ms + 50µs per prompt token and ITL ≈
// 10ms; a full batch of 256 decodes at ≈ 20ms per step.
func DefaultConfig() Config {
	return Config{
		Model:               "llmsim-1",
		Seed:                1,
		MaxNumSeqs:          256,
		MaxNumBatchedTokens: 8192,
		MaxModelLen:         32768,
		DefaultMaxTokens:    256,
		OutputMean:          128,
		PrefillBase:         20 * time.Millisecond,
		PrefillPerToken:     50 * time.Microsecond,
		DecodeBase:          10 * time.Millisecond,
		DecodePerSeq:        40 * time.Microsecond,
		Tokenizer:           TokenizerDefault,
		PrefixCacheBlocks:   16384,
		KVCacheBlocks:       16384,
		GPUs:                1,
		GPUIdlePower:        70,
		GPUPowerPerSeq:      2.5,
		GPUPowerLimit:       700,
		ImagePatch:          DefaultImagePatch,
	}
}

// AddFlags registers one flag per field on fs, with c's current values as
// defaults; parsing fs writes into c.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Model, "model", c.Model, "model name served (any requested name is accepted and echoed)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for generated text, output lengths and fault draws")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", c.MaxNumSeqs, "batch slots: sequences generated concurrently")
	fs.IntVar(&c.MaxNumBatchedTokens, "max-num-batched-tokens", c.MaxNumBatchedTokens, "prompt tokens to prefill per step (the prefix cache's hits apart)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", c.MaxModelLen, "context length: prompt plus output tokens")
	fs.IntVar(&c.DefaultMaxTokens, "default-max-tokens", c.DefaultMaxTokens, "max_tokens for requests that give none")
	fs.IntVar(&c.OutputMean, "output-mean", c.OutputMean, "mean output tokens of requests without ignore_eos")
	fs.DurationVar(&c.PrefillBase, "prefill-base", c.PrefillBase, "fixed duration of a prefill step")
	fs.DurationVar(&c.PrefillPerToken, "prefill-per-token", c.PrefillPerToken, "prefill duration per prompt token not in the prefix cache")
	fs.DurationVar(&c.DecodeBase, "decode-base", c.DecodeBase, "decode step duration with one running sequence")
	fs.DurationVar(&c.DecodePerSeq, "decode-per-seq", c.DecodePerSeq, "decode step duration added per running sequence")
	fs.StringVar(&c.Tokenizer, "tokenizer", c.Tokenizer, "prompt tokenizer: cl100k_base, o200k_base, a tokenizer.json path, a Hugging Face model id (ORG/NAME), or bytes "+
		"for ceil(bytes/4) per text (cheaper; no prefix cache)")
	fs.IntVar(&c.PrefixCacheBlocks, "prefix-cache-blocks", c.PrefixCacheBlocks, fmt.Sprintf("prefix (KV) cache capacity in blocks of %d tokens, "+
		"evicted least recently used first; prefill skips a prompt's cached leading blocks; 0 disables", PrefixBlockTokens))
	fs.IntVar(&c.KVCacheBlocks, "kv-cache-blocks", c.KVCacheBlocks, fmt.Sprintf("KV cache pool in blocks of %d tokens, the whole of "+
		"vllm:kv_cache_usage_perc in GET /metrics (it does not bound the batch)", PrefixBlockTokens))
	fs.IntVar(&c.GPUs, "gpus", c.GPUs, "simulated GPUs reported by GET /dcgm/metrics")
	fs.Float64Var(&c.GPUIdlePower, "gpu-idle-power", c.GPUIdlePower, "a simulated GPU's power draw with no running sequence, in watts")
	fs.Float64Var(&c.GPUPowerPerSeq, "gpu-power-per-seq", c.GPUPowerPerSeq, "power a simulated GPU draws per running sequence, in watts")
	fs.Float64Var(&c.GPUPowerLimit, "gpu-power-limit", c.GPUPowerLimit, "a simulated GPU's power limit, in watts")
	fs.Var(&faultFlag{rules: &c.Faults}, "fault", "inject a fault into a share of requests, such as http_5xx:0.05 or "+
		"reset:0.01:after=10 (repeatable)")
	fs.IntVar(&c.ImagePatch, "image-patch", c.ImagePatch, "an image in a chat message costs ceil(width/N)·ceil(height/N) prompt tokens")
	fs.IntVar(&c.ImageTokens, "image-tokens", c.ImageTokens, "prompt tokens every image costs, whatever its size (0: by --image-patch)")
	fs.StringVar(&c.InstanceID, "instance-id", c.InstanceID, "a name of your choosing that GET /stats answers, to tell this simulator from another server on the address")
}

// Validate reports every field that is out of range.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Model != "", "model must not be empty")
	check(c.MaxNumSeqs >= 1, "max-num-seqs must be at least 1, got %d", c.MaxNumSeqs)
	check(c.MaxNumBatchedTokens >= 1, "max-num-batched-tokens must be at least 1, got %d", c.MaxNumBatchedTokens)
	check(c.DefaultMaxTokens >= 1, "default-max-tokens must be at least 1, got %d", c.DefaultMaxTokens)
	check(c.MaxModelLen >= 2, "max-model-len must be at least 2, got %d", c.MaxModelLen)
	check(c.OutputMean >= 1, "output-mean must be at least 1, got %d", c.OutputMean)
	if err := checkTokenizer(c.Tokenizer); err != nil {
		errs = append(errs, err)
	}
	check(c.PrefixCacheBlocks >= 0, "prefix-cache-blocks must not be negative, got %d", c.PrefixCacheBlocks)
	check(c.ImagePatch >= 1, "image-patch must be at least 1 pixel, got %d", c.ImagePatch)
	check(c.ImageTokens >= 0, "image-tokens must not be negative, got %d", c.ImageTokens)
	check(c.KVCacheBlocks >= 1, "kv-cache-blocks must be at least 1, got %d", c.KVCacheBlocks)
	check(c.GPUs >= 1 && c.GPUs <= maxGPUs, "gpus must be between 1 and %d, got %d", maxGPUs, c.GPUs)
	watts := func(w float64) bool { return w >= 0 && !math.IsInf(w, 1) }
	check(watts(c.GPUIdlePower), "gpu-idle-power must be a finite number of watts, at least 0, got %g", c.GPUIdlePower)
	check(watts(c.GPUPowerPerSeq), "gpu-power-per-seq must be a finite number of watts, at least 0, got %g", c.GPUPowerPerSeq)
	check(watts(c.GPUPowerLimit) && c.GPUPowerLimit >= c.GPUIdlePower, "gpu-power-limit must be a finite number of watts, at least gpu-idle-power (%g), got %g",
		c.GPUIdlePower, c.GPUPowerLimit)
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"prefill-base", c.PrefillBase},
		{"prefill-per-token", c.PrefillPerToken},
		{"decode-base", c.DecodeBase},
		{"decode-per-seq", c.DecodePerSeq},
	} {
		check(d.v >= 0, "%s must not be negative, got %s", d.name, d.v)
	}
	sum := 0.0
	for _, r := range c.Faults {
		if err := r.validate(); err != nil {
			errs = append(errs, fmt.Errorf("fault %s: %w", r, err))
		}
		sum += r.Rate
	}
	check(sum <= 1+1e-9, "fault rates add up to %.4g, more than 1", sum)
	return errors.Join(errs...)
}

// checkTokenizer reports a Config.Tokenizer that names no tokenizer. A
// built-in encoding's name is checked without loading it; another spec is
// a tokenizer file or a model id, loaded (once per process) to check it.
func checkTokenizer(spec string) error {
	switch {
	case spec == TokenizerBytes || tokenizer.IsEncoding(spec):
		return nil
	case strings.TrimSpace(spec) == "":
		return fmt.Errorf("tokenizer must not be empty: want %s or %s", strings.Join(tokenizer.Encodings, ", "), TokenizerBytes)
	}
	if _, err := tokenizer.Load(spec); err != nil {
		return fmt.Errorf("tokenizer %q is neither %s, %s, a Hugging Face model id nor a usable tokenizer.json: %w",
			spec, strings.Join(tokenizer.Encodings, ", "), TokenizerBytes, err)
	}
	return nil
}
