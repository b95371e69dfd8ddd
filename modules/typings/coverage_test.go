package typings_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/llm/llmjs"
	"github.com/llmrun/llmrun/modules/modulestest"
	"github.com/llmrun/llmrun/modules/standard"
	"github.com/llmrun/llmrun/modules/typings"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A fieldSet is the names the runtime has in one place of the script
// API, and the TypeScript type that declares them.
type fieldSet struct {
	label  string // what the names are, for the failure
	tsType string // the type, in the checking file's names
	names  []string
}

// The declarations declare exactly what the runtime registers: every
// module's exports (its default export's too) and the objects its calls
// return, the result of a real request against the simulator, the option
// fields the 'llm' and 'data' bindings decode, the result file of
// handleSummary's data, and the globals. tsc
// compares each: a name the runtime has and the declarations lack is an
// excess property, one they declare and the runtime lacks is missing.
func TestRuntimeExportsAreDeclared(t *testing.T) {
	registry := scriptModules(t)
	sets := moduleExports(t, registry)
	sets = append(sets, calledObjects(t, registry)...)
	sets = append(sets, goFields()...)
	sets = append(sets, decodedOptions(t)...)

	declared := typings.Declarations()
	if got, want := declaredNames(declared, `(?m)^declare module '([^']+)'`), registry.Names(); !slices.Equal(got, want) {
		t.Errorf("the declarations declare the modules %v; the runtime registers %v", got, want)
	}
	globals := runtimeGlobals(t, registry)
	if got := declaredNames(declared, `(?m)^declare (?:var|function) (\w+)`); !slices.Equal(got, globals) {
		t.Errorf("the declarations declare the globals %v; the runtime defines %v", got, globals)
	}

	var src strings.Builder
	src.WriteString("// The runtime's names, checked against the declarations.\n")
	for _, m := range registry.Names() {
		fmt.Fprintf(&src, "import * as %s from '%s';\nimport %s_default from '%s';\n", ident(m), m, ident(m), m)
	}
	src.WriteString("type Exact<T> = { [K in keyof T]-?: true };\n")
	lines := map[int]string{}
	line := strings.Count(src.String(), "\n")
	for i, s := range sets {
		if len(s.names) == 0 {
			t.Fatalf("%s: the runtime gave no name", s.label)
		}
		props := make([]string, len(s.names))
		for k, n := range s.names {
			props[k] = strconv.Quote(n) + ": true"
		}
		line++
		lines[line] = s.label
		fmt.Fprintf(&src, "export const check%d: Exact<%s> = { %s };\n", i, s.tsType, strings.Join(props, ", "))
	}
	for _, g := range globals {
		line++
		lines[line] = "the global " + g
		fmt.Fprintf(&src, "export type Global_%s = typeof %s;\n", g, g)
	}
	path := filepath.Join(t.TempDir(), "runtime.ts")
	if err := os.WriteFile(path, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := typeCheck(t, []string{path}); !ok {
		t.Errorf("the declarations and the runtime differ (fix llmrun.d.ts):\n%s", labelled(out, lines))
	}
}

// labelled is tsc's output with each diagnostic of the checking file
// preceded by what its line checks.
func labelled(out string, lines map[int]string) string {
	at := regexp.MustCompile(`runtime\.ts\((\d+),\d+\)`)
	var b strings.Builder
	for line := range strings.Lines(out) {
		if m := at.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			fmt.Fprintf(&b, "%s:\n", lines[n])
		}
		b.WriteString(line)
	}
	return b.String()
}

// ident is a module's name as a TypeScript identifier.
func ident(module string) string { return "m_" + strings.ReplaceAll(module, "/", "_") }

// declaredNames are the sorted first groups of pattern's matches.
func declaredNames(text []byte, pattern string) []string {
	var names []string
	for _, m := range regexp.MustCompile(pattern).FindAllSubmatch(text, -1) {
		names = append(names, string(m[1]))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// scriptModules is the registry of a run's modules as the engine makes
// it (engine.jsModules): the 'llm' module, against a simulator, and the
// standard ones.
func scriptModules(t *testing.T) *modules.Registry {
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	llmModule, err := llmjs.NewModule(llm.Config{BaseURL: sim.URL()}, llmjs.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	std := standard.Modules(standard.Options{TextSummary: func([]byte, bool) (string, error) { return "", nil }})
	r := modules.NewRegistry()
	if err := r.Register("llm", llmModule); err != nil {
		t.Fatal(err)
	}
	for _, name := range std.Names() {
		m, _ := std.Lookup(name)
		if err := r.Register(name, m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// moduleExports are each module's exports, as the namespace and as the
// default export, and the keys of the plain objects among them.
func moduleExports(t *testing.T, registry *modules.Registry) []fieldSet {
	var sets []fieldSet
	for _, name := range registry.Names() {
		m, _ := registry.Lookup(name)
		inst, err := m.NewInstance(modulestest.NewVU(t))
		if err != nil {
			t.Fatalf("module %q: %v", name, err)
		}
		exports := inst.Exports()
		keys := exports.Keys()
		sets = append(sets,
			fieldSet{"module '" + name + "': its exports", "typeof " + ident(name), append(slices.Clone(keys), "default")},
			fieldSet{"module '" + name + "': its default export", "typeof " + ident(name) + "_default", keys})
		for _, k := range keys {
			obj, ok := exports.Get(k).(*goja.Object)
			if _, isFunc := goja.AssertFunction(obj); ok && !isFunc {
				sets = append(sets, fieldSet{"module '" + name + "': " + k, "typeof " + ident(name) + "." + k, obj.Keys()})
			}
		}
	}
	return sets
}

// calledObjects are the keys of the objects the modules' calls return,
// made in a VU with every module as a global of its name, a request
// against the simulator among them.
func calledObjects(t *testing.T, registry *modules.Registry) []fieldSet {
	vu := modulestest.NewVU(t)
	for _, name := range registry.Names() {
		m, _ := registry.Lookup(name)
		vu.Expose(strings.ReplaceAll(name, "/", "_"), m)
	}
	sample, err := filepath.Abs(filepath.Join("..", "..", "examples", "data", "sharegpt-sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	vu.SetGlobal("SAMPLE", sample)
	vu.SetGlobal("keys", func(call goja.FunctionCall) goja.Value {
		return vu.Runtime().ToValue(call.Argument(0).ToObject(vu.Runtime()).Keys())
	})
	vu.Run(`var found = {};
const client = llm.client({ tokenizer: 'cl100k_base' });
found['llm.Client'] = keys(client);
found['llm.Conversation'] = keys(llm.conversation());
found['data.Tokenizer'] = keys(data.tokenizer());
const ds = data.dataset(SAMPLE);
found['data.Dataset'] = keys(ds);
found['data.DatasetRecord'] = keys(ds.get(0));
const groups = data.prompts.sharedPrefix({ groups: 2, prefixTokens: 16 });
found['data.SharedPrefix'] = keys(groups);
found['data.SharedPrefixPrompt'] = keys(groups.prompt(4));
found['data.Length'] = keys(data.lengths.fixed(3));
for (const type of ['Counter', 'Gauge', 'Rate', 'Trend']) found['metrics.' + type] = keys(new metrics[type]('my_' + type.toLowerCase()));`)
	vu.LeaveInit()
	// The result of each protocol's request has the keys of all; Ollama's
	// has serverTimings too, a rerank one documents and rerank, and a
	// client with a tokenizer checks the usage (checkTokens, checkSource).
	vu.Run(`const results = [
  client.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }, { text: true, itl: true }),
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 4 } }, { api: 'ollama-chat', itl: true }),
  llm.stream({ query: 'q', documents: ['a', 'b'] }, { api: 'rerank' }),
  llm.stream({ input: 'hi', max_output_tokens: 4 }, { api: 'responses' }), // responseId
];
for (const r of results) if (!r.ok) throw new Error(r.error);
found['llm.Result'] = [...new Set(results.flatMap(keys))];
found['llm.Timings'] = keys(results[0].timings);`)
	var found map[string][]string
	if err := vu.Runtime().ExportTo(vu.Run("found"), &found); err != nil {
		t.Fatal(err)
	}
	var sets []fieldSet
	for _, label := range slices.Sorted(maps.Keys(found)) {
		module, typ, _ := strings.Cut(label, ".")
		sets = append(sets, fieldSet{label + " (made by a call)", ident(module) + "." + typ, found[label]})
	}
	return sets
}

// goFields are the places of the script API that are Go types, each
// property named by its json tag: llm.stream()'s result, built from
// llm.Result's tags (llmjs/jsobject.go), every key included, those a
// request against the simulator leaves out too; and the result file in
// handleSummary's data.llmrun.
func goFields() []fieldSet {
	var sets []fieldSet
	for _, f := range []struct {
		typ    reflect.Type
		tsType string
	}{
		{reflect.TypeFor[llm.Result](), "m_llm.Result"},
		{reflect.TypeFor[llm.Timings](), "m_llm.Timings"},
		{reflect.TypeFor[llm.ToolCall](), "m_llm.ToolCall"},
		{reflect.TypeFor[summary.Summary](), "m_llmrun.ResultFile"},
		{reflect.TypeFor[summary.Meta](), "m_llmrun.Meta"},
		{reflect.TypeFor[summary.Serving](), "m_llmrun.Serving"},
		{reflect.TypeFor[summary.LatencyRow](), "m_llmrun.LatencyRow"},
		{reflect.TypeFor[summary.ErrorCount](), "m_llmrun.MessageCount"},
	} {
		sets = append(sets, fieldSet{f.typ.String() + "'s json tags", f.tsType, jsonNames(f.typ)})
	}
	return sets
}

// jsonNames are the json names of a struct type's fields, less those
// tagged json:"-" or js:"-".
func jsonNames(rt reflect.Type) []string {
	var names []string
	for f := range rt.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jsName, _, _ := strings.Cut(f.Tag.Get("js"), ","); f.IsExported() && name != "-" && name != "" && jsName != "-" {
			names = append(names, name)
		}
	}
	return names
}

// decodedOptions are the option fields the bindings read: the js tags
// of llmjs's option structs, and the names the data module's calls
// accept (its options(call, v, names...)), read from their Go source.
func decodedOptions(t *testing.T) []fieldSet {
	llmTypes := map[string]string{
		"streamOptions":       "m_llm.StreamOptions",
		"clientOptions":       "m_llm.ClientOptions",
		"conversationOptions": "m_llm.ConversationOptions",
		"sessionOptions":      "m_llm.SessionOptions",
		"readTLS#1":           "NonNullable<m_llm.ClientOptions['tls']>",
		"jsRetry#1":           "m_llm.RetryOptions",
		"jsRetry#2":           "NonNullable<m_llm.RetryOptions['backoff']>",
	}
	dataTypes := map[string]string{
		"synthetic#1":    "NonNullable<Parameters<typeof m_data.prompts.synthetic>[1]>",
		"sharedPrefix#1": "Parameters<typeof m_data.prompts.sharedPrefix>[0]",
		"sharedPrefix#2": "NonNullable<Parameters<m_data.SharedPrefix['prompt']>[2]>",
		"uniform#1":      "Parameters<typeof m_data.lengths.uniform>[0]",
		"normal#1":       "Parameters<typeof m_data.lengths.normal>[0]",
		"lognormal#1":    "Parameters<typeof m_data.lengths.lognormal>[0]",
		"dataset#1":      "NonNullable<Parameters<typeof m_data.dataset>[1]>",
		"fromHashIDs#1":  "Parameters<typeof m_data.prompts.fromHashIds>[0]",
		"fromHashIDs#2":  "NonNullable<Parameters<typeof m_data.prompts.fromHashIds>[1]>",

		// images
		"syntheticImages#1": "Parameters<typeof m_data.images.synthetic>[0]",
	}
	var sets []fieldSet
	for _, src := range []struct {
		dir   string
		types map[string]string
		find  func(n ast.Node, add func(names []string))
	}{
		{"../llm/llmjs", llmTypes, jsTagged},
		{"../data", dataTypes, optionsCalls},
	} {
		found := sourceNames(t, src.dir, src.find)
		for _, key := range slices.Sorted(maps.Keys(found)) {
			typ, ok := src.types[key]
			if !ok {
				t.Errorf("%s: %s reads the options %v: name their type in decodedOptions", src.dir, key, found[key])
				continue
			}
			sets = append(sets, fieldSet{src.dir + ": " + key + "'s options", typ, found[key]})
		}
		for key := range src.types {
			if _, ok := found[key]; !ok {
				t.Errorf("%s: no %s reads options any more: remove it from decodedOptions", src.dir, key)
			}
		}
	}
	return sets
}

// sourceNames walks the non-test Go files of dir, and gathers by
// "function#n" (the function's nth find, from 1) or by the struct type's
// name what find adds of each node.
func sourceNames(t *testing.T, dir string, find func(n ast.Node, add func([]string))) map[string][]string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						find(ts.Type, func(names []string) { out[ts.Name.Name] = names })
					}
				}
			case *ast.FuncDecl:
				n := 0
				ast.Inspect(d, func(node ast.Node) bool {
					find(node, func(names []string) {
						n++
						out[fmt.Sprintf("%s#%d", d.Name.Name, n)] = names
					})
					return true
				})
			}
		}
	}
	return out
}

// jsTagged adds the js tags of a struct type's fields, when it has any.
func jsTagged(n ast.Node, add func([]string)) {
	st, ok := n.(*ast.StructType)
	if !ok {
		return
	}
	var names []string
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err != nil {
			continue
		}
		if name, _, _ := strings.Cut(reflect.StructTag(tag).Get("js"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		add(names)
	}
}

// optionsCalls adds the names an in.options(call, v, names...) call
// accepts.
func optionsCalls(n ast.Node, add func([]string)) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "options" || len(call.Args) < 3 {
		return
	}
	var names []string
	for _, arg := range call.Args[2:] {
		if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			name, _ := strconv.Unquote(lit.Value)
			names = append(names, name)
		}
	}
	add(names)
}

// runtimeGlobals are the globals a script's runtime defines beyond
// JavaScript's own, sorted.
func runtimeGlobals(t *testing.T, registry *modules.Registry) []string {
	script, err := js.Compile("globals.js", []byte("export default function () {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	vu := modulestest.NewVU(t)
	if _, err := script.Instantiate(js.InstanceConfig{VU: vu, VUID: 1, Modules: registry}); err != nil {
		t.Fatal(err)
	}
	names := func(rt *goja.Runtime) []string {
		var out []string
		if err := rt.ExportTo(must(rt.RunString("Object.getOwnPropertyNames(globalThis)")), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain := names(goja.New())
	var globals []string
	for _, g := range names(vu.Runtime()) {
		if !slices.Contains(plain, g) {
			globals = append(globals, g)
		}
	}
	slices.Sort(globals)
	return globals
}

func must(v goja.Value, err error) goja.Value {
	if err != nil {
		panic(err)
	}
	return v
}
