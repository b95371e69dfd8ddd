package vllmbench

import (
	"fmt"
	"strings"
)

// Use is what llmrun bench does with one of vllm bench serve's flags.
type Use int

const (
	// Implemented flags do what vLLM's do (docs/bench.md says where they
	// differ).
	Implemented Use = iota
	// Ignored flags are accepted and named once as ignored: they cannot
	// change what is sent here.
	Ignored
	// Refused flags stop llmrun bench before anything is sent: they
	// change the load or the requests in a way llmrun does not implement.
	Refused
)

// Arity is what a flag takes after it.
type Arity int

const (
	NoValue  Arity = iota // a switch (argparse's store_true)
	OneValue              // one value
	Values                // one or more words (argparse's nargs)
)

// Flag is one of vllm bench serve's flags and what llmrun bench does with
// it.
type Flag struct {
	Name  string // without its dashes
	Use   Use
	Arity Arity
	// Why says, of an ignored flag, why it cannot matter here; of a
	// refused one, why, and what to do instead.
	Why string
}

// Flags are the flags of vllm bench serve: add_dataset_parser's
// (vllm/benchmarks/datasets/arg_utils.py at commit 237145ea) and
// add_cli_args' (vllm/benchmarks/serve.py at commit 009e6d4a), in their
// order, then those of earlier vLLM releases that scripts still pass.
// docs/bench.md's flag table has a row for each.
var Flags = []Flag{
	{"seed", Implemented, OneValue, ""},
	{"num-prompts", Implemented, OneValue, ""},
	{"dataset-name", Implemented, OneValue, ""},
	{"no-stream", Ignored, NoValue, "it loads Hugging Face datasets, which llmrun bench does not take"},
	{"dataset-path", Implemented, OneValue, ""},
	{"no-oversample", Refused, NoValue, "llmrun bench sends exactly --num-prompts requests, going round the dataset again when it has fewer records; give --num-prompts no more than the dataset's records instead"},
	{"skip-chat-template", Ignored, NoValue, "llmrun never applies a chat template to prompts, which is what this flag asks"},
	{"disable-shuffle", Ignored, NoValue, "llmrun sends a dataset's records in the file's order, which is what this flag asks"},
	{"custom-output-len", Implemented, OneValue, ""},
	{"spec-bench-output-len", Ignored, OneValue, "only the spec_bench dataset uses it, which llmrun bench does not take"},
	{"spec-bench-category", Ignored, OneValue, "only the spec_bench dataset uses it, which llmrun bench does not take"},
	{"sonnet-input-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sonnet-output-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sonnet-prefix-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sharegpt-output-len", Implemented, OneValue, ""},
	{"blazedit-min-distance", Ignored, OneValue, "only the hf dataset's blazedit uses it, which llmrun bench does not take"},
	{"blazedit-max-distance", Ignored, OneValue, "only the hf dataset's blazedit uses it, which llmrun bench does not take"},
	{"random-input-len", Implemented, OneValue, ""},
	{"random-output-len", Implemented, OneValue, ""},
	{"random-range-ratio", Implemented, OneValue, ""},
	{"random-prefix-len", Implemented, OneValue, ""},
	{"random-batch-size", Ignored, OneValue, "only embedding benchmarks use it, whose backends llmrun bench does not take"},
	{"no-reranker", Ignored, NoValue, "only rerank benchmarks use it, whose backends llmrun bench does not take"},
	{"random-mm-base-items-per-request", Ignored, OneValue, "only the random-mm dataset uses it, which llmrun bench does not take"},
	{"random-mm-num-mm-items-range-ratio", Ignored, OneValue, "only the random-mm dataset uses it, which llmrun bench does not take"},
	{"random-mm-limit-mm-per-prompt", Ignored, OneValue, "only the random-mm dataset uses it, which llmrun bench does not take"},
	{"random-mm-bucket-config", Ignored, OneValue, "only the random-mm dataset uses it, which llmrun bench does not take"},
	{"hf-subset", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-split", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-name", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-output-len", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"prefix-repetition-prefix-len", Implemented, OneValue, ""},
	{"prefix-repetition-suffix-len", Implemented, OneValue, ""},
	{"prefix-repetition-num-prefixes", Implemented, OneValue, ""},
	{"prefix-repetition-output-len", Implemented, OneValue, ""},

	{"label", Implemented, OneValue, ""},
	{"backend", Implemented, OneValue, ""},
	{"base-url", Implemented, OneValue, ""},
	{"host", Implemented, OneValue, ""},
	{"port", Implemented, OneValue, ""},
	{"endpoint", Implemented, OneValue, ""},
	{"header", Implemented, Values, ""},
	{"max-concurrency", Implemented, OneValue, ""},
	{"model", Implemented, OneValue, ""},
	{"input-len", Implemented, OneValue, ""},
	{"output-len", Implemented, OneValue, ""},
	{"tokenizer", Implemented, OneValue, ""},
	{"tokenizer-mode", Ignored, OneValue, "llmrun's tokenizers (tiktoken encodings, tokenizer.json) have one mode"},
	{"use-beam-search", Ignored, NoValue, "vllm bench serve passes it to no request either"},
	{"logprobs", Implemented, OneValue, ""},
	{"request-rate", Implemented, OneValue, ""},
	{"burstiness", Implemented, OneValue, ""},
	{"probe-request-rate", Refused, OneValue, "llmrun bench sends no probe requests beside the benchmark's; run llmrun run with a second scenario of 1-token requests at that rate instead"},
	{"disable-tqdm", Ignored, NoValue, "llmrun shows no tqdm bar; -q turns its live view off"},
	{"num-warmups", Implemented, OneValue, ""},
	{"profile", Refused, NoValue, "llmrun does not drive vLLM's profiler (/start_profile, /stop_profile); call those endpoints around the run instead"},
	{"save-result", Implemented, NoValue, ""},
	{"save-detailed", Implemented, NoValue, ""},
	{"append-result", Implemented, NoValue, ""},
	{"metadata", Implemented, Values, ""},
	{"result-dir", Implemented, OneValue, ""},
	{"result-filename", Implemented, OneValue, ""},
	{"ignore-eos", Implemented, NoValue, ""},
	{"self-timed", Refused, NoValue, "it replays the timed_trace dataset's timestamps, and llmrun bench does not take that dataset; replay a trace with llmrun run instead"},
	{"no-self-timed", Refused, NoValue, "it is only valid with the timed_trace dataset, which llmrun bench does not take"},
	{"percentile-metrics", Implemented, OneValue, ""},
	{"metric-percentiles", Implemented, OneValue, ""},
	{"goodput", Implemented, Values, ""},
	{"request-id-prefix", Implemented, OneValue, ""},
	{"top-p", Implemented, OneValue, ""},
	{"top-k", Implemented, OneValue, ""},
	{"min-p", Implemented, OneValue, ""},
	{"temperature", Implemented, OneValue, ""},
	{"frequency-penalty", Implemented, OneValue, ""},
	{"presence-penalty", Implemented, OneValue, ""},
	{"repetition-penalty", Implemented, OneValue, ""},
	{"served-model-name", Implemented, OneValue, ""},
	{"lora-modules", Refused, Values, "llmrun bench sends every request to one model; name the model per request in a script for llmrun run instead"},
	{"lora-assignment", Refused, OneValue, "it assigns --lora-modules, which llmrun bench does not take"},
	{"ramp-up-strategy", Refused, OneValue, "llmrun bench keeps one --request-rate; run llmrun run with a ramping-arrival-rate scenario instead"},
	{"ramp-up-start-rps", Refused, OneValue, "it is --ramp-up-strategy's, which llmrun bench does not take"},
	{"ramp-up-end-rps", Refused, OneValue, "it is --ramp-up-strategy's, which llmrun bench does not take"},
	{"ready-check-timeout-sec", Implemented, OneValue, ""},
	{"chat-template-kwargs", Ignored, OneValue, "llmrun never applies a chat template to prompts, so there is nothing to pass it to"},
	{"extra-body", Implemented, OneValue, ""},
	{"skip-tokenizer-init", Refused, NoValue, "llmrun bench needs its tokenizer to make prompts of exact lengths and to count output tokens the server does not report"},
	{"insecure", Implemented, NoValue, ""},
	{"plot-timeline", Ignored, NoValue, "llmrun bench draws no plot; --out html=FILE writes llmrun's report with the run's timeline"},
	{"timeline-itl-thresholds", Ignored, OneValue, "it colours --plot-timeline's plot, which llmrun bench does not draw"},
	{"plot-dataset-stats", Ignored, NoValue, "llmrun bench draws no plot; --save-detailed keeps input_lens and output_lens"},

	// Earlier vLLM releases' flags.
	{"trust-remote-code", Ignored, NoValue, "llmrun's tokenizers run no code from the model's repository"},
	{"endpoint-type", Implemented, OneValue, ""},
}

// LookupFlag returns the vLLM flag of that name (without dashes).
func LookupFlag(name string) (Flag, bool) {
	for _, f := range Flags {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}

// Refusal is the error of a refused flag given.
func (f Flag) Refusal() error {
	return fmt.Errorf("--%s is a vLLM flag llmrun bench does not support: %s", f.Name, f.Why)
}

// IgnoredNotice is the one line that names the ignored flags given, each
// with why it cannot matter; "" when none was given.
func IgnoredNotice(given []Flag) string {
	if len(given) == 0 {
		return ""
	}
	parts := make([]string, len(given))
	for i, f := range given {
		parts[i] = fmt.Sprintf("--%s (%s)", f.Name, f.Why)
	}
	return "ignoring vLLM flags that cannot matter here: " + strings.Join(parts, "; ")
}
