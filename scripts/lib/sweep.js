// What the stock sweeps share: the request each level sends.
import llm from 'llm';
import { check } from 'llmrun';
import { prompts } from 'data';

// request sends one chat request of exactly inputTokens prompt tokens
// that answers with exactly outputTokens tokens, and checks it succeeded.
export function request(inputTokens, outputTokens) {
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens) }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok });
}
