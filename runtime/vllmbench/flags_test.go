package vllmbench

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// docs/bench.md's flag table has a row for every flag of vllm bench
// serve, saying what llmrun bench does with it, and no row for a flag
// llmrun does not know.
func TestFlagTableInDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // flag → its use, as the table says
	for line := range strings.SplitSeq(string(b), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `--") || len(cells) < 3 {
			continue
		}
		rows[strings.Trim(cells[0], "|` ")] = cells[1]
	}
	uses := map[Use]string{Implemented: "implemented", Ignored: "ignored", Refused: "refused"}
	seen := map[string]bool{}
	for _, f := range Flags {
		if seen[f.Name] {
			t.Errorf("--%s is listed twice", f.Name)
		}
		seen[f.Name] = true
		if got, ok := rows["--"+f.Name]; !ok || got != uses[f.Use] {
			t.Errorf("docs/bench.md: --%s row says %q, want %q", f.Name, got, uses[f.Use])
		}
		if f.Use != Implemented && f.Why == "" {
			t.Errorf("--%s is %s without saying why", f.Name, uses[f.Use])
		}
	}
	for name := range rows {
		if !seen[strings.TrimPrefix(name, "--")] {
			t.Errorf("docs/bench.md has a row for %s, which is not one of vLLM's flags", name)
		}
	}
}

// AddFlags registers every flag of vllm bench serve, so that vLLM's
// command lines parse, and no flag that is not one of vLLM's (llmrun
// bench's own are its command's).
func TestAddFlagsTakesEveryVLLMFlag(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	AddFlags(fs)
	for _, vf := range Flags {
		if fs.Lookup(vf.Name) == nil {
			t.Errorf("--%s (%v) is not a flag of llmrun bench", vf.Name, vf.Use)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := LookupFlag(f.Name); !ok {
			t.Errorf("AddFlags registers --%s, which is not one of vLLM's flags", f.Name)
		}
	})
}

func TestExpandMultiValued(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"--goodput ttft:5 tpot:6 --seed 1":      "--goodput ttft:5 --goodput tpot:6 --seed 1",
		"--goodput=ttft:5 tpot:6":               "--goodput=ttft:5 --goodput tpot:6",
		"--metadata a=1 b=2 c=3":                "--metadata a=1 --metadata b=2 --metadata c=3",
		"--model m --goodput e2el:9":            "--model m --goodput e2el:9",
		"--goodput ttft:5 --metadata a=1 stray": "--goodput ttft:5 --metadata a=1 --metadata stray",
	} {
		if got := strings.Join(ExpandMultiValued(strings.Fields(in)), " "); got != want {
			t.Errorf("ExpandMultiValued(%s) = %s, want %s", in, got, want)
		}
	}
}

// Bad flags are refused before anything runs, naming the flag.
func TestBenchmarkRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-prompts", "0"}, "--num-prompts must be at least 1"},
		{[]string{"--request-rate", "fast"}, `--request-rate "fast"`},
		{[]string{"--request-rate", "-2"}, "--request-rate must be positive"},
		{[]string{"--random-input-len", "2000000000"}, "--random-input-len: 2000000000 tokens exceeds llmrun's limit of 10000000 tokens for a prompt"},
		{[]string{"--random-prefix-len", "2000000000"}, "--random-prefix-len: 2000000000 tokens exceeds llmrun's limit of 10000000 tokens for a prompt"},
		{[]string{"--random-input-len", "8000000", "--random-range-ratio", "0.5"}, "--random-input-len × (1 + --random-range-ratio): 12000000 tokens exceeds"},
		{[]string{"--random-output-len", "9000000000"}, "--random-output-len 9000000000 exceeds llmrun's limit of 2147483647 tokens for a response"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-num-prefixes", "1000000", "--num-prompts", "1000000"},
			"--prefix-repetition-num-prefixes 1000000 × --prefix-repetition-prefix-len 256 exceeds llmrun's limit of 10000000 tokens"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-suffix-len", "9223372036854775807"}, "--prefix-repetition-suffix-len: 9223372036854775807 tokens exceeds"},
		{[]string{"--request-rate", "1e300"}, "--request-rate 1e+300 exceeds llmrun's limit of 1000000 requests per second"},
		{[]string{"--num-prompts", "9000000", "--request-rate", "0.1"}, "beyond llmrun's limit of 8760h0m0s (365 days) for a run"},
		{[]string{"--num-prompts", "1000000000000", "--request-rate", "10"}, "--num-prompts 1000000000000 and --num-warmups 0: more than llmrun bench's limit of 10000000 requests"},
		{[]string{"--burstiness", "0"}, "--burstiness must be a positive"},
		{[]string{"--max-concurrency", "0"}, "--max-concurrency must be greater than 0"},
		{[]string{"--goodput", "itl:5"}, `--goodput: "itl": unknown metric`},
		{[]string{"--goodput", "ttft=5"}, "--goodput"},
		{[]string{"--metadata", "novalue"}, "KEY=VALUE"},
		{[]string{"--dataset-name", "prefix_repetition", "--num-prompts", "5", "--prefix-repetition-num-prefixes", "6"},
			"--num-prompts (5) must be greater than or equal to --prefix-repetition-num-prefixes (6)"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-prefix-len", "0", "--prefix-repetition-suffix-len", "0"},
			"a prompt needs at least 1 token"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-num-prefixes", "0"}, "--prefix-repetition-num-prefixes must be at least 1"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-output-len", "0"}, "--prefix-repetition-output-len must be at least 1"},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-suffix-len", "-1"}, "--prefix-repetition-suffix-len must not be negative"},
		{[]string{"--dataset-name", "prefix_repetition", "--dataset-path", "x.json"}, "--dataset-path: cannot be used with --dataset-name prefix_repetition"},
		{[]string{"--dataset-name", "sharegpt"}, "needs --dataset-path"},
		{[]string{"--dataset-name", "hf"}, `--dataset-name "hf": a vLLM dataset llmrun bench does not support`},
		{[]string{"--dataset-path", "x.json"}, "--dataset-path: cannot be used with --dataset-name random"},
		{[]string{"--backend", "tgi"}, "--backend tgi: a vLLM backend llmrun bench does not support"},
		{[]string{"--backend", "openai-embeddings"}, "--backend openai-embeddings: a vLLM backend llmrun bench does not support (embedding requests); it speaks llama.cpp, lmdeploy, openai, openai-chat, openai-responses, scalellm, sglang, vllm, vllm-rerank"},
		{[]string{"--endpoint-type", "nope"}, `--endpoint-type "nope": not a backend of vLLM`},
		{[]string{"--extra-body", "[1]"}, `--extra-body "[1]": want a JSON object`},
		{[]string{"--header", "novalue"}, `--header "novalue": invalid header format`},
		{[]string{"--ready-check-timeout-sec", "-1"}, "--ready-check-timeout-sec must not be negative"},
		{[]string{"--temperature", "-1"}, "--temperature must not be negative"},
		{[]string{"--random-range-ratio", "1"}, "--random-range-ratio must be in [0, 1)"},
		{[]string{"--percentile-metrics", "ttft,client_queue_time"}, `"client_queue_time" is not supported`},
		{[]string{"--metric-percentiles", "99,x"}, "--metric-percentiles"},
		{[]string{"--output-len", "-5"}, "--output-len must not be negative, got -5"},
		{[]string{"--dataset-name", "sharegpt", "--sharegpt-output-len", "-1"}, "--sharegpt-output-len must not be negative"},
		{[]string{"--backend", "vllm-rerank", "--dataset-name", "random-rerank"}, `--endpoint "/v1/completions": --backend vllm-rerank needs a rerank endpoint: give --endpoint /v1/rerank`},
		{[]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank"}, "needs --dataset-name random-rerank"},
		{[]string{"--dataset-name", "random-rerank"}, "only --backend vllm-rerank"},
		{[]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank", "--random-batch-size", "0"}, "--random-batch-size must be at least 1"},
		{[]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank", "--no-reranker", "--random-batch-size", "1"}, "--no-reranker needs"},
		{[]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank", "--random-input-len", "3"}, "a rerank pair needs at least 4 tokens"},
		{[]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank", "--random-input-len", "2000000000"}, "--random-input-len × (1 + --random-range-ratio): 2000000000 tokens exceeds"},
	} {
		fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
		c := AddFlags(fs)
		if err := fs.Parse(ExpandMultiValued(tc.args)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if _, err := c.Benchmark(fs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
