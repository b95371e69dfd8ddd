// sharegpt.js: replay real conversations from a ShareGPT-format dataset, as
// vLLM's and SGLang's benchmarks do: each request sends a conversation's
// first user message and asks for as many tokens as the dataset's own
// answer had (ignore_eos), so prompt and output lengths follow real usage.
// The dataset is loaded once and shared by every VU; requests walk through
// it in order (next()), or at random with sample().
//
//   llmrun run examples/sharegpt.js
//   llmrun run examples/sharegpt.js -e DATASET=ShareGPT_V3_unfiltered_cleaned_split.json -e RATE=20
//
// Parameters: DATASET (default: the small sample beside this script),
// RATE (requests/s, default 4), DURATION (default 1m), MAX_OUTPUT (cap on
// output tokens, default 1024).
import llm from 'llm';
import { check } from 'llmrun';
import { dataset } from 'data';

const conversations = dataset(__ENV.DATASET || 'data/sharegpt-sample.json');
const maxOutput = Number(__ENV.MAX_OUTPUT || 1024);

export const options = {
  scenarios: {
    replay: {
      executor: 'constant-arrival-rate',
      arrival: 'poisson',
      rate: Number(__ENV.RATE || 4),
      duration: __ENV.DURATION || '1m',
      preAllocatedVUs: 16,
      maxVUs: 128,
    },
  },
  thresholds: {
    'llm_ttft': ['p(99) < 2000'],
    'llm_failed': ['rate < 0.01'],
  },
};

export default function () {
  const c = conversations.next();
  const outputTokens = Math.min(Math.max(c.outputTokens, 1), maxOutput);
  const system = c.messages.filter((m) => m.role === 'system');
  const r = llm.stream({
    messages: [...system, { role: 'user', content: c.prompt }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  });
  check(r, {
    'request succeeded': (r) => r.ok,
    'answer as long as the dataset\'s': (r) => r.outputTokens === outputTokens,
  });
}
