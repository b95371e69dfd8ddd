// rag.js: retrieval-augmented generation. Long contexts (retrieved passages:
// log-normal around 3,000 tokens, up to 16,000), a short question, short
// answers (64 tokens). Prefill dominates, so the SLO is on time to first
// token.
//
//   llmrun run examples/rag.js
//   llmrun run examples/rag.js --base-url http://gpu-box:8000 -e RATE=4 -e TTFT_P95=2000
//
// Parameters: RATE (requests/s, default 3), DURATION (default 1m),
// TTFT_P95 (the SLO in ms, default 1500).
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

const ttftSLO = Number(__ENV.TTFT_P95 || 1500);

export const options = {
  scenarios: {
    rag: {
      executor: 'constant-arrival-rate',
      arrival: 'poisson',
      rate: Number(__ENV.RATE || 3),
      duration: __ENV.DURATION || '1m',
      preAllocatedVUs: 16,
      maxVUs: 128,
      warmup: 2,
    },
  },
  thresholds: {
    'llm_ttft': [`p(95) < ${ttftSLO}`],
    'llm_failed': ['rate < 0.01'],
  },
};

const contextLen = lengths.lognormal({ median: 3000, sigma: 0.5, min: 500, max: 16000 });
const questionLen = lengths.uniform({ min: 10, max: 40 });
const system = 'Answer the question using only the context below. Quote the passage you rely on.';

export default function () {
  const contextTokens = contextLen.sample();
  const questionTokens = questionLen.sample();
  const r = llm.stream({
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: `Context:\n${prompts.synthetic(contextTokens)}\n\nQuestion: ${prompts.synthetic(questionTokens)}` },
    ],
    max_tokens: 64,
    ignore_eos: true,
    temperature: 0,
  });
  check(r, {
    'request succeeded': (r) => r.ok,
    [`ttft < ${ttftSLO} ms`]: (r) => r.ttft < ttftSLO,
  });
}
