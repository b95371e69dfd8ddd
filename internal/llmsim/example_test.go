package llmsim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// Listen serves the simulator on a TCP address, "127.0.0.1:0" for a free
// port, like an inference server started for a test; its URL is the base
// URL an OpenAI client takes, and GET /v1/models lists the configured
// model.
func ExampleListen() {
	cfg := llmsim.DefaultConfig()
	cfg.Model = "sim-7b"
	sim, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Close()
	fmt.Println(regexp.MustCompile(`:\d+$`).ReplaceAllString(sim.URL(), ":PORT"))

	resp, err := http.Get(sim.URL() + "/v1/models")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		log.Fatal(err)
	}
	for _, m := range models.Data {
		fmt.Println("model:", m.ID)
	}
	// Output:
	// http://127.0.0.1:PORT
	// model: sim-7b
}

// New makes a Server whose Handler mounts anywhere, here on an httptest
// server. A request without ignore_eos draws its output length from
// Config.OutputMean, the seed and its arrival number, so a given seed
// answers the same text; the server's counters tell what its engine did.
func ExampleNew() {
	cfg := llmsim.DefaultConfig()
	cfg.Seed = 1
	cfg.OutputMean = 8 // tokens, on average, when the request allows more
	sim, err := llmsim.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()

	body := `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 100}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	var answer struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, answer.Choices[0].FinishReason, answer.Usage.PromptTokens, "prompt tokens,", answer.Usage.CompletionTokens, "generated:")
	fmt.Printf("%q\n", answer.Choices[0].Message.Content)
	st := sim.Stats()
	fmt.Println("engine steps:", st.PrefillSteps, "prefill (the first token),", st.DecodeSteps, "decode (one token each)")
	// Output:
	// 200 OK stop 7 prompt tokens, 8 generated:
	// "was sound father boy after study same another"
	// engine steps: 1 prefill (the first token), 7 decode (one token each)
}
