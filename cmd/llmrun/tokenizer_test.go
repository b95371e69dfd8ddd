package main

import (
	"strings"
	"testing"
	"time"
)

func TestLLMConfigTokenizer(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	f := runFlags{baseURL: "http://127.0.0.1:1", timeout: time.Second, tokenizer: "o200k_base"}
	cfg, err := llmConfig(f, env)
	if err != nil || cfg.Tokenizer != "o200k_base" {
		t.Errorf("--tokenizer o200k_base: %+v, %v", cfg, err)
	}
	f.tokenizer = "gpt2"
	if _, err := llmConfig(f, env); err == nil || !strings.Contains(err.Error(), "cl100k_base, o200k_base") {
		t.Errorf("--tokenizer gpt2: %v", err)
	}
}
