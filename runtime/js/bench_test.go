package js

import (
	"testing"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

const benchScript = `import llm from 'fake';
import { client } from 'fake';

export const options = {
  scenarios: {
    chat: { executor: 'constant-arrival-rate', rate: 4, timeUnit: '1s', duration: '2m', preAllocatedVUs: 32, exec: 'chat' },
  },
  thresholds: { 'llm_ttft{workload:chat}': ['p(99)<2000'] },
};

interface Turn { role: string; content: string }
const system: Turn = { role: 'system', content: 'You are terse.' };
const c = client(__ENV.BASE_URL ?? 'http://localhost:8000');

export function chat(): void {
  const turns: Turn[] = [system, { role: 'user', content: 'hi ' + __VU }];
  c.length + turns.length;
}

export default chat;
`

// BenchmarkInstantiate measures what a new VU costs the script: a fresh
// goja runtime and Instantiate, which runs the init code with one module.
func BenchmarkInstantiate(b *testing.B) {
	s := mustCompile(b, "script.ts", benchScript)
	cfg := InstanceConfig{
		Modules: registry(b, map[string]modules.Module{"fake": &fakeModule{}}),
		Env:     NewEnv(map[string]string{"BASE_URL": "http://localhost:8000", "API_KEY": "k"}, nil),
	}
	b.ReportAllocs()
	for b.Loop() {
		cfg.VU = modulestest.NewVU(b)
		if _, err := s.Instantiate(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile measures the one-off esbuild transform and goja compile.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("script.ts", []byte(benchScript)); err != nil {
			b.Fatal(err)
		}
	}
}
