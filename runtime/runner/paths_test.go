package runner_test

import (
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/kube/kuberun"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/runner"
)

// serverCA is the PEM of the certificate of a TLS test server: a CA a
// client can be told to trust.
func serverCA(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// TestScriptPaths loads, as a run does, scripts that name a file by a
// relative path through each API that reads one, from a working directory
// that is not the script's: the file beside the script is read; one only
// in the working directory is read with one deprecation warning; a
// missing one is an error naming both places; a stock script's paths,
// and a path typed on the command line (-e P=PATH), are the working
// directory's, without a warning.
func TestScriptPaths(t *testing.T) {
	tokenizerJSON, err := os.ReadFile("../../internal/tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	apis := []struct {
		name, file, content string
		// src names the file as PATH, twice (the second read warns no
		// more).
		src string
		// formerlyWorkDir: the API read the working directory alone
		// before the rule, so a file there besides the script's is the
		// one it read, which a warning names.
		formerlyWorkDir bool
	}{
		{"open", "notes.txt", "hi", "open(PATH); open(PATH);", false},
		{"dataset", "prompts.jsonl", `{"prompt": "hi"}` + "\n", "import { dataset } from 'data';\ndataset(PATH); dataset(PATH);", false},
		{"config.load", "bench.yaml", "levels: [1]\n", "import { load } from 'llmrun/config';\nload(PATH); load(PATH);", true},
		{"tls.caFile", "ca.pem", serverCA(t),
			"import llm from 'llm';\nllm.client({ baseURL: 'https://127.0.0.1:9/v1', tls: { caFile: PATH } });\nllm.client({ baseURL: 'https://127.0.0.1:9/v1', tls: { caFile: PATH } });", true},
		{"data tokenizer", "tok.json", string(tokenizerJSON), "import { tokenizer } from 'data';\ntokenizer(PATH); tokenizer(PATH);", false},
		{"llm.client tokenizer", "tok.json", string(tokenizerJSON), "import llm from 'llm';\nllm.client({ tokenizer: PATH }); llm.client({ tokenizer: PATH });", true},
	}
	places := []pathPlace{
		{name: "beside the script", beside: true},
		{name: "beside the script and in the working directory", beside: true, inCWD: true},
		{name: "in the working directory only", inCWD: true, warns: true},
		{name: "nowhere", wantErr: true},
		{name: "stock script, the working directory", inCWD: true, stock: true},
		{name: "typed on the command line, the working directory", inCWD: true, typed: true},
		{name: "typed on the command line, beside the script", beside: true, typed: true},
	}
	for _, api := range apis {
		for _, place := range places {
			t.Run(api.name+"/"+place.name, func(t *testing.T) {
				root := t.TempDir()
				work, project := filepath.Join(root, "work"), filepath.Join(root, "project")
				for dir, put := range map[string]bool{work: place.inCWD, project: place.beside} {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if put {
						if err := os.WriteFile(filepath.Join(dir, api.file), []byte(api.content), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				script := filepath.Join(project, "bench.js")
				named := "'" + api.file + "'"
				if place.typed {
					named = "__ENV.P"
				}
				src := strings.ReplaceAll(api.src, "PATH", named) + "\nexport default function () {}\n"
				if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Chdir(work)

				var logs strings.Builder
				var read kuberun.FilesRead
				cfg := engine.Config{ScriptPath: script, Logger: slog.New(slog.NewTextHandler(&logs, nil)), FileRead: read.Add}
				if place.typed {
					cfg.Env = map[string]string{"P": api.file}
				}
				if place.stock {
					cfg.ScriptPath, cfg.Source = "stock:paths", []byte(src)
				}
				llmconfig.Placeholder(&cfg.LLM)
				_, _, err := runner.Load(t.Context(), cfg, nil)
				if place.wantErr {
					want := "no such file: looked for " + filepath.Join(project, api.file) + " (relative to the script's directory) and " +
						api.file + " (relative to the working directory, " + work + ")"
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("error %v, want one containing %q", err, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				warning, found := place.expect(api.file, api.formerlyWorkDir, work, project)
				warnings := strings.Count(logs.String(), "level=WARN")
				switch {
				case warning != "" && (warnings != 1 || !strings.Contains(logs.String(), warning)):
					t.Errorf("logs %q, want one warning containing %q", logs.String(), warning)
				case warning == "" && warnings != 0:
					t.Errorf("logs %q, want no warning", logs.String())
				}
				if files := read.List(); !slices.Contains(files, found) {
					t.Errorf("FileRead told %q, want %s among them (the files shipped to kube)", files, found)
				}
			})
		}
	}
}

// pathPlace is where TestScriptPaths puts the file a script names, and
// how the script names it.
type pathPlace struct {
	name          string
	beside, inCWD bool
	stock         bool
	// typed says that the path reaches the script from the command line,
	// as -e P=PATH.
	typed   bool
	warns   bool
	wantErr bool
}

// expect is the warning (a part of it; "" for none) and the file found
// when a script in project run from work names file from p, through an
// API that read the working directory alone before the rule when
// formerlyWorkDir.
func (p pathPlace) expect(file string, formerlyWorkDir bool, work, project string) (warning, found string) {
	inWork, inProject := filepath.Join(work, file), filepath.Join(project, file)
	switch {
	case p.warns:
		return file + " was found relative to the working directory (" + inWork + "), not to the script's directory", file
	case p.inCWD && (!p.beside || p.typed):
		return "", file
	case p.inCWD && formerlyWorkDir:
		return "reads " + inProject + ", relative to the script's directory; before this version it read " + inWork, inProject
	}
	return "", inProject
}
