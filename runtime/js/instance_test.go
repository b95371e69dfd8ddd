package js

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

func TestModuleImports(t *testing.T) {
	tests := []struct{ name, src string }{
		{"default import", `import fake from 'fake';
export default function () { return [fake.client('a'), fake.answer, fake.info.modelName, fake.info.describe()].join(','); }`},
		{"named imports", `import { client, answer, info } from 'fake';
export default function () { return [client('a'), answer, info.modelName, info.describe()].join(','); }`},
		{"namespace import", `import * as fake from 'fake';
export default function () { return [fake.client('a'), fake.answer, fake.info.modelName, fake.default.info.describe()].join(','); }`},
		{"require", `const fake = require('fake');
module.exports.default = () => [fake.client('a'), fake.answer, fake.info.modelName, fake.info.describe()].join(',');`},
		{"every form at once", `import fake from 'fake';
import { client } from 'fake';
import * as ns from 'fake';
export default function () { return [client('a'), fake.answer, ns.info.modelName, ns.info.describe()].join(','); }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModule{}
			inst := mustInstantiate(t, mustCompile(t, "script.js", tt.src), InstanceConfig{Modules: registry(t, map[string]modules.Module{"fake": m})})
			if got, want := mustCall(t, inst, "default").String(), "client:a,42,llama,fake info"; got != want {
				t.Errorf("default() = %q, want %q", got, want)
			}
			if n := m.instances.Load(); n != 1 {
				t.Errorf("NewInstance called %d times, want once", n)
			}
		})
	}
}

func TestUnknownModule(t *testing.T) {
	// A directory that does not exist, like an embedded script's.
	s := mustCompile(t, "embedded/script.js", "import fake from 'fake';\nimport nope from 'nope';\nexport default function () {}\n")
	_, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t), Modules: registry(t, map[string]modules.Module{"fake": &fakeModule{}, "llm": &fakeModule{}})})
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("Instantiate error = %v, want a *ScriptError", err)
	}
	if want := `Error: unknown module "nope"; the modules are: fake, llm`; se.Message != want {
		t.Errorf("Message = %q, want %q", se.Message, want)
	}
	if se.File != "embedded/script.js" || se.Line != 2 {
		t.Errorf("position = %s:%d, want embedded/script.js:2 (the import)", se.File, se.Line)
	}
}

func TestRequireOutsideInit(t *testing.T) {
	vu := modulestest.NewVU(t)
	inst := mustInstantiate(t, mustCompile(t, "script.js", "export default function () { return require('fake'); }\n"),
		InstanceConfig{VU: vu, Modules: registry(t, map[string]modules.Module{"fake": &fakeModule{}})})
	vu.LeaveInit()
	fn, _, _ := inst.Function("default")
	_, err := fn(undefined)
	if err == nil || !strings.Contains(err.Error(), `module "fake" can only be imported in the init context`) {
		t.Errorf("error = %v, want one saying imports belong in the init context", err)
	}
}

func TestOptionsJSON(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // "" for no options
		wantErr   string
	}{
		{"object", `export const options = { scenarios: { chat: { executor: 'constant-vus', vus: 2, duration: '1m' } }, thresholds: { llm_ttft: ['p(99)<2000'] } };`,
			`{"scenarios":{"chat":{"executor":"constant-vus","vus":2,"duration":"1m"}},"thresholds":{"llm_ttft":["p(99)<2000"]}}`, ""},
		{"computed at init", "export const options = { vus: Number(__ENV.VUS) };", `{"vus":7}`, ""},
		{"none", "export default function () {}", "", ""},
		{"not an object", "export const options = 3;", "", "exported options must be an object"},
		{"not encodable", "export const options = { n: 1n };", "", "encoding exported options"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustInstantiate(t, mustCompile(t, "script.js", tt.src), InstanceConfig{Env: NewEnv(map[string]string{"VUS": "7"}, nil)})
			got, err := inst.OptionsJSON()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if got != nil {
					t.Errorf("OptionsJSON() = %s, want nil", got)
				}
				return
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("OptionsJSON() = %s: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("OptionsJSON() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestGlobals(t *testing.T) {
	s := mustCompile(t, "script.js", `const initVU = __VU;
export default function () {
  let frozen = false;
  try { __ENV.BASE_URL = 'x'; } catch (e) { frozen = e instanceof TypeError; }
  return [__ENV.BASE_URL, Object.keys(__ENV).join('+'), frozen, initVU, __VU, __ITER].join(',');
}
`)
	inst := mustInstantiate(t, s, InstanceConfig{VUID: 3, Env: NewEnv(map[string]string{"BASE_URL": "http://h", "API_KEY": "k"}, nil)})
	tests := []struct {
		vu, iter int64
		want     string
	}{
		{3, 0, "http://h,API_KEY+BASE_URL,true,3,3,0"},
		{3, 1, "http://h,API_KEY+BASE_URL,true,3,3,1"},
		{3, 7, "http://h,API_KEY+BASE_URL,true,3,3,7"},
	}
	for _, tt := range tests {
		inst.SetIteration(tt.iter)
		if got := mustCall(t, inst, "default").String(); got != tt.want {
			t.Errorf("VU %d iteration %d: default() = %q, want %q", tt.vu, tt.iter, got, tt.want)
		}
	}
}

func TestAsync(t *testing.T) {
	s := mustCompile(t, "script.js", `export async function ok() {
  const a = await Promise.resolve(1);
  const b = await new Promise((resolve) => resolve(2));
  return a + b;
}
export async function fails() {
  await null;
  throw new Error('async boom');
}
export function rejects() {
  return Promise.reject('plain reason');
}
export function pending() {
  return new Promise(() => {});
}
`)
	inst := mustInstantiate(t, s, InstanceConfig{})
	if got := mustCall(t, inst, "ok").Export(); got != int64(3) {
		t.Errorf("ok() = %v, want 3", got)
	}

	fn, _, _ := inst.Function("fails")
	_, err := fn(undefined)
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("fails() error = %v, want a *ScriptError", err)
	}
	if se.Message != "Error: async boom" || se.File != "script.js" || se.Line != 8 || se.Column != 9 {
		t.Errorf("fails() error at %s:%d:%d %q, want script.js:8:9 \"Error: async boom\"", se.File, se.Line, se.Column, se.Message)
	}

	fn, _, _ = inst.Function("rejects")
	if _, err := fn(undefined); !errors.As(err, &se) || se.Message != "plain reason" {
		t.Errorf("rejects() error = %v, want a *ScriptError \"plain reason\"", err)
	}

	v := mustCall(t, inst, "pending")
	if p, ok := v.Export().(*goja.Promise); !ok || p.State() != goja.PromiseStatePending {
		t.Errorf("pending() = %v, want the pending promise", v)
	}
}

func TestInterrupt(t *testing.T) {
	vu := modulestest.NewVU(t)
	inst := mustInstantiate(t, mustCompile(t, "script.js", "export default function () {\n  for (let i = 0; ; i++) {}\n}\n"), InstanceConfig{VU: vu})
	stop := errors.New("graceful stop")
	time.AfterFunc(10*time.Millisecond, func() { vu.Runtime().Interrupt(stop) })
	fn, _, _ := inst.Function("default")
	_, err := fn(undefined)
	var interrupted *goja.InterruptedError
	if !errors.As(err, &interrupted) || !errors.Is(err, stop) {
		t.Fatalf("error = %v, want a goja.InterruptedError wrapping the stop", err)
	}
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "graceful stop" || se.Line != 2 {
		t.Errorf("error = %#v, want a ScriptError at script.js:2", se)
	}
}

func TestConcurrentInstances(t *testing.T) {
	s := mustCompile(t, "script.ts", `import fake from 'fake';
export const options = { vus: 50 };
const name: string = 'vu' + __VU;
export default function (): string {
  if (__ITER > 0) throw new Error('iteration ' + __ITER);
  return fake.client(name);
}
`)
	m := &fakeModule{}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for vu := range int64(50) {
		wg.Go(func() {
			inst, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t), VUID: vu, Modules: registry(t, map[string]modules.Module{"fake": m})})
			if err != nil {
				errs <- err
				return
			}
			fn, _, _ := inst.Function("default")
			v, err := fn(undefined)
			if err != nil || v.String() != fmt.Sprintf("client:vu%d", vu) {
				errs <- fmt.Errorf("VU %d: default() = %v, %v", vu, v, err)
			}
			inst.SetIteration(1)
			var se *ScriptError
			if _, err := fn(undefined); !errors.As(err, &se) || se.File != "script.ts" || se.Line != 5 {
				errs <- fmt.Errorf("VU %d: error = %v, want one at script.ts:5", vu, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := m.instances.Load(); n != 50 {
		t.Errorf("NewInstance called %d times, want 50", n)
	}
}
