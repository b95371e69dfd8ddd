package summary_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// forbiddenDeps are what the result document's package must not import,
// directly or not, each with the packages under it: its readers (compare,
// trend, report, merge, the outputs) would inherit the JavaScript runtime,
// the bundler and the engine.
var forbiddenDeps = []string{"github.com/dop251/goja", "github.com/evanw/esbuild",
	"github.com/llmrun/llmrun/runtime/engine", "github.com/llmrun/llmrun/runtime/js", "github.com/llmrun/llmrun/modules"}

// allowedDep is the one package under a forbidden one the document may
// import: modules/metrics, the metric model whose statistics and
// histograms it keeps, imports no JavaScript and nothing else of modules.
const allowedDep = "github.com/llmrun/llmrun/modules/metrics"

// The schema package imports nothing of the engine or JavaScript: what it
// needs of a run, runtime/summarize converts.
func TestImportsNoEngineNorJavaScript(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		for _, bad := range forbiddenDeps {
			if dep != allowedDep && (dep == bad || strings.HasPrefix(dep, bad+"/")) {
				t.Errorf("runtime/summary depends on %s (go list -deps ./runtime/summary); move what needs it to runtime/summarize", dep)
			}
		}
	}
}
