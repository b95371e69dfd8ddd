package llmsim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// The store keeps the most recently used responses, at most
// maxStoredResponses of them.
func TestResponseStoreEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	var st responseStore
	for i := range maxStoredResponses {
		st.put("r"+strconv.Itoa(i), []chatMessage{{Role: roleUser, Content: content{text: strconv.Itoa(i)}}})
	}
	if _, ok := st.get("r0"); !ok { // r0 is now the most recently used
		t.Fatal("r0 was dropped before the store was full")
	}
	st.put("new", nil)
	if _, ok := st.get("r1"); ok {
		t.Error("r1, the least recently used, was kept past the bound")
	}
	for _, id := range []string{"r0", "r2", "new"} {
		if _, ok := st.get(id); !ok {
			t.Errorf("%s was dropped", id)
		}
	}
	if n := st.order.Len(); n != maxStoredResponses || len(st.byID) != n {
		t.Errorf("%d responses kept (%d by id), want %d", n, len(st.byID), maxStoredResponses)
	}
}

// responsesReply is what a test reads of a whole Responses response, or
// of an error.
type responsesReply struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Usage  struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func postResponses(t *testing.T, r *Running, body map[string]any) (int, responsesReply) {
	t.Helper()
	resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/responses", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply responsesReply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, reply
}

// previous_response_id puts the stored conversation before the new input:
// the prompt grows by it and the prefix cache serves it. An unknown id is
// a 404 in OpenAI's error format.
func TestResponsesContinuesAStoredResponse(t *testing.T) {
	t.Parallel()
	r := listen(t, fastConfig())
	long := strings.Repeat("Tell me a story about the sea and its ships. ", 20)
	status, first := postResponses(t, r, map[string]any{"input": long, "max_output_tokens": 8, "ignore_eos": true})
	if status != http.StatusOK || first.Status != "incomplete" || first.Usage.OutputTokens != 8 || !strings.HasPrefix(first.ID, "resp_") {
		t.Fatalf("first response %d %+v", status, first)
	}
	status, next := postResponses(t, r, map[string]any{"input": "And then?", "max_output_tokens": 4, "previous_response_id": first.ID})
	if status != http.StatusOK || next.Usage.InputTokens <= first.Usage.InputTokens+8 || next.Usage.InputTokensDetails.CachedTokens < 160 {
		t.Errorf("continued response %d %+v: want a prompt holding the first turn's %d input tokens and its 8 output tokens, its prefix cached",
			status, next, first.Usage.InputTokens)
	}
	status, missing := postResponses(t, r, map[string]any{"input": "x", "previous_response_id": "resp_gone"})
	if e := missing.Error; status != http.StatusNotFound || e == nil || e.Type != "invalid_request_error" || e.Param == nil ||
		*e.Param != "previous_response_id" || !strings.Contains(e.Message, "resp_gone") {
		t.Errorf("unknown id: %d %+v", status, missing.Error)
	}
	for _, body := range []map[string]any{{"max_output_tokens": 4}, {"input": []any{}}, {"input": 5}, {"input": "x", "tools": []any{map[string]any{}}, "tool_choice": "required"}} {
		if status, reply := postResponses(t, r, body); status != http.StatusBadRequest || reply.Error == nil {
			t.Errorf("%v: %d %+v, want a 400", body, status, reply)
		}
	}
}

// The images of a Responses input (input_image parts, image_url the data
// URL itself) cost prompt tokens by the rule, as a chat message's do, and
// a broken one is a 400 naming the part.
func TestResponsesInputImagesCostPromptTokens(t *testing.T) {
	t.Parallel()
	r := listen(t, fastConfig()) // ImagePatch 28
	input := func(parts ...any) map[string]any {
		parts = append([]any{map[string]any{"type": "input_text", "text": "Describe this picture."}}, parts...)
		return map[string]any{"input": []any{map[string]any{"type": "message", "role": "user", "content": parts}}, "max_output_tokens": 1}
	}
	image := map[string]any{"type": "input_image", "image_url": testImageURL(t, "png", 100, 60), "detail": "auto"}
	_, plain := postResponses(t, r, input())
	status, with := postResponses(t, r, input(image))
	if status != http.StatusOK || with.Usage.InputTokens-plain.Usage.InputTokens != 4*3 {
		t.Errorf("status %d: input_tokens %d with the image, %d without; want 4·3 more", status, with.Usage.InputTokens, plain.Usage.InputTokens)
	}
	broken := map[string]any{"type": "input_image", "image_url": "https://example.com/a.png"}
	if status, reply := postResponses(t, r, input(broken)); status != http.StatusBadRequest || reply.Error == nil ||
		!strings.Contains(reply.Error.Message, "input[0]: content[1]: image_url is an http(s) URL") {
		t.Errorf("an http(s) input_image: %d %+v, want a 400 naming the part", status, reply.Error)
	}
}
