package js

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// describeGlobals describes llmrun's globals as a script sees them once it
// has used them.
const describeGlobals = `
function flags(d) {
  return (d.get ? 'get' : 'value') + (d.writable ? 'w' : '-') + (d.enumerable ? 'e' : '-') + (d.configurable ? 'c' : '-');
}
function describeFunction(f) {
  return typeof f + ' ' + JSON.stringify(f.name) + ' ' + f.length + ' ' + (Object.getPrototypeOf(f) === Function.prototype);
}
function describeGlobal(name) {
  const d = Object.getOwnPropertyDescriptor(globalThis, name);
  return name + ':' + flags(d) + (d.get ? '(' + describeFunction(d.get) + ')' : '');
}
function describeConsole() {
  const names = Object.getOwnPropertyNames(console).sort();
  return [
    names.map((k) => k + ':' + flags(Object.getOwnPropertyDescriptor(console, k)) + ' ' + describeFunction(console[k])).join(', '),
    'proto:' + (Object.getPrototypeOf(console) === Object.prototype),
    'symbols:' + Object.getOwnPropertySymbols(console).length,
    'extensible:' + Object.isExtensible(console),
    'same:' + (console.log === console.log) + ',' + (console.log !== console.info),
    'string:' + String(console) + ' ' + JSON.stringify(console),
  ].join(' | ');
}
function describeError(f) {
  try { f(); } catch (e) {
    return [
      String(e), e instanceof Error, Object.getPrototypeOf(e) === Error.prototype, e.constructor === Error,
      Object.prototype.toString.call(e), Object.getOwnPropertyNames(e).join(','), e.stack.split('\n')[0],
    ].join(' | ');
  }
  return 'no error';
}
`

// TestGlobalsAsScriptsSeeThem pins what a script sees of __ENV, __VU,
// __ITER, console, open and require, and of the Errors open and require
// throw, from init code and from an iteration.
func TestGlobalsAsScriptsSeeThem(t *testing.T) {
	s := mustCompile(t, "script.js", describeGlobals+`
const seen = [
  [typeof console, typeof __ENV, typeof open, typeof __VU, typeof __ITER].join(','),
  ['__ENV', '__VU', '__ITER', 'console', 'open'].map(describeGlobal).join(' '),
  // (in an order that varies from run to run)
  Object.getOwnPropertyNames(globalThis).filter((k) => ['__ENV', '__VU', '__ITER', 'console', 'open'].includes(k)).sort().join(','),
  describeConsole(),
  'open:' + describeFunction(open) + ' require:' + describeFunction(require),
  'env:' + Object.keys(__ENV).join(',') + ' ' + Object.isFrozen(__ENV) + ' ' + JSON.stringify(__ENV) + ' ' + Object.isSealed(__ENV) +
    ' ' + Object.isExtensible(__ENV) + ' ' + Object.getOwnPropertyNames(__ENV).map((k) => flags(Object.getOwnPropertyDescriptor(__ENV, k))).join(',') +
    ' ' + (Object.getPrototypeOf(__ENV) === Object.prototype),
  describeError(() => require('nope')),
  describeError(() => open(1, 'x')),
].join('\n');
export function init() { return seen; }
export default function () { return describeConsole(); }
`)
	inst := mustInstantiate(t, s, InstanceConfig{
		Env:     NewEnv(map[string]string{"B": "2", "A": "1", "C_LONG": "three"}, nil),
		Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}}),
	})
	const fn = `function "github.com/llmrun/llmrun/runtime/js.newConsole.func1" 0 true`
	const consoleSeen = "debug:valuewec " + fn + ", error:valuewec " + fn + ", info:valuewec " + fn + ", log:valuewec " + fn + ", warn:valuewec " + fn + ` | proto:true | symbols:0 | extensible:true | same:true,true | string:[object Object] {}`
	want := strings.Join([]string{
		"object,object,function,number,number",
		`__ENV:valuew-c __VU:get---(function "github.com/llmrun/llmrun/runtime/js.(*Instance).setGlobals.func1" 0 true) __ITER:get---(function "github.com/llmrun/llmrun/runtime/js.(*Instance).setGlobals.func1" 0 true) console:valuew-c open:valuew-c`,
		"__ENV,__ITER,__VU,console,open",
		consoleSeen,
		`open:function "github.com/llmrun/llmrun/runtime/js.(*opener).open-fm" 0 true require:function "github.com/llmrun/llmrun/runtime/js.(*requirer).require-fm" 0 true`,
		`env:A,B,C_LONG false {"A":"1","B":"2","C_LONG":"three"} false true valuewec,valuewec,valuewec true`,
		`Error: unknown module "nope"; the modules are: fake | true | true | true | [object Error] | stack,message | Error: unknown module "nope"; the modules are: fake`,
		`Error: open("1"): unknown mode "x"; use 'b' to read bytes | true | true | true | [object Error] | stack,message | Error: open("1"): unknown mode "x"; use 'b' to read bytes`,
	}, "\n")
	if got := mustCall(t, inst, "init").String(); got != want {
		t.Errorf("init code saw:\n%s\nwant:\n%s", got, want)
	}
	if got := mustCall(t, inst, "default").String(); got != consoleSeen {
		t.Errorf("an iteration saw console as:\n%s\nwant:\n%s", got, consoleSeen)
	}
}

// __ENV reads like a frozen object, and refuses changes with a TypeError
// that says how to get a copy a script may change.
func TestEnvIsReadOnly(t *testing.T) {
	const copyFirst = " of __ENV (copy it first: const env = { ...__ENV })"
	tests := []struct{ name, src, want string }{
		{"read", "export default () => [__ENV.A, __ENV.NONE, 'A' in __ENV, 'NONE' in __ENV, __ENV['B_2']].join(',');", "1,,true,false,two"},
		{"enumerated", "export default () => [Object.keys(__ENV), Object.values(__ENV), JSON.stringify(__ENV)].join(' ');", `A,B_2 1,two {"A":"1","B_2":"two"}`},
		{"copied", "const env = { ...__ENV }; env.A = 'mine'; env.C = 'new';\nexport default () => [env.A, env.C, __ENV.A, Object.keys(env)].join(',');", "mine,new,1,A,B_2,C"},
		{"assigned", "export default () => { try { __ENV.A = 'x'; } catch (e) { return String(e) + ' ' + __ENV.A; } };", "TypeError: Cannot assign to read only property 'A'" + copyFirst + " 1"},
		{"added", "export default () => { try { __ENV.NEW = 'x'; } catch (e) { return e.name + ' ' + ('NEW' in __ENV); } };", "TypeError false"},
		{"deleted", "export default () => { try { delete __ENV.A; } catch (e) { return String(e) + ' ' + __ENV.A; } };", "TypeError: Cannot delete property 'A'" + copyFirst + " 1"},
		{"deleted absent", "export default () => String(delete __ENV.NONE);", "true"},
		{"redefined", "export default () => { try { Object.defineProperty(__ENV, 'A', { value: 'x' }); } catch (e) { return e.name + ' ' + __ENV.A; } };", "TypeError 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := NewEnv(map[string]string{"A": "1", "B_2": "2"}, map[string]string{"B_2": "two"})
			inst := mustInstantiate(t, mustCompile(t, "script.js", tt.src), InstanceConfig{Env: env})
			if got := mustCall(t, inst, "default").String(); got != tt.want {
				t.Errorf("default() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A script may assign, redefine or delete the globals llmrun defines,
// before or after it has used them.
func TestGlobalsReplaced(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"assigned unused", "console = 'mine'; __ENV = 'env'; open = 'o';\nexport default () => [console, __ENV, open, describeGlobal('console'), describeGlobal('__ENV'), describeGlobal('open')].join(' ');",
			"mine env o console:valuew-c __ENV:valuew-c open:valuew-c"},
		{"assigned used", "const log = console.log; console = 'mine';\nexport default () => [console, typeof log].join(' ');", "mine function"},
		{"deleted", "delete globalThis.console; delete globalThis.__ENV;\nexport default () => [typeof console, typeof __ENV, 'console' in globalThis].join(' ');", "undefined undefined false"},
		{"redefined", "Object.defineProperty(globalThis, 'console', { value: 7, writable: true, enumerable: true, configurable: true });\nexport default () => [console, describeGlobal('console')].join(' ');", "7 console:valuewec"},
		{"redefined after use", "export const c = console; Object.defineProperty(globalThis, 'console', { value: 7, enumerable: true });\nexport default () => [console, describeGlobal('console')].join(' ');", "7 console:valuewec"},
		{"frozen global object", "Object.freeze(globalThis); const ok = typeof console.log;\nlet err; try { console = 1; } catch (e) { err = e.constructor.name; }\nexport default () => [ok, err, typeof console].join(' ');", "function TypeError object"},
		{"read through globalThis", "const c = globalThis.console;\nexport default () => [c === console, c.log === console.log, describeGlobal('console')].join(' ');", "true true console:valuew-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustInstantiate(t, mustCompile(t, "script.js", describeGlobals+tt.src), InstanceConfig{Env: NewEnv(map[string]string{"A": "1"}, nil)})
			if got := mustCall(t, inst, "default").String(); got != tt.want {
				t.Errorf("default() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The error a failing require() throws in init code, as the engine
// reports it: message, position, source line and stack.
func TestRequireErrorReport(t *testing.T) {
	s := mustCompile(t, "script.js", "import fake from 'fake';\nfunction load() { return require('nope'); }\nexport const x = load();\nexport default function () { return fake; }\n")
	_, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t), Modules: registry(t, map[string]modules.Module{"fake": orderedModule{}})})
	want := "script.js:2:26: Error: unknown module \"nope\"; the modules are: fake\n 2 | function load() { return require('nope'); }\n   |                          ^\n\tat load (script.js:2:26)\n\tat script.js:3:18"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// A name imported from a Go module that does not export it fails at the
// import, saying what the module exports; a namespace import reads an
// absent name as undefined, as ES modules do.
func TestNamedImportOfNoExport(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"absent", "import { nothing } from 'fake';\nexport default () => nothing();\n",
			"script.js:1:25: Error: module 'fake' has no export 'nothing'; it exports: answer, client, info"},
		{"absent beside a default import", "import fake, { client, nothing as none } from 'fake';\nexport default () => [fake, client, none()];\n",
			"script.js:1:47: Error: module 'fake' has no export 'nothing'; it exports: answer, client, info"},
		{"exported", "import { client, answer as a } from 'fake';\nexport default () => client('x') + a;\n", ""},
		{"namespace", "import * as fake from 'fake';\nexport default () => typeof fake.nothing;\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, "script.js", tc.src)
			_, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t), Modules: registry(t, map[string]modules.Module{"fake": &fakeModule{}})})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("error:\n%v\nwant it to start with:\n%s", err, tc.want)
			}
		})
	}
}

// Reading a variable of __ENV again allocates nothing: each VU makes a
// variable's value once.
func TestEnvReadAgainAllocatesNothing(t *testing.T) {
	inst := mustInstantiate(t, mustCompile(t, "script.js", "export default () => __ENV.MODEL;"),
		InstanceConfig{Env: NewEnv(map[string]string{"MODEL": "llama"}, nil)})
	mustCall(t, inst, "default")
	if got := mustCall(t, inst, "default").String(); got != "llama" {
		t.Fatalf("default() = %q", got)
	}
	env := inst.rt.Get("__ENV").ToObject(inst.rt)
	if allocs := testing.AllocsPerRun(100, func() { env.Get("MODEL") }); allocs != 0 {
		t.Errorf("a read of __ENV.MODEL again: %v allocations, want 0", allocs)
	}
}
