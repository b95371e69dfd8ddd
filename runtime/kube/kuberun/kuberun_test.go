package kuberun

import (
	"slices"
	"strings"
	"testing"
)

// SecretEnv gives the pods the API key's variable (--api-key-env, else
// OPENAI_API_KEY), the InfluxDB token's with --out influxdb and each
// --secret-env once, from a Secret only; it refuses a setting that would
// put a secret in the manifests or a file a pod would lose.
func TestSecretEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		run     Run
		secret  string
		extra   []string
		want    []string
		wantErr string
	}{
		{"no secret", Run{}, "", nil, nil, ""},
		{"the default key", Run{}, "keys", nil, []string{"OPENAI_API_KEY"}, ""},
		{"--api-key-env", Run{APIKeyEnv: "MY_KEY"}, "keys", nil, []string{"MY_KEY"}, ""},
		{"influxdb's token, each variable once", Run{Outs: []string{"influxdb=http://influxdb:8086?bucket=b"}}, "keys", []string{"HF_TOKEN", "OPENAI_API_KEY"},
			[]string{"OPENAI_API_KEY", "LLMRUN_INFLUXDB_TOKEN", "HF_TOKEN"}, ""},
		{"--api-key-env without a secret", Run{APIKeyEnv: "MY_KEY"}, "", nil, nil, "--api-key-env MY_KEY needs --secret"},
		{"--secret-env without a secret", Run{}, "", []string{"HF_TOKEN"}, nil, "--secret-env HF_TOKEN needs --secret"},
		{"a file written in a pod", Run{Outs: []string{"jsonl=r.jsonl"}}, "", nil, nil, "--out jsonl=r.jsonl: a file written in a pod is lost with it"},
		{"the result kube adds", Run{Outs: []string{"json=-"}}, "", nil, nil, "--out json=-: kube adds it"},
		{"a token in -e", Run{Env: []string{"API_KEY=sk-1"}}, "", nil, nil, "-e"},
		{"a password in the base URL", Run{BaseURL: "http://user:pw@vllm:8000"}, "", nil, nil, "--base-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.run.SecretEnv(tt.secret, tt.extra)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("%v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// The URLs a pod would read as this machine's loopback, and nvidia-smi,
// get a warning each.
func TestWarnings(t *testing.T) {
	t.Parallel()
	r := Run{BaseURL: "http://127.0.0.1:8000", Outs: []string{"influxdb=http://localhost:8086"},
		ServerMetrics: []string{"http://vllm:8000/metrics"}, GPUMetrics: []string{"nvidia-smi"}}
	got := r.Warnings()
	if len(got) != 3 || !strings.Contains(got[0], "--base-url") || !strings.Contains(got[1], "--out influxdb") || !strings.Contains(got[2], "nvidia-smi") {
		t.Errorf("warnings %q, want the base URL's, the output's and nvidia-smi's", got)
	}
}

func TestDefaultName(t *testing.T) {
	t.Parallel()
	for script, want := range map[string]string{
		"chat.js":                       "llmrun-chat",
		"stock:chat":                    "llmrun-chat",
		"dir/My_Sweep.test.ts":          "llmrun-my-sweep-test",
		strings.Repeat("a", 60) + ".js": "llmrun-" + strings.Repeat("a", 33),
	} {
		if got := DefaultName(script); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", script, got, want)
		}
	}
}
