// Package llmconfig resolves the llm module's configuration of a run from
// a command's settings and the environment, the same way for every
// command (run, bench, inspect, kube): which base URL, model and API key
// win, and the base URL a command that sends nothing loads a script with.
package llmconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// The environment variables a run's target is taken from when no flag
// names it: the base URL from the first of BaseURLEnvs set, the model
// from ModelEnv, the API key from the variable --api-key-env names, by
// default DefaultAPIKeyEnv.
var BaseURLEnvs = []string{"LLMRUN_BASE_URL", "OPENAI_BASE_URL"}

const (
	ModelEnv         = "LLMRUN_MODEL"
	DefaultAPIKeyEnv = "OPENAI_API_KEY"
)

// PlaceholderURL is the base URL of the llm module's default client when
// a command that sends nothing (inspect, kube) is given none: init code
// may create clients, and such a command starts no simulator. Nothing is
// ever sent to it.
const PlaceholderURL = "http://127.0.0.1:0/v1"

// Settings are a command's flags of the target: "" or zero when not
// given.
type Settings struct {
	BaseURL   string // --base-url
	Model     string // --model
	APIKeyEnv string // --api-key-env
	Tokenizer string // --tokenizer
	// Timeout bounds a request (positive); IdleTimeout a response's
	// silence (0: none).
	Timeout, IdleTimeout time.Duration
	// SendsNothing says that the command sends no request (inspect,
	// kube): an --api-key-env naming an unset variable is then not an
	// error.
	SendsNothing bool
}

// KeyEnv is the variable the API key is read from.
func (s Settings) KeyEnv() string {
	if s.APIKeyEnv == "" {
		return DefaultAPIKeyEnv
	}
	return s.APIKeyEnv
}

// Resolve is the llm module's configuration of the settings: the base URL
// from --base-url, else BaseURLEnvs; the model from --model, else
// ModelEnv; the key from KeyEnv. ctx bounds the download of a Hugging
// Face model's tokenizer, which is loaded once every other setting is
// checked. An invalid base URL is a *engine.ConfigError
// naming the flag or variable it came from; other errors name the flag.
func Resolve(ctx context.Context, s Settings, getenv func(string) string) (llm.Config, error) {
	cfg := llm.Config{BaseURL: s.BaseURL, Model: s.Model, Timeout: s.Timeout, Tokenizer: s.Tokenizer}
	from := "--base-url"
	for _, env := range BaseURLEnvs {
		if cfg.BaseURL == "" {
			cfg.BaseURL, from = getenv(env), "$"+env
		}
	}
	if cfg.BaseURL != "" {
		if err := llm.CheckBaseURL(cfg.BaseURL); err != nil {
			return cfg, &engine.ConfigError{Field: from, Err: err}
		}
	}
	if cfg.Model == "" {
		cfg.Model = getenv(ModelEnv)
	}
	cfg.APIKey = getenv(s.KeyEnv())
	if s.APIKeyEnv != "" && cfg.APIKey == "" && !s.SendsNothing {
		return cfg, fmt.Errorf("--api-key-env %s: the environment variable %s is empty or unset", s.APIKeyEnv, s.APIKeyEnv)
	}
	if s.Timeout <= 0 {
		return cfg, fmt.Errorf("--timeout must be positive, got %s", s.Timeout)
	}
	switch {
	case s.IdleTimeout < 0:
		return cfg, fmt.Errorf("--idle-timeout must not be negative, got %s", s.IdleTimeout)
	case s.IdleTimeout == 0:
		cfg.IdleTimeout = llm.NoIdleTimeout
	default:
		cfg.IdleTimeout = s.IdleTimeout
	}
	// Last: a Hugging Face model's tokenizer may be downloaded, which a
	// slip in another setting should not wait for.
	if cfg.Tokenizer != "" {
		if _, err := tokenizer.LoadEnv(ctx, cfg.Tokenizer, getenv); err != nil {
			return cfg, fmt.Errorf("--tokenizer: %w", err)
		}
	}
	return cfg, nil
}

// Placeholder points a configuration given no base URL at PlaceholderURL
// and, given no model, the simulator's, as a command that loads a script
// without sending anything (inspect, kube) needs: a run would start the
// simulator there.
func Placeholder(cfg *llm.Config) {
	if cfg.BaseURL != "" {
		return
	}
	cfg.BaseURL = PlaceholderURL
	if cfg.Model == "" {
		cfg.Model = llmsim.DefaultConfig().Model
	}
}

// ExitCode is the exit code of Resolve's error: a signal stopped the
// download of --tokenizer's model, an invalid base URL is an invalid
// configuration (as the engine would find it), any other a bad flag.
func ExitCode(ctx context.Context, err error) int {
	var invalid *engine.ConfigError
	switch {
	case ctx.Err() != nil:
		return exitcode.Interrupted
	case errors.As(err, &invalid):
		return exitcode.InvalidConfig
	}
	return exitcode.Usage
}
