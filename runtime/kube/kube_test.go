package kube

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	psa "k8s.io/pod-security-admission/api"

	"github.com/llmrun/llmrun/internal/kubetest"
)

func testConfig() Config {
	return Config{
		Name: "chat", Image: "llmrun:v1", Instances: 3, ClusterDomain: "cluster.local",
		Secret: "keys", SecretEnv: []string{"OPENAI_API_KEY", "LLMRUN_INFLUXDB_TOKEN"},
		Files:   []File{{Path: "chat.js", Data: []byte("export default function () {}\n")}, {Path: "data/blob.bin", Data: []byte{0xff, 0x00, 0xfe}}},
		WorkDir: ".", Args: []string{"run", "--seed=1", "/llmrun/files/chat.js"}, Resources: Size(10),
		ActiveDeadline: DefaultActiveDeadline(5 * time.Minute), TTLAfterFinished: DefaultTTLAfterFinished,
	}
}

// Write's manifests decode strictly into the Kubernetes API types, binary
// files included, with each secret by reference to a Secret and key that
// must exist: a misnamed one keeps the pods from starting, rather than
// sending requests without a key.
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
			if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "keys" || ref.SecretKeyRef.Key != e.Name ||
				ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
				t.Errorf("%s: %+v, want it from the Secret keys's key of its name, not optional", e.Name, ref)
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
		{func(c *Config) { c.Instances = 0 }, "instances 0: want 1 to 10000"},
		{func(c *Config) { c.Instances = 10001 }, "instances 10001: want 1 to 10000"},
		{func(c *Config) { c.Secret = "" }, "OPENAI_API_KEY from a Secret, but no Secret named"},
		{func(c *Config) { c.Resources.Memory = "lots" }, `memory "lots"`},
		{func(c *Config) { c.Files[1].Path = "../up.txt" }, `file "../up.txt": want a relative path without '..'`},
		{func(c *Config) { c.Resources.Memory = "1" }, `memory "1": want at least 128Mi`},
		{func(c *Config) { c.ActiveDeadline = 0 }, "active deadline 0s: want a positive duration"},
		{func(c *Config) { c.TTLAfterFinished = -time.Hour }, "TTL after finished -1h0m0s: want a positive duration"},
		{func(c *Config) { c.TTLAfterFinished = 70 * 365 * 24 * time.Hour }, "TTL after finished 613200h0m0s: want a positive duration of at most 596523h14m7s"},
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
	// From the project's top, the script's tree is the project.
	l, err := NewLayout(root, "tests/chat.js", []string{"tests/chat.js", filepath.Join(root, "shared/prompts.txt"), "tests/chat.js"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Root != root || l.WorkDir != "." || len(l.Files) != 2 || l.Files[0].Path != "shared/prompts.txt" || l.Files[1].Path != "tests/chat.js" {
		t.Errorf("layout: root %s, workdir %s, files %v", l.Root, l.WorkDir, l.Files)
	}
	if got := l.InPod("tests/chat.js"); got != MountDir+"/tests/chat.js" {
		t.Errorf("InPod(tests/chat.js) = %s", got)
	}
	// From a directory that holds none of the files, the pods' working
	// directory is there all the same, with the marker.
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err = NewLayout(empty, filepath.Join(work, "chat.js"), []string{filepath.Join(work, "chat.js")})
	if err != nil {
		t.Fatal(err)
	}
	if l.WorkDir != "empty" || len(l.Files) != 2 || l.Files[1].Path != "empty/"+WorkDirMarker || len(l.Files[1].Data) != 0 {
		t.Errorf("layout from a directory without files: workdir %s, files %v", l.WorkDir, l.Files)
	}
	if _, err := NewLayout(work, "chat.js", []string{"big.bin"}); err == nil || !strings.Contains(err.Error(), filepath.Join(work, "big.bin")+" is larger than 1000 KiB") {
		t.Errorf("a file too large: %v", err)
	}
	if _, err := NewLayout(work, "chat.js", []string{"half1", "half2"}); err == nil || !strings.Contains(err.Error(), filepath.Join(work, "half2")+" (512001 bytes) makes the ConfigMap's files 1024002 bytes in all") {
		t.Errorf("files too large together: %v", err)
	}
	if _, err := NewLayout(work, "chat.js", []string{"missing.txt"}); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing file: %v", err)
	}
}

// A file outside the script's tree, or of the system's, is refused
// naming it, whether given as it is, through "..", or through a link.
func TestLayoutRefusesFilesOutsideTheTree(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	for _, p := range []string{"project/chat.js", "project/data/ok.txt", "elsewhere/keys.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"environ": "/proc/self/environ", "keys.txt": filepath.Join(root, "elsewhere/keys.txt"), "ok-link.txt": "data/ok.txt",
	} {
		if err := os.Symlink(target, filepath.Join(project, link)); err != nil {
			t.Fatal(err)
		}
	}
	up := strings.Repeat("../", strings.Count(project, "/"))
	tests := []struct{ file, want string }{
		{"data/ok.txt", ""},
		{"ok-link.txt", ""},
		{"/proc/self/environ", "/proc/self/environ: refused: it is under /proc"},
		{up + "proc/self/environ", "/proc/self/environ: refused: it is under /proc"},
		{"environ", filepath.Join(project, "environ") + ": refused: it is under /proc"},
		{"/sys/kernel/hostname", "/sys/kernel/hostname: refused: it is under /sys"},
		{"/dev/null", "/dev/null: refused: it is under /dev"},
		{"../elsewhere/keys.txt", filepath.Join(root, "elsewhere/keys.txt") + ": refused: it lies outside " + project + ", the script's tree"},
		{"keys.txt", filepath.Join(project, "keys.txt") + ": refused: it lies outside " + project + " (through a link, to " + filepath.Join(root, "elsewhere/keys.txt") + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			l, err := NewLayout(project, "chat.js", []string{"chat.js", tt.file})
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("NewLayout(%s) = %v, want %q", tt.file, err, tt.want)
			}
			if err == nil && len(l.Files) != 2 {
				t.Errorf("files %v, want chat.js and %s", l.Files, tt.file)
			}
		})
	}
	// Run from elsewhere, the tree is the script's directory.
	if _, err := NewLayout(filepath.Join(root, "elsewhere"), filepath.Join(project, "chat.js"), []string{"keys.txt"}); err == nil || !strings.Contains(err.Error(), "lies outside "+project) {
		t.Errorf("a file of the working directory outside the script's: %v", err)
	}
}

func TestCheckWord(t *testing.T) {
	for value, want := range map[string]string{
		"ghcr.io/me/llmrun:v1@sha256:abc": "",
		"cluster.local":                   "",
		"a$b":                             "",
		"x\ny":                            `"x\ny": holds whitespace or a control character at byte 1`,
		"x\ty":                            "holds whitespace",
		"x y":                             "holds whitespace",
		"x\u00a0y":                        "holds whitespace",
		"x\x1b[31m":                       "holds whitespace or a control character at byte 1",
		"x$(id)":                          "holds $(",
		"x`id`":                           "holds `",
		`x"y`:                             `holds "`,
		"x'y":                             "holds '",
	} {
		err := CheckWord("--image", value)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), "--image ") || err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckWord(%q) = %v, want %q", value, err, want)
		}
	}
	c := Config{Name: "llmrun-x", Image: "x", Instances: 1, ClusterDomain: "cluster.local", Secret: "s", SecretEnv: []string{"A\nB"}, ActiveDeadline: time.Minute, TTLAfterFinished: time.Minute, Resources: Size(1)}
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), `variable from the Secret "A\nB"`) {
		t.Errorf("Check with a secret variable holding a newline: %v", err)
	}
	c.SecretEnv, c.Image = nil, "x\n"
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), `image "x\n": holds whitespace`) {
		t.Errorf("Check with an image holding a newline: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	for setting, want := range map[string]string{
		"GITHUB_PAT=ghp_x":            "-e GITHUB_PAT=…: named like a secret",
		"MODE=http://u:p@h:1/":        "-e MODE: the URL carries a user or password",
		"TARGET=http://h:1/#bearer=x": `-e TARGET: the URL's fragment's parameter "bearer"`,
		"MAX_TOKENS=5":                "",
		"NO_VALUE":                    "",
	} {
		err := CheckSetting("-e", setting)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckSetting(%q) = %v, want %q", setting, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "ghp_x") {
			t.Errorf("CheckSetting(%q) names the value: %v", setting, err)
		}
	}
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "HF_TOKEN": true, "db.password": true, "api-key": true, "apikey": true,
		"BEARER": true, "SESSION_COOKIE": true, "GITHUB_PAT": true, "api_key": true, "apiKey": true, "X-Auth-Token": true,
		"DB_PASSWD": true, "AWS_CREDENTIAL": true, "sessionId": true, "my secret": true, "Token": true,
		"MAX_TOKENS": false, "KEYWORDS": false, "CONFIG": false, "bucket": false, "PATH": false, "PATTERN": false,
		"AUTHOR": false, "SESSIONS": false, "MODEL": false, "": false,
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
		"http://vllm:8000/v1#token=x":       `fragment's parameter "token"`,
		"http://vllm:8000/v1#a=1&api_key=x": `fragment's parameter "api_key"`,
		"http://vllm:8000/v1?api%5Fkey=x":   `parameter "api%5Fkey"`,
		"http://vllm:8000/v1#section-2":     "",
		"http://vllm:8000/v1?max_tokens=5":  "",
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

// The pods pass Pod Security's "restricted" level, as the admission
// plugin's own checks judge it (kubetest.Decode checks every manifest so),
// and with a read-only root filesystem still have a writable HOME and
// TMPDIR: emptyDir volumes, bounded.
func TestPodSecurityRestricted(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, testConfig()); err != nil {
		t.Fatal(err)
	}
	m := kubetest.Decode(t, b.String())
	template := m.Job.Spec.Template
	if refused := kubetest.PodSecurity(t, psa.LevelRestricted, &template); refused != "" {
		t.Fatalf("restricted refuses the pods: %s", refused)
	}
	c := m.Container(t)
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container security context %+v: want a read-only root filesystem", sc)
	}
	if template.Spec.AutomountServiceAccountToken == nil || *template.Spec.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want false: llmrun does not talk to the API", template.Spec.AutomountServiceAccountToken)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range template.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, dir := range []struct{ env, path string }{{"HOME", HomeDir}, {"TMPDIR", TempDir}} {
		if got := kubetest.EnvValue(c.Env, dir.env); got != dir.path {
			t.Errorf("%s %q, want %s", dir.env, got, dir.path)
		}
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dir.path })
		if i < 0 {
			t.Errorf("nothing mounted at %s, the %s of a read-only root", dir.path, dir.env)
			continue
		}
		v := volumes[c.VolumeMounts[i].Name]
		if c.VolumeMounts[i].ReadOnly || v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.String() != ScratchSize {
			t.Errorf("%s: mount %+v of volume %+v, want a writable emptyDir of at most %s", dir.path, c.VolumeMounts[i], v, ScratchSize)
		}
	}

	// The check bites: without the pod's seccomp profile, restricted
	// refuses the pods, naming it.
	template.Spec.SecurityContext.SeccompProfile = nil
	if refused := kubetest.PodSecurity(t, psa.LevelRestricted, &template); !strings.Contains(refused, "seccompProfile") {
		t.Errorf("without a seccomp profile, restricted says %q; want a refusal naming seccompProfile", refused)
	}
}

// The Job stops its pods at its deadline and is deleted a while after it
// finished, both in whole seconds, rounded up; its pods spread over the
// nodes, counting only this run's pods, and still schedule when they
// cannot.
func TestJobLifetimeAndSpread(t *testing.T) {
	c := testConfig()
	c.ActiveDeadline = 90*time.Second + 500*time.Millisecond
	var b bytes.Buffer
	if err := Write(&b, c); err != nil {
		t.Fatal(err)
	}
	m := kubetest.Decode(t, b.String())
	if d := m.Job.Spec.ActiveDeadlineSeconds; d == nil || *d != 91 {
		t.Errorf("activeDeadlineSeconds %v, want 91", kubetest.Deref(d))
	}
	// The longest duration there is does not overflow as it is rounded up.
	c.ActiveDeadline = time.Duration(math.MaxInt64)
	b.Reset()
	if err := Write(&b, c); err != nil {
		t.Fatal(err)
	}
	if d := kubetest.Decode(t, b.String()).Job.Spec.ActiveDeadlineSeconds; d == nil || *d != math.MaxInt64/int64(time.Second)+1 {
		t.Errorf("the longest deadline: activeDeadlineSeconds %v, want %d", kubetest.Deref(d), math.MaxInt64/int64(time.Second)+1)
	}
	if ttl := m.Job.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != 86400 {
		t.Errorf("ttlSecondsAfterFinished %v, want 86400: a day", kubetest.Deref(ttl))
	}
	pod := m.Job.Spec.Template
	spread := pod.Spec.TopologySpreadConstraints
	if len(spread) != 1 || spread[0].TopologyKey != corev1.LabelHostname || spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway ||
		spread[0].MaxSkew != 1 || spread[0].LabelSelector == nil {
		t.Fatalf("topologySpreadConstraints %+v: want one of maxSkew 1 over %s, ScheduleAnyway, with a selector", spread, corev1.LabelHostname)
	}
	selector := spread[0].LabelSelector.MatchLabels
	for k, v := range selector {
		if pod.Labels[k] != v {
			t.Errorf("the spread selects %s=%s, which the pods' labels %v lack", k, v, pod.Labels)
		}
	}
	if selector[instanceLabel] != c.Name {
		t.Errorf("the spread selects %v: want this run's pods only (%s=%s)", selector, instanceLabel, c.Name)
	}
}

func TestLoopbackWarning(t *testing.T) {
	for raw, loopback := range map[string]string{
		"http://127.0.0.1:8000/v1":     "127.0.0.1",
		"http://127.1.2.3:8000":        "127.1.2.3",
		"http://localhost:8000":        "localhost",
		"http://LocalHost.:8000":       "LocalHost.",
		"http://vllm.localhost":        "vllm.localhost",
		"http://[::1]:8000":            "::1",
		"http://0.0.0.0:8000":          "0.0.0.0",
		"http://[::]:8086?bucket=b":    "::",
		"127.0.0.1:18000":              "127.0.0.1", // without a scheme
		"http://vllm.serving:8000":     "",
		"http://10.0.0.7:8000":         "",
		"https://api.example.com/v1":   "",
		"http://localhost.example.com": "",
		"-":                            "",
		"":                             "",
	} {
		got := LoopbackWarning("--base-url "+raw, raw)
		if loopback == "" {
			if got != "" {
				t.Errorf("%q: warned %q", raw, got)
			}
			continue
		}
		for _, want := range []string{"--base-url " + raw + ": " + loopback + " is the loopback", "inside a pod is the pod itself", "Service's name"} {
			if !strings.Contains(got, want) {
				t.Errorf("%q: warning %q, want it to say %q", raw, got, want)
			}
		}
	}
}
