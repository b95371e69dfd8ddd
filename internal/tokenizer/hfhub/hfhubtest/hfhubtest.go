// Package hfhubtest gives tests of code that reads the Hugging Face hub a
// hub of their own on 127.0.0.1, and a Hugging Face cache filled as
// huggingface_hub fills it.
package hfhubtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// StalledHub starts a hub on 127.0.0.1 that answers no request: each
// waits until its client gives up or the test ends. It sets the
// environment (t.Setenv) so that the hub is the process's, with an empty
// cache and no token, and returns a channel that receives once per
// request, as it arrives.
func StalledHub(t *testing.T) (arrived <-chan struct{}) {
	t.Helper()
	requests := make(chan struct{}, 16)
	testEnded := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case requests <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-testEnded:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(testEnded) })
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HUGGINGFACE_HUB_CACHE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_TOKEN_PATH", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("TRANSFORMERS_OFFLINE", "")
	return requests
}
