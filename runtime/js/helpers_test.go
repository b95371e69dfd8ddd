package js

import (
	"sync/atomic"
	"testing"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// fakeModule is a Go module whose exports are a function, a number and a
// Go struct with js tags.
type fakeModule struct {
	instances atomic.Int64
}

type fakeInfo struct {
	ModelName string `js:"modelName"`
}

func (fakeInfo) Describe() string { return "fake info" }

type fakeInstance struct{ exports *goja.Object }

func (i fakeInstance) Exports() *goja.Object { return i.exports }

func (m *fakeModule) NewInstance(vu modules.VU) (modules.Instance, error) {
	m.instances.Add(1)
	rt := vu.Runtime()
	exports := rt.NewObject()
	for name, v := range map[string]any{
		"client": func(name string) string { return "client:" + name },
		"answer": 42,
		"info":   fakeInfo{ModelName: "llama"},
	} {
		if err := exports.Set(name, v); err != nil {
			return nil, err
		}
	}
	return fakeInstance{exports}, nil
}

// undefined is a shorthand for the this of tests' function calls.
var undefined = goja.Undefined()

// registry returns a registry of the modules, by name.
func registry(t testing.TB, byName map[string]modules.Module) *modules.Registry {
	t.Helper()
	r := modules.NewRegistry()
	for name, m := range byName {
		if err := r.Register(name, m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func mustCompile(t testing.TB, filename, src string) *Script {
	t.Helper()
	s, err := Compile(filename, []byte(src))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func mustInstantiate(t testing.TB, s *Script, cfg InstanceConfig) *Instance {
	t.Helper()
	if cfg.VU == nil {
		cfg.VU = modulestest.NewVU(t)
	}
	inst, err := s.Instantiate(cfg)
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	return inst
}

func mustCall(t testing.TB, inst *Instance, name string, args ...goja.Value) goja.Value {
	t.Helper()
	fn, ok, err := inst.Function(name)
	if !ok || err != nil {
		t.Fatalf("no exported function %q: %v", name, err)
	}
	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		t.Fatalf("%s(): %v", name, err)
	}
	return v
}
