package llm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
)

// A Client asks the server for its models, then streams one chat request
// and returns its Result: whether it succeeded, its token counts and its
// timings (TTFT, ITL, E2E, which vary from run to run and are left out
// here). The server is the built-in simulator, listening on a free port
// of 127.0.0.1.
func ExampleClient_Stream() {
	ctx := context.Background()
	sim, err := llmsim.Listen(ctx, "127.0.0.1:0", llmsim.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Close()

	client, err := llm.NewClient(llm.Config{BaseURL: sim.URL()})
	if err != nil {
		log.Fatal(err)
	}
	models, err := client.Models(ctx)
	if err != nil {
		log.Fatal(err)
	}
	res := client.Stream(ctx, llm.Request{Body: map[string]any{
		"model":      models[0],
		"messages":   []any{map[string]any{"role": "user", "content": "Say something."}},
		"max_tokens": 16,
		"ignore_eos": true, // the simulator then generates exactly max_tokens
	}})
	if !res.OK {
		log.Fatalf("%s: %s", res.Class, res.Error)
	}
	fmt.Println("ok:", res.OK, "status:", res.Status, "api:", res.API, "model:", res.Model)
	fmt.Println("prompt tokens:", res.PromptTokens, "output tokens:", res.OutputTokens, "from", res.TokenSource)
	fmt.Println("gaps between tokens (ITL):", len(res.ITL))
	// Output:
	// ok: true status: 200 api: chat model: llmsim-1
	// prompt tokens: 9 output tokens: 16 from usage
	// gaps between tokens (ITL): 15
}
