package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/kubetest"
)

func testConfig() Config {
	return Config{
		Name: "chat", Image: "llmrun:v1", Instances: 3, ClusterDomain: "cluster.local",
		Secret: "keys", SecretEnv: []SecretEnv{{Name: "OPENAI_API_KEY", Required: true}, {Name: "LLMRUN_INFLUXDB_TOKEN"}},
		Files:   []File{{Path: "chat.js", Data: []byte("export default function () {}\n")}, {Path: "data/blob.bin", Data: []byte{0xff, 0x00, 0xfe}}},
		WorkDir: ".", Args: []string{"run", "--seed=1", "/llmrun/files/chat.js"}, Resources: Size(10),
	}
}

// Write's manifests decode strictly into the Kubernetes API types, binary
// files included, with each secret by reference.
func TestWriteDecodesStrictly(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, testConfig()); err != nil {
		t.Fatal(err)
	}
	m := kubetest.Decode(t, b.String())
	files := m.Files(t)
	if string(files["chat.js"]) != "export default function () {}\n" || !bytes.Equal(files["data/blob.bin"], []byte{0xff, 0x00, 0xfe}) {
		t.Errorf("files %q", files)
	}
	for _, e := range m.Container(t).Env {
		ref := e.ValueFrom
		switch e.Name {
		case "OPENAI_API_KEY", "LLMRUN_INFLUXDB_TOKEN":
			if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "keys" || *ref.SecretKeyRef.Optional != (e.Name != "OPENAI_API_KEY") {
				t.Errorf("%s: %+v, want from the Secret keys, optional unless required", e.Name, e)
			}
		case "POD_NAMESPACE":
			if ref == nil || ref.FieldRef == nil || ref.FieldRef.FieldPath != "metadata.namespace" {
				t.Errorf("POD_NAMESPACE: %+v", e)
			}
		}
	}
}

func TestConfigCheck(t *testing.T) {
	tests := []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Name = "" }, `name ""`},
		{func(c *Config) { c.Name = strings.Repeat("a", 53) }, "at most 52 characters"},
		{func(c *Config) { c.Name = "1chat" }, `name "1chat": want lower-case letters, digits and '-', starting with a letter`}, // a Service's name is an RFC 1035 label
		{func(c *Config) { c.Namespace = "Load" }, `namespace "Load"`},
		{func(c *Config) { c.Image = "" }, "no image"},
		{func(c *Config) { c.Instances = 0 }, "instances 0: at least 1"},
		{func(c *Config) { c.Secret = "" }, "OPENAI_API_KEY from a Secret, but no Secret named"},
		{func(c *Config) { c.Resources.Memory = "lots" }, `memory "lots"`},
		{func(c *Config) { c.Files[1].Path = "../up.txt" }, `file "../up.txt": want a relative path without '..'`},
		{func(c *Config) { c.Resources.Memory = "1" }, `memory "1": want at least 128Mi`},
		// 900 KiB of binary data is 1.2 MB of base64: under the files'
		// cap, over what Kubernetes stores.
		{func(c *Config) { c.Files[1].Data = bytes.Repeat([]byte{0xff}, 900<<10) }, "KiB once encoded, more than the 1 MiB Kubernetes stores"},
	}
	for _, tt := range tests {
		c := testConfig()
		tt.change(&c)
		if err := Write(&bytes.Buffer{}, c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	tests := []struct {
		streams     int
		cpu, memory string
	}{
		{0, "250m", "128Mi"},
		{1, "253m", "129Mi"},
		{1000, "2473m", "324Mi"},    // 250 + 2·1000·50/45000·1000 = 2472.2; 128 + 200,000/1024 = 323.3
		{10000, "22473m", "2082Mi"}, // 250 + 22,222.2; 128 + 1953.1
	}
	for _, tt := range tests {
		if got := Size(tt.streams); got.CPU != tt.cpu || got.Memory != tt.memory {
			t.Errorf("Size(%d) = %+v, want %s and %s", tt.streams, got, tt.cpu, tt.memory)
		}
	}
}

// Files keep their places relative to each other and to the working
// directory, below the deepest directory holding them all.
func TestLayout(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"tests/chat.js", "shared/prompts.txt", "tests/big.bin", "tests/half1", "tests/half2"} {
		size := 10
		switch p {
		case "tests/big.bin":
			size = MaxFiles + 1
		case "tests/half1", "tests/half2":
			size = MaxFiles/2 + 1
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), bytes.Repeat([]byte("x"), size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(root, "tests")
	l, err := NewLayout(work, []string{"chat.js", filepath.Join(root, "shared/prompts.txt"), "chat.js"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Root != root || l.WorkDir != "tests" || len(l.Files) != 2 || l.Files[0].Path != "shared/prompts.txt" || l.Files[1].Path != "tests/chat.js" {
		t.Errorf("layout: root %s, workdir %s, files %v", l.Root, l.WorkDir, l.Files)
	}
	if got := l.InPod("chat.js"); got != MountDir+"/tests/chat.js" {
		t.Errorf("InPod(chat.js) = %s", got)
	}
	// From a directory that holds none of the files, the pods' working
	// directory is there all the same, with the marker.
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err = NewLayout(empty, []string{filepath.Join(work, "chat.js")})
	if err != nil {
		t.Fatal(err)
	}
	if l.WorkDir != "empty" || len(l.Files) != 2 || l.Files[1].Path != "empty/"+WorkDirMarker || len(l.Files[1].Data) != 0 {
		t.Errorf("layout from a directory without files: workdir %s, files %v", l.WorkDir, l.Files)
	}
	if _, err := NewLayout(work, []string{"big.bin"}); err == nil || !strings.Contains(err.Error(), filepath.Join(work, "big.bin")+" is larger than 1000 KiB") {
		t.Errorf("a file too large: %v", err)
	}
	if _, err := NewLayout(work, []string{"half1", "half2"}); err == nil || !strings.Contains(err.Error(), filepath.Join(work, "half2")+" (512001 bytes) makes the ConfigMap's files 1024002 bytes in all") {
		t.Errorf("files too large together: %v", err)
	}
	if _, err := NewLayout(work, []string{"missing.txt"}); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "HF_TOKEN": true, "db.password": true, "api-key": true, "apikey": true,
		"MAX_TOKENS": false, "KEYWORDS": false, "CONFIG": false, "bucket": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
	for raw, want := range map[string]string{
		"http://vllm:8000/v1":               "",
		"http://u:p@vllm:8000":              "carries a user or password",
		"http://influx:8086?bucket=b&rp=r":  "",
		"http://influx:8086?access_token=x": `parameter "access_token"`,
		"127.0.0.1:9090":                    "",
	} {
		err := CheckURL("--x", raw)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckURL(%q) = %v, want %q", raw, err, want)
		}
	}
}

// The memory quantities --memory takes, as Kubernetes reads them, and
// the GOMEMLIMIT each gives: 90 % of it.
func TestGoMemLimit(t *testing.T) {
	tests := []struct{ memory, limit, err string }{
		{"145Mi", "136839168", ""},
		{"2Gi", "1932735283", ""},
		{"2G", "1800000000", ""},
		{"1.5Gi", "1449551462", ""},
		{"500k", "450000", ""},
		{"1000", "900", ""},
		{"512K", "", "want bytes"},
		{"2gb", "", "want bytes"},
		{"", "", "want bytes"},
	}
	for _, tt := range tests {
		got, err := Resources{CPU: "1", Memory: tt.memory}.goMemLimit()
		if got != tt.limit || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("memory %q: GOMEMLIMIT %q, %v; want %q, an error saying %q", tt.memory, got, err, tt.limit, tt.err)
		}
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, dir string
		want      bool
	}{
		{"/w/run", "/w/run", true},
		{"/w/run/data/p.txt", "/w/run", true},
		{"/w/run/..data/p.txt", "/w/run", true}, // a name that starts with "..", not a parent
		{"/w/run/..", "/w/run", false},
		{"/w/other/p.txt", "/w/run", false},
		{"/w/runner/p.txt", "/w/run", false},
		{"/p.txt", "/w/run", false},
	}
	for _, tc := range tests {
		if got := Within(filepath.FromSlash(tc.path), filepath.FromSlash(tc.dir)); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

// A run flag's value reaches the pods as given: Kubernetes would expand
// $(NAME) in args from the container's environment and read $$ as $.
func TestArgsEscaped(t *testing.T) {
	c := testConfig()
	c.Args = []string{"run", "-e", "NOTE=$(POD_NAMESPACE) costs $$5", "/llmrun/files/chat.js"}
	var b bytes.Buffer
	if err := Write(&b, c); err != nil {
		t.Fatal(err)
	}
	got := kubetest.Decode(t, b.String()).Container(t).Args
	if want := "NOTE=$$(POD_NAMESPACE) costs $$$$5"; !slices.Contains(got, want) {
		t.Errorf("args %q, want %q among them", got, want)
	}
}
