package main

import (
	"encoding/pem"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/internal/kubetest"
	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// pathsScript reads its settings and the CA of its server beside itself,
// and a note it names relative to the working directory (deprecated).
const pathsScript = `
import llm from 'llm';
import { check } from 'llmrun';
import { load } from 'llmrun/config';
const cfg = load('bench.yaml');
const note = open('note.txt');
const secure = llm.client({ baseURL: __ENV.TLS_URL + '/v1', tls: { caFile: 'ca.pem' } });
export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };
export default function () {
  const r = secure.stream({ messages: [{ role: 'user', content: note }], max_tokens: cfg.max_tokens });
  check(r, { ok: (r) => r.ok });
}
`

// A project run from its top: llmrun run tests/chat.js reads the files
// the script names beside it (its settings, the CA that lets it reach an
// https simulator), and one named relative to the working directory with
// one deprecation warning; llmrun kube ships every one of them.
func TestRunResolvesPathsAgainstTheScript(t *testing.T) {
	t.Parallel()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	srv := httptest.NewTLSServer(sim.Handler())
	t.Cleanup(srv.Close)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	project := t.TempDir()
	files := map[string]string{"tests/chat.js": pathsScript, "tests/bench.yaml": "max_tokens: 3\n", "tests/ca.pem": ca, "note.txt": "Say hi."}
	filetest.Write(t, project, files)
	code, stdout, stderr := llmrunIn(t, project, nil, "run", "-q", "-e", "TLS_URL="+srv.URL, "tests/chat.js")
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Once, though each VU's init code opens it.
	if n := strings.Count(stderr, "deprecated"); n != 1 || !strings.Contains(stderr, `open(\"note.txt\") in tests/chat.js: note.txt was found relative to the working directory`) {
		t.Errorf("stderr has %d deprecation warnings, want one for note.txt:\n%s", n, stderr)
	}

	code, stdout, stderr = llmrunIn(t, project, nil, "kube", "tests/chat.js", "--instances", "2", "--image", "llmrun:v1", "-e", "TLS_URL=https://vllm.serving")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	shipped := kubetest.Decode(t, stdout).Files(t)
	for name, content := range files {
		if string(shipped[name]) != content {
			t.Errorf("the ConfigMap's %s: %q, want %q", name, shipped[name], content)
		}
	}
	if len(shipped) != len(files) {
		t.Errorf("the ConfigMap's files: %q, want %d", shipped, len(files))
	}
	if n := strings.Count(stderr, "deprecated"); n != 1 {
		t.Errorf("kube's stderr has %d deprecation warnings, want one:\n%s", n, stderr)
	}
}
