// serving-point: one serving point — CONCURRENCY users each sending one
// request after another for DURATION, with prompts of INPUT_TOKENS and
// answers of exactly OUTPUT_TOKENS (ignore_eos, temperature 0).
//
//   llmrun run stock:serving-point -e CONCURRENCY=32 -e DURATION=2m \
//     -e INPUT_TOKENS=512 -e OUTPUT_TOKENS=256 --base-url http://127.0.0.1:8000
//
// Prompts repeat " the", one token in common BPE vocabularies, so their
// length in tokens is close to INPUT_TOKENS on most servers; the summary
// shows the prompt tokens the server counted.
import llm from 'llm';
import { check } from 'llmrun';

const concurrency = Number(__ENV.CONCURRENCY || 8);
const inputTokens = Number(__ENV.INPUT_TOKENS || 256);
const outputTokens = Number(__ENV.OUTPUT_TOKENS || 128);

export const options = {
  scenarios: {
    serving: {
      executor: 'constant-vus',
      vus: concurrency,
      duration: __ENV.DURATION || '30s',
      tags: { concurrency: String(concurrency) },
    },
  },
};

const prompt = 'Repeat after me:' + ' the'.repeat(Math.max(inputTokens - 4, 1));

export default function () {
  const r = llm.stream({
    messages: [{ role: 'user', content: prompt }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  });
  check(r, {
    'request succeeded': (r) => r.ok,
    'answer has OUTPUT_TOKENS tokens': (r) => r.outputTokens === outputTokens,
  });
}
