package js

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// orderedModule is a Go module whose exports are set in a fixed order, so
// that the order a script sees them in can be pinned.
type orderedModule struct{}

func (orderedModule) NewInstance(vu modules.VU) (modules.Instance, error) {
	rt := vu.Runtime()
	exports := rt.NewObject()
	for _, kv := range []struct {
		name  string
		value any
	}{{"client", func(name string) string { return "client:" + name }}, {"answer", 42}, {"label", "fake"}} {
		if err := exports.Set(kv.name, kv.value); err != nil {
			return nil, err
		}
	}
	return fakeInstance{exports}, nil
}

// describeObjects is a script function that describes objects as a script
// sees them: each own property's descriptor, in order, and the prototype.
const describeObjects = `
function describeProp(o, k) {
  const d = Object.getOwnPropertyDescriptor(o, k);
  const flags = (d.enumerable ? 'e' : '-') + (d.configurable ? 'c' : '-');
  if (d.get) {
    return k + ':get(' + typeof d.get + ' ' + JSON.stringify(d.get.name) + ' ' + d.get.length + ' ' + (d.set === undefined) + ' ' + JSON.stringify(String(d.get)) + ')' + flags;
  }
  const v = typeof d.value === 'function' ? 'function' : JSON.stringify(d.value);
  return k + ':' + v + (d.writable ? 'w' : '-') + flags;
}
export function describe(o) {
  const getters = Object.getOwnPropertyNames(o).map((k) => Object.getOwnPropertyDescriptor(o, k).get).filter(Boolean);
  return [
    Object.getOwnPropertyNames(o).map((k) => describeProp(o, k)).join(' '),
    'symbols:' + Object.getOwnPropertySymbols(o).length,
    'keys:' + Object.keys(o).join(','),
    'forin:' + (() => { const ks = []; for (const k in o) ks.push(k); return ks.join(','); })(),
    'proto:' + (Object.getPrototypeOf(o) === Object.prototype ? 'Object.prototype' : String(Object.getPrototypeOf(o))),
    'extensible:' + Object.isExtensible(o),
    'distinct getters:' + (new Set(getters).size === getters.length),
  ].join(' | ');
}
`

// TestImportInterop pins what a script sees of the objects esbuild's
// interop helpers build: namespace imports of Go modules and of the
// script's own files, re-exports, and the script's exports as the engine
// reads them (live bindings through getters).
func TestImportInterop(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"lib.js": "export const greeting = 'hi';\nexport let count = 0;\nexport function bump() { count++; }\nexport default 'lib default';\n",
	})
	s := mustCompile(t, filepath.Join(dir, "script.js"), `import fake from 'fake';
import * as ns from 'fake';
import { answer } from 'fake';
import * as lib from './lib.js';
export * from 'fake';
export const options = { vus: 1 };
export let counter = 0;
export function bump() { counter++; lib.bump(); }
export default function () { return [fake === ns.default, fake.answer, answer, ns.label, lib.greeting, lib.count].join(','); }
export function namespaces() { return [describe(ns), describe(lib)].join('\n'); }
`+describeObjects)
	inst := mustInstantiate(t, s, InstanceConfig{Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}})})
	if got, want := mustCall(t, inst, "default").String(), "true,42,42,fake,hi,0"; got != want {
		t.Errorf("default() = %q, want %q", got, want)
	}
	wantNamespaces := `default:{"answer":42,"label":"fake"}-e- client:get(function "get" 0 true "() => from[key]")e- answer:get(function "get" 0 true "() => from[key]")e- label:get(function "get" 0 true "() => from[key]")e- | symbols:0 | keys:default,client,answer,label | forin:default,client,answer,label | proto:Object.prototype | extensible:true | distinct getters:true
bump:get(function "bump" 0 true "() => bump")e- count:get(function "count" 0 true "() => count")e- default:get(function "default" 0 true "() => lib_default")e- greeting:get(function "greeting" 0 true "() => greeting")e- | symbols:0 | keys:bump,count,default,greeting | forin:bump,count,default,greeting | proto:Object.prototype | extensible:true | distinct getters:true`
	if got := mustCall(t, inst, "namespaces").String(); got != wantNamespaces {
		t.Errorf("namespaces:\n%s\nwant\n%s", got, wantNamespaces)
	}
	wantExports := `__esModule:true--- bump:get(function "get" 0 true "() => from[key]")e- counter:get(function "get" 0 true "() => from[key]")e- default:get(function "get" 0 true "() => from[key]")e- describe:get(function "get" 0 true "() => from[key]")e- namespaces:get(function "get" 0 true "() => from[key]")e- options:get(function "get" 0 true "() => from[key]")e- client:get(function "get" 0 true "() => from[key]")e- answer:get(function "get" 0 true "() => from[key]")e- label:get(function "get" 0 true "() => from[key]")e- | symbols:0 | keys:bump,counter,default,describe,namespaces,options,client,answer,label | forin:bump,counter,default,describe,namespaces,options,client,answer,label | proto:Object.prototype | extensible:true | distinct getters:true`
	if got := mustCall(t, inst, "describe", inst.Exports()).String(); got != wantExports {
		t.Errorf("exports:\n%s\nwant\n%s", got, wantExports)
	}
	// The exports are live bindings: the engine reads their current values.
	mustCall(t, inst, "bump")
	for name, want := range map[string]int64{"counter": 1, "answer": 42} {
		v, err := inst.Export(name)
		if err != nil || v.ToInteger() != want {
			t.Errorf("Export(%q) = %v, %v; want %d", name, v, err, want)
		}
	}
	if got := mustCall(t, inst, "default").String(); got != "true,42,42,fake,hi,1" {
		t.Errorf("default() after bump() = %q, want the namespace's live count", got)
	}
	if _, ok := goja.AssertFunction(inst.Exports().Get("client")); !ok {
		t.Error("the re-exported client is not a function")
	}
}

// bundle is esbuild's output for a script.
func bundle(t *testing.T, filename, src string) string {
	t.Helper()
	res := api.Build(buildOptions(filename, t.TempDir(), []byte(src)))
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	code, _, err := bundleOutputs(res.OutputFiles)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// TestCheaperInteropApplies checks that esbuild writes its interop helpers
// as cheaperInterop expects (an esbuild upgrade that changes them fails
// here, not silently in every VU's memory), and that the rewrite keeps the
// lines the source map counts.
func TestCheaperInteropApplies(t *testing.T) {
	code := bundle(t, "script.js", "import llm from 'llm';\nimport * as m from 'metrics';\nexport const options = {};\nexport default function () { llm.stream(m.x); }\n")
	cheaper := cheaperInterop(code)
	for _, r := range helperRewrites {
		if !strings.Contains(code, r.esbuild) || !strings.Contains(cheaper, r.cheaper) {
			t.Errorf("esbuild's helper is not as expected, or was not rewritten:\n%s", r.esbuild)
		}
		if strings.Count(r.esbuild, "\n") != strings.Count(r.cheaper, "\n") {
			t.Errorf("the rewrite changes the number of lines:\n%s", r.cheaper)
		}
	}
	if !strings.Contains(cheaper, "\nvar import_llm ={default:require(\"llm\")};\n") || !strings.Contains(cheaper, "\nvar m = __toESM(require(\"metrics\"));\n") {
		t.Errorf("the default import of llm keeps its namespace object, or the namespace import of metrics lost it:\n%s", cheaper)
	}
	for _, left := range []string{" of __getOwnPropNames(", " in all)", "Object.create", "hasOwnProperty"} {
		if strings.Contains(cheaper, left) {
			t.Errorf("the bundle still has %q:\n%s", left, cheaper)
		}
	}
	if strings.Count(code, "\n") != strings.Count(cheaper, "\n") {
		t.Errorf("the rewrite changed the number of lines:\n%s", cheaper)
	}
	// With default imports alone, __toESM and the builtin it takes go.
	code = bundle(t, "script.js", "import llm from 'llm';\nexport default function () { llm.stream(); }\n")
	cheaper = cheaperInterop(code)
	for _, d := range unusedDeclarations {
		if declared := "\nvar " + d.name + " = "; !strings.Contains(code, declared) || strings.Contains(cheaper, declared) {
			t.Errorf("the declaration of %s was not left out:\n%s", d.name, cheaper)
		}
	}
	if strings.Count(code, "\n") != strings.Count(cheaper, "\n") {
		t.Errorf("the rewrite changed the number of lines:\n%s", cheaper)
	}
}

// A script that takes a helper's name makes esbuild rename the helper:
// its bundle keeps esbuild's own helpers, and works.
func TestInteropWithoutTheRewrite(t *testing.T) {
	s := mustCompile(t, "script.js", `import fake from 'fake';
import * as ns from 'fake';
const __getOwnPropNames = 'mine';
export default function () { return [fake.answer, ns.label, __getOwnPropNames].join(','); }
`)
	inst := mustInstantiate(t, s, InstanceConfig{Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}})})
	if got := mustCall(t, inst, "default").String(); got != "42,fake,mine" {
		t.Errorf("default() = %q", got)
	}
	if got := cheaperInterop("var __export = 1;\n// script.js\n"); got != "var __export = 1;\n// script.js\n" {
		t.Errorf("a bundle without esbuild's helpers was changed: %q", got)
	}
}

// A namespace import of a CommonJS file keeps its exports' prototype,
// null included, and esbuild's default: the whole module.exports.
func TestNamespaceOfACommonJSFile(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"bare.cjs":  "module.exports = Object.assign(Object.create(null), { a: 1 });\n",
		"plain.cjs": "exports.b = 2;\n",
	})
	s := mustCompile(t, filepath.Join(dir, "script.js"), `import * as bare from './bare.cjs';
import * as plain from './plain.cjs';
export default function () {
  return [Object.getPrototypeOf(bare) === null, bare.a, bare.default.a, Object.keys(bare).join('+'), describe(bare),
    Object.getPrototypeOf(plain) === Object.prototype, plain.b, Object.keys(plain).join('+')].join(' ');
}
`+describeObjects)
	want := `true 1 1 default+a default:{"a":1}-e- a:get(function "get" 0 true "() => from[key]")e- | symbols:0 | keys:default,a | forin:default,a | proto:null | extensible:true | distinct getters:true true 2 default+b`
	if got := mustCall(t, mustInstantiate(t, s, InstanceConfig{}), "default").String(); got != want {
		t.Errorf("default() =\n%s\nwant\n%s", got, want)
	}
}

// A default import of a module that does not exist fails where the
// script imports it.
func TestDefaultImportErrorReport(t *testing.T) {
	for _, src := range []string{
		"import fake from 'fake';\nimport nope from 'nope';\nexport default function () { return [fake, nope]; }\n",
		"import fake from 'fake';\nimport * as nope from 'nope';\nexport default function () { return [fake, nope]; }\n",
	} {
		_, err := mustCompile(t, "script.js", src).Instantiate(InstanceConfig{VU: modulestest.NewVU(t), Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}})})
		line := strings.Split(src, "\n")[1]
		col := strconv.Itoa(strings.Index(line, "'nope'") + 1)
		want := "script.js:2:" + col + ": Error: unknown module \"nope\"; the modules are: fake\n 2 | " + line + "\n   | " + strings.Repeat(" ", strings.Index(line, "'nope'")) + "^\n\tat script.js:2:" + col
		if err == nil || err.Error() != want {
			t.Errorf("error:\n%v\nwant:\n%s", err, want)
		}
	}
}

// Only a Go module's namespace object that the bundle reads as .default
// alone, a default import's, is rewritten; what else the script imports
// from the module keeps it, and so does every import form's behaviour.
func TestDefaultOnlyImports(t *testing.T) {
	tests := []struct {
		name, filename, src string
		rewritten           bool
	}{
		{"default import", "script.js", "import fake from 'fake';\nexport default () => [fake.answer, fake.label].join();\n", true},
		{"default import in an ES module file", "script.mjs", "import fake from 'fake';\nexport default () => [fake.answer, fake.label].join();\n", true},
		{"default and named", "script.js", "import fake, { label } from 'fake';\nexport default () => [fake.answer, label].join();\n", false},
		{"namespace", "script.js", "import * as fake from 'fake';\nexport default () => [fake.answer, fake.default.label].join();\n", false},
		{"namespace read as default only", "script.js", "import * as fake from 'fake';\nexport default () => [fake.default.answer, fake.default.label].join();\n", true},
		{"named only", "script.js", "import { answer, label } from 'fake';\nexport default () => [answer, label].join();\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := bundle(t, tt.filename, tt.src)
			if rewritten := strings.Contains(cheaperInterop(code), " ={default:require("); rewritten != tt.rewritten {
				t.Errorf("rewritten = %v, want %v:\n%s", rewritten, tt.rewritten, cheaperInterop(code))
			}
			s := mustCompile(t, tt.filename, tt.src)
			inst := mustInstantiate(t, s, InstanceConfig{Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}})})
			if got := mustCall(t, inst, "default").String(); got != "42,fake" {
				t.Errorf("default() = %q", got)
			}
		})
	}
	for _, code := range []string{
		"import_fake.default; var import_fake = __toESM(require(\"fake\"));\n",
		"var import_fake = __toESM(require(\"fake\"));\nf(import_fake);\n",
		"var import_fake = __toESM(require(\"fake\"));\nimport_fake.defaults;\n",
		"var import_fake = __toESM(require(\"./fake.js\"));\nimport_fake.default;\n",
	} {
		if got := defaultOnlyImports(code); got != code {
			t.Errorf("rewritten: %q", got)
		}
	}
	if got, want := defaultOnlyImports("var import_fake = __toESM(require(\"fake\"));\nmy_import_fake(import_fake.default, import_fake2);\n"),
		"var import_fake ={default:require(\"fake\")};\nmy_import_fake(import_fake.default, import_fake2);\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The engine reads the script's exports, export by export, from its
// namespace object when nothing in the bundle but esbuild's line names
// module (namespaceExports): the same exports, live. A script that names
// module sees module.exports as esbuild makes it.
func TestNamespaceExports(t *testing.T) {
	const exports = "export const options = { vus: 2 };\nexport let counter = 0;\nexport function bump() { counter++; }\nexport default function () { return counter; }\n"
	tests := []struct {
		name, src string
		rewritten bool
		seen      string
	}{
		{"module not named", exports, true, ""},
		{"module named", exports + "export function seen() { return [module.exports.__esModule, Object.getOwnPropertyNames(module.exports), typeof Object.getOwnPropertyDescriptor(module.exports, 'bump').get].join(' '); }\n",
			false, "true __esModule,bump,counter,default,options,seen function"},
		{"module named before", "const m = typeof module;\n" + exports + "export function seen() { return m; }\n", false, "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if rewritten := strings.Contains(cheaperInterop(bundle(t, "script.js", tt.src)), "\nmodule.exports = script_exports;\n"); rewritten != tt.rewritten {
				t.Errorf("rewritten = %v, want %v", rewritten, tt.rewritten)
			}
			inst := mustInstantiate(t, mustCompile(t, "script.js", tt.src), InstanceConfig{})
			if b, err := inst.OptionsJSON(); err != nil || string(b) != `{"vus":2}` {
				t.Errorf("OptionsJSON() = %s, %v", b, err)
			}
			mustCall(t, inst, "bump")
			if v, err := inst.Export("counter"); err != nil || v.ToInteger() != 1 {
				t.Errorf("Export(counter) after bump() = %v, %v; want the live 1", v, err)
			}
			if v, err := inst.Export("nope"); err != nil || !goja.IsUndefined(v) {
				t.Errorf("Export(nope) = %v, %v; want undefined", v, err)
			}
			if got := mustCall(t, inst, "default").ToInteger(); got != 1 {
				t.Errorf("default() = %d", got)
			}
			if tt.seen != "" {
				if got := mustCall(t, inst, "seen").String(); got != tt.seen {
					t.Errorf("seen() = %q, want %q", got, tt.seen)
				}
			}
		})
	}
}

// A namespace object has the exports of any name, __proto__ and
// integer-like ones included, in the order of an object's keys, with its
// prototype Object.prototype: __export copies them onto an object without
// a prototype before it walks them with for-in.
func TestNamespaceOfOddExportNames(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"lib.js": "const a = 1, b = 2, c = 3;\nexport { c as z, a as \"__proto__\", b as \"0\" };\n",
	})
	s := mustCompile(t, filepath.Join(dir, "script.js"), "import * as lib from './lib.js';\nexport default function () { return [lib['__proto__'], lib[0], lib.z, describe(lib)].join(' | '); }\n"+describeObjects)
	want := `1 | 2 | 3 | 0:get(function "0" 0 true "() => b")e- __proto__:get(function "__proto__" 0 true "() => a")e- z:get(function "z" 0 true "() => c")e- | symbols:0 | keys:0,__proto__,z | forin:0,__proto__,z | proto:Object.prototype | extensible:true | distinct getters:true`
	if got := mustCall(t, mustInstantiate(t, s, InstanceConfig{}), "default").String(); got != want {
		t.Errorf("default() =\n%s\nwant\n%s", got, want)
	}
}
