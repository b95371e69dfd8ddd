// chat.js: chat traffic. Short prompts with a long tail (log-normal, median
// about 120 tokens), medium answers (log-normal around 250 tokens), and
// requests arriving as a Poisson process: independent users, not a fixed
// pool of loops. Every prompt is synthesized to an exact token count, and
// every answer is exactly as long as asked (ignore_eos).
//
//   llmrun run examples/chat.js                      # the built-in simulator
//   llmrun run examples/chat.js --base-url http://gpu-box:8000 -e RATE=20
//
// Parameters: RATE (requests/s, default 8), DURATION (default 1m).
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

export const options = {
  scenarios: {
    chat: {
      executor: 'constant-arrival-rate',
      arrival: 'poisson',
      rate: Number(__ENV.RATE || 8),
      duration: __ENV.DURATION || '1m',
      preAllocatedVUs: 32,
      maxVUs: 256,
      warmup: 5,
    },
  },
  thresholds: {
    'llm_ttft': ['p(99) < 1000'],
    'llm_tpot': ['p(99) < 60'],
    'llm_failed': ['rate < 0.01'],
  },
};

const promptLen = lengths.lognormal({ median: 120, sigma: 0.7, min: 8, max: 2048 });
const answerLen = lengths.lognormal({ median: 250, sigma: 0.4, min: 32, max: 1024 });

export default function () {
  const inputTokens = promptLen.sample();
  const outputTokens = answerLen.sample();
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens) }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, {
    'request succeeded': (r) => r.ok,
    'answer as long as asked': (r) => r.outputTokens === outputTokens,
  });
}
