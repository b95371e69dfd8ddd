package llmsim

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
	"github.com/spf13/pflag"
)

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateReportsEveryField(t *testing.T) {
	cfg := Config{PrefillBase: -time.Second, DecodePerSeq: -1, PrefixCacheBlocks: -1, GPUIdlePower: -1, GPUPowerPerSeq: -2, GPUPowerLimit: -3}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("zero config validated")
	}
	for _, field := range []string{"model", "max-num-seqs", "max-num-batched-tokens", "default-max-tokens",
		"max-model-len", "output-mean", "prefill-base", "decode-per-seq", "tokenizer", "prefix-cache-blocks",
		"kv-cache-blocks", "gpus", "gpu-idle-power", "gpu-power-per-seq", "gpu-power-limit", "image-patch"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not mention %s:\n%v", field, err)
		}
	}
	if strings.Contains(err.Error(), "decode-base") {
		t.Errorf("a zero duration is valid:\n%v", err)
	}
	if _, err := New(cfg); err == nil {
		t.Error("New accepted an invalid config")
	}
}

func TestAddFlags(t *testing.T) {
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	err := fs.Parse([]string{
		"--model=m", "--seed=9", "--max-num-seqs=8", "--max-num-batched-tokens=512", "--max-model-len=4096",
		"--default-max-tokens=64", "--output-mean=32", "--prefill-base=1ms", "--prefill-per-token=2µs",
		"--decode-base=3ms", "--decode-per-seq=4µs", "--fault=http_5xx:0.05", "--fault", "reset:0.01:after=10",
		"--tokenizer=o200k_base", "--prefix-cache-blocks=64", "--instance-id=ci-7f3a",
		"--image-patch=14", "--image-tokens=64",
		"--kv-cache-blocks=128", "--gpus=8", "--gpu-idle-power=60", "--gpu-power-per-seq=1.5", "--gpu-power-limit=400",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Model: "m", Seed: 9, MaxNumSeqs: 8, MaxNumBatchedTokens: 512, MaxModelLen: 4096,
		DefaultMaxTokens: 64, OutputMean: 32, PrefillBase: time.Millisecond, PrefillPerToken: 2 * time.Microsecond,
		DecodeBase: 3 * time.Millisecond, DecodePerSeq: 4 * time.Microsecond,
		Tokenizer: "o200k_base", PrefixCacheBlocks: 64, InstanceID: "ci-7f3a", ImagePatch: 14, ImageTokens: 64,
		KVCacheBlocks: 128, GPUs: 8, GPUIdlePower: 60, GPUPowerPerSeq: 1.5, GPUPowerLimit: 400,
		Faults: []FaultRule{
			{Fault: Fault{Name: "http_5xx", Status: 500}, Rate: 0.05},
			{Fault: Fault{Name: "reset", After: 10}, Rate: 0.01},
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("parsed %+v\nwant %+v", cfg, want)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Usage == "" {
			t.Errorf("--%s has no help", f.Name)
		}
	})
	if def := fs.Lookup("max-num-seqs").DefValue; def != "256" {
		t.Errorf("--max-num-seqs default %s, want the config's 256", def)
	}
	for flag, def := range map[string]string{"tokenizer": "cl100k_base", "prefix-cache-blocks": "16384", "kv-cache-blocks": "16384", "gpus": "1"} {
		if got := fs.Lookup(flag).DefValue; got != def {
			t.Errorf("--%s default %s, want %s", flag, got, def)
		}
	}
}

func TestValidateTokenizer(t *testing.T) {
	for spec, ok := range map[string]bool{
		"cl100k_base": true, "o200k_base": true, TokenizerBytes: true,
		"": false, " ": false, "cl100k": false, "/nonexistent/tokenizer.json": false,
	} {
		cfg := DefaultConfig()
		cfg.Tokenizer = spec
		if err := cfg.Validate(); (err == nil) != ok {
			t.Errorf("tokenizer %q: %v", spec, err)
		}
	}
}

// A Hugging Face model id is a tokenizer the simulator accepts, read from
// the Hugging Face cache (HF_HUB_CACHE; offline here, so nothing is
// downloaded).
func TestValidateTokenizerModelID(t *testing.T) {
	data, err := os.ReadFile("../tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	const commit = "6666666666666666666666666666666666666666"
	hfhubtest.Cache(t, cache, "sim-test/tok", commit, map[string][]byte{"tokenizer.json": data}, "main")
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	cfg := DefaultConfig()
	cfg.Tokenizer = "sim-test/tok"
	if err := cfg.Validate(); err != nil {
		t.Errorf("cached model id: %v", err)
	}
	cfg.Tokenizer = "sim-test/absent"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "not in the Hugging Face cache") {
		t.Errorf("model id not cached, offline: %v", err)
	}
}
