package llmconfig_test

import (
	"context"
	"fmt"
	"time"

	"github.com/llmrun/llmrun/runtime/llmconfig"
)

// A flag wins over the environment; what no flag names comes from it: the
// model from $LLMRUN_MODEL, the key from $OPENAI_API_KEY unless
// --api-key-env names another variable.
func ExampleResolve() {
	env := map[string]string{
		"LLMRUN_BASE_URL": "http://127.0.0.1:8000/v1",
		"LLMRUN_MODEL":    "qwen",
		"OPENAI_API_KEY":  "sk-test",
	}
	getenv := func(name string) string { return env[name] }
	cfg, err := llmconfig.Resolve(context.Background(), llmconfig.Settings{
		BaseURL: "http://127.0.0.1:9000/v1",
		Timeout: 2 * time.Minute,
	}, getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.BaseURL, cfg.Model, cfg.APIKey != "")
	// Output: http://127.0.0.1:9000/v1 qwen true
}
