// quickstart.js: 16 concurrent users chat for 15 seconds; every answer is
// exactly 128 tokens long (ignore_eos), so throughput figures compare across
// runs. Run it with:  llmrun run examples/quickstart.js
// (against the built-in simulator, or add --base-url http://host:port).
import llm from 'llm';
import { check } from 'llmrun';

export const options = {
  vus: 16,
  duration: __ENV.DURATION || '15s',
};

const questions = [
  'Explain continuous batching in two paragraphs.',
  'What limits time to first token on a busy inference server?',
  'Write a haiku about KV caches.',
  'Summarise the trade-offs of speculative decoding.',
];

export default function () {
  const r = llm.stream({
    messages: [{ role: 'user', content: questions[__ITER % questions.length] }],
    max_tokens: 128,
    ignore_eos: true,
    temperature: 0,
  });
  check(r, {
    'request succeeded': (r) => r.ok,
    'answer has 128 tokens': (r) => r.outputTokens === 128,
  });
}
