package main

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's root, two levels above this package.
const repoRoot = "../.."

// The Dockerfile cannot be built here (no registry to pull its bases
// from), so what it promises is checked piece by piece: its build line,
// run as it is, makes a static binary that prints the version given; its
// final stage is a minimal base, runs as a numeric non-root user, and
// starts llmrun; the build context keeps what the build reads. The first
// run compiles everything again (-trimpath has build cache entries of its
// own: minutes on 2 shared cores); later runs take seconds.
func TestDockerfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds llmrun again with -trimpath: no short test runs the Dockerfile's build line (TestHelpAndVersion checks the version printed); the rebuild takes minutes")
	}
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var build, from, user, entrypoint string
	stages := 0
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch word, rest, _ := strings.Cut(line, " "); word {
		case "FROM":
			stages++
			from = rest
		case "USER":
			user = rest
		case "ENTRYPOINT":
			entrypoint = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	if stages < 2 || !regexp.MustCompile(`^(gcr\.io/distroless/static-debian\d+:nonroot|scratch)$`).MatchString(from) {
		t.Errorf("%d stages, the last from %q: want a build stage and a minimal final one", stages, from)
	}
	if !regexp.MustCompile(`^[1-9][0-9]*(:[0-9]+)?$`).MatchString(user) {
		t.Errorf("USER %q: want a numeric user other than root, which runAsNonRoot can check", user)
	}
	var entry []string
	if err := json.Unmarshal([]byte(entrypoint), &entry); err != nil || len(entry) != 1 || filepath.Base(entry[0]) != "llmrun" {
		t.Errorf("ENTRYPOINT %s: want llmrun, in exec form", entrypoint)
	}
	if !strings.HasPrefix(build, "CGO_ENABLED=0 go build") || !strings.Contains(build, "-trimpath") || !strings.Contains(build, "-o /out/llmrun ./cmd/llmrun") {
		t.Fatalf("the build line %q: want CGO_ENABLED=0 go build -trimpath … -o /out/llmrun ./cmd/llmrun", build)
	}

	bin := filepath.Join(t.TempDir(), "llmrun")
	cmd := exec.CommandContext(t.Context(), "sh", "-c", strings.Replace(build, "/out/llmrun", bin, 1))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "VERSION=v9.8.7-docker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build line: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (a %v program header, libraries %v): it would not start on a base without libc", p.Type, libs)
			break
		}
	}
	out, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if first, _, _ := strings.Cut(string(out), "\n"); err != nil || first != "llmrun v9.8.7-docker" {
		t.Errorf("the image's llmrun says %q (%v), want the version given at build", out, err)
	}

	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(ignore)) {
		pattern := strings.TrimPrefix(strings.TrimSpace(line), "/")
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "modules", "runtime", "internal", "scripts"} {
			if ok, _ := filepath.Match(pattern, needed); ok {
				t.Errorf(".dockerignore's %q leaves out %s, which the build reads", pattern, needed)
			}
		}
	}
}
