package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/llmrun/llmrun/internal/redact"
)

// maxModelID bounds the length of a model ID taken from a server's list.
const maxModelID = 256

// plausibleModelID reports whether id, from a server's model list, can be
// used and printed as is: not empty, at most maxModelID bytes of UTF-8
// without control characters (an escape sequence would reach the
// terminal with the target line).
func plausibleModelID(id string) bool {
	return id != "" && len(id) <= maxModelID && redact.Escape(id, maxErrorLen) == id
}

// Models lists the models the server serves (GET /v1/models), in its order,
// leaving out the IDs that are not plausible (plausibleModelID).
// llmrun uses the first as the default model when none is configured, as
// most servers serve one.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.models, nil)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	req.Header = c.headers(nil, false)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, errors.New(cleanError(fmt.Sprintf("listing models: %v", err), c.secrets))
	}
	defer resp.Body.Close()
	if class, msg, _ := statusError(resp); class != ErrNone {
		return nil, errors.New(cleanError(fmt.Sprintf("listing models: %s", msg), c.secrets))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("listing models: the response is not an OpenAI model list: %w", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if plausibleModelID(m.ID) {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("listing models: the server lists none")
	}
	return ids, nil
}
