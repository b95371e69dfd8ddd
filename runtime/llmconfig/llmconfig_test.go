package llmconfig

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
)

// Resolve takes each of the target's settings from its flag, else from
// the environment, in the documented order, and names the flag or
// variable at fault.
func TestResolve(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"LLMRUN_BASE_URL": "http://llmrun:1", "OPENAI_BASE_URL": "http://openai:1",
		"LLMRUN_MODEL": "env-model", "OPENAI_API_KEY": "openai-key", "MY_KEY": "my-key",
	}
	without := func(names ...string) map[string]string {
		m := map[string]string{}
		for k, v := range env {
			m[k] = v
		}
		for _, n := range names {
			delete(m, n)
		}
		return m
	}
	tests := []struct {
		name                   string
		settings               Settings
		env                    map[string]string
		baseURL, model, apiKey string
		wantErr                string
		configErr              bool // the error is an *engine.ConfigError
	}{
		{"the flags win", Settings{BaseURL: "http://flag:1", Model: "flag-model", APIKeyEnv: "MY_KEY"}, env, "http://flag:1", "flag-model", "my-key", "", false},
		{"$LLMRUN_BASE_URL before $OPENAI_BASE_URL", Settings{}, env, "http://llmrun:1", "env-model", "openai-key", "", false},
		{"$OPENAI_BASE_URL", Settings{}, without("LLMRUN_BASE_URL"), "http://openai:1", "env-model", "openai-key", "", false},
		{"nothing: the simulator, the server's model, no key", Settings{}, map[string]string{}, "", "", "", "", false},
		{"--api-key-env unset", Settings{APIKeyEnv: "NO_SUCH_KEY"}, env, "", "", "", "--api-key-env NO_SUCH_KEY: the environment variable NO_SUCH_KEY is empty or unset", false},
		{"--api-key-env unset, sending nothing", Settings{APIKeyEnv: "NO_SUCH_KEY", SendsNothing: true}, env, "http://llmrun:1", "env-model", "", "", false},
		{"--base-url without a scheme", Settings{BaseURL: "127.0.0.1:8000"}, env, "", "", "", "--base-url: invalid base URL: it has no scheme", true},
		{"$OPENAI_BASE_URL without a scheme", Settings{}, map[string]string{"OPENAI_BASE_URL": "localhost:8000/v1"}, "", "", "", "$OPENAI_BASE_URL: invalid base URL", true},
		{"no timeout", Settings{Timeout: -1}, env, "", "", "", "--timeout must be positive", false},
		{"negative idle timeout", Settings{IdleTimeout: -time.Second}, env, "", "", "", "--idle-timeout must not be negative", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.settings
			if s.Timeout == 0 {
				s.Timeout = time.Minute
			}
			cfg, err := Resolve(t.Context(), s, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				var configErr *engine.ConfigError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &configErr) != tt.configErr {
					t.Fatalf("error %v, want %q (a configuration error: %v)", err, tt.wantErr, tt.configErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.BaseURL != tt.baseURL || cfg.Model != tt.model || cfg.APIKey != tt.apiKey {
				t.Errorf("base URL %q, model %q, key %q; want %q, %q, %q", cfg.BaseURL, cfg.Model, cfg.APIKey, tt.baseURL, tt.model, tt.apiKey)
			}
			if s.IdleTimeout == 0 && cfg.IdleTimeout != llm.NoIdleTimeout {
				t.Errorf("idle timeout %v, want none", cfg.IdleTimeout)
			}
		})
	}
}

// A command that sends nothing loads a script with the placeholder URL
// and the simulator's model, unless a base URL was given.
func TestPlaceholder(t *testing.T) {
	t.Parallel()
	cfg := llm.Config{}
	Placeholder(&cfg)
	if cfg.BaseURL != PlaceholderURL || cfg.Model == "" {
		t.Errorf("%+v, want the placeholder and the simulator's model", cfg)
	}
	given := llm.Config{BaseURL: "http://server:1"}
	Placeholder(&given)
	if given.BaseURL != "http://server:1" || given.Model != "" {
		t.Errorf("%+v, want the base URL given, the model left to the server", given)
	}
}

// --tokenizer is loaded as the configuration is resolved: an unknown one
// fails there, listing those known.
func TestResolveTokenizer(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	s := Settings{BaseURL: "http://127.0.0.1:1", Timeout: time.Second, Tokenizer: "o200k_base"}
	cfg, err := Resolve(t.Context(), s, env)
	if err != nil || cfg.Tokenizer != "o200k_base" {
		t.Errorf("--tokenizer o200k_base: %+v, %v", cfg, err)
	}
	s.Tokenizer = "gpt2"
	if _, err := Resolve(t.Context(), s, env); err == nil || !strings.Contains(err.Error(), "cl100k_base, o200k_base") {
		t.Errorf("--tokenizer gpt2: %v", err)
	}
}
