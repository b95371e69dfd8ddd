package llmjs

import (
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// TestTargetsLeaveOutTheDefaultOfAServerTheScriptSpeaksTo: when the init
// code made a client of the default's server, Targets gives that client
// alone (its API, not the default's chat probe, says how to reach the
// server), whether or not the two base URLs spell the "/v1".
func TestTargetsLeaveOutTheDefaultOfAServerTheScriptSpeaksTo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ defaultURL, scriptURL string }{
		{"http://127.0.0.1:9", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9", "http://127.0.0.1:9/v1"},
		{"http://127.0.0.1:9/v1/", "http://127.0.0.1:9"},
	} {
		m, err := NewModule(llm.Config{BaseURL: tc.defaultURL, Model: "m"}, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		v := modulestest.NewVU(t)
		v.Expose("llm", m)
		if _, err := v.Runtime().RunString(`llm.client({ baseURL: '` + tc.scriptURL + `', api: 'rerank' })`); err != nil {
			t.Fatal(err)
		}
		got := m.Targets(t.Context())
		d, err := m.client(t.Context(), m.defaults)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] == d {
			var urls []string
			for _, c := range got {
				urls = append(urls, c.Server())
			}
			t.Errorf("default %s, script's client %s: targets %v (default first: %t), want the script's client alone",
				tc.defaultURL, tc.scriptURL, urls, len(got) > 0 && got[0] == d)
		}
	}
}
