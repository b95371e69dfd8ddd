// typescript.ts: scenarios may be TypeScript; types are checked by your
// editor, stripped by llmrun. Two concurrent scenarios with their own
// functions and tags, a custom metric and a setup() whose result every
// iteration receives.
//   llmrun run examples/typescript.ts
import llm from 'llm';
import { check, group } from 'llmrun';
import { Trend } from 'metrics';

interface Setup {
  systemPrompt: string;
}

export const options = {
  scenarios: {
    chat: { executor: 'constant-vus', vus: 4, duration: __ENV.DURATION || '10s', exec: 'chat', tags: { workload: 'chat' } },
    summarise: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'summarise', tags: { workload: 'summarise' } },
  },
};

const answerWords = new Trend('answer_words');

export function setup(): Setup {
  return { systemPrompt: 'You are a concise assistant.' };
}

export function chat(data: Setup): void {
  const r = llm.stream(
    {
      messages: [
        { role: 'system', content: data.systemPrompt },
        { role: 'user', content: 'Name three uses of a KV cache.' },
      ],
      max_tokens: 64,
    },
    { text: true },
  );
  answerWords.add(r.text.split(/\s+/).filter((w: string) => w.length > 0).length);
  check(r, { 'chat ok': (res) => res.ok });
}

export function summarise(data: Setup): void {
  group('long document', () => {
    const r = llm.stream({
      messages: [
        { role: 'system', content: data.systemPrompt },
        { role: 'user', content: 'Summarise: ' + 'lorem ipsum '.repeat(500) },
      ],
      max_tokens: 128,
      ignore_eos: true,
    });
    check(r, { 'summary ok': (res) => res.ok, 'summary complete': (res) => res.outputTokens === 128 });
  });
}
