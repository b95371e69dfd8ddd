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
		Env:     map[string]string{"B": "2", "A": "1", "C_LONG": "three"},
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
		`env:A,B,C_LONG true {"A":"1","B":"2","C_LONG":"three"} true false value-e-,value-e-,value-e- true`,
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
			inst := mustInstantiate(t, mustCompile(t, "script.js", describeGlobals+tt.src), InstanceConfig{Env: map[string]string{"A": "1"}})
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
