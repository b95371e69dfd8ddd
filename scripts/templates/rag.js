// rag: retrieval-augmented generation, long prompts with a shared prefix, short answers
//
// Run it against the built-in simulator (no server needed):
//   llmrun run script.js
// Run it against your own OpenAI-compatible server (vLLM, SGLang, TGI, ...):
//   llmrun run script.js --base-url http://HOST:PORT --model MODEL
// If the server wants an API key, export it; never write it here or on the
// command line (llmrun never prints it):
//   export OPENAI_API_KEY=...        (or name your variable: --api-key-env MY_KEY)
// Change the load with -e NAME=value: RATE (requests per second, default 2),
// DURATION (default 30s) and TTFT_P95 (the SLO in ms, default 3000).
//
// Each prompt is one of 4 sets of instructions (512 tokens, the same for
// every request of its set: a server's prefix cache can reuse them) and
// retrieved passages of a few thousand tokens. Reading the prompt (prefill)
// dominates, so the SLO is on the time to the first token.
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

const ttftSLO = Number(__ENV.TTFT_P95 || 3000);

/** @type {import('llmrun').Options} */
export const options = {
  scenarios: {
    rag: {
      executor: 'constant-arrival-rate', // RATE requests a second...
      arrival: 'poisson', //                ...at random moments
      rate: Number(__ENV.RATE || 2),
      duration: __ENV.DURATION || '30s',
      preAllocatedVUs: 8,
      maxVUs: 64,
      warmup: 1, // the first request counts in no figure
    },
  },
  // Thresholds decide whether the run passed: llmrun exits 99 if one fails.
  thresholds: {
    llm_ttft: [`p(95) < ${ttftSLO}`], // time to first token, ms
    llm_failed: ['rate < 0.01'], //      fewer than 1 % of requests fail
    checks: ['rate > 0.99'], //          the check() calls below pass
  },
};

// The shared instructions; the summary shows how much of the prompts the
// server served from its prefix cache.
const instructions = prompts.sharedPrefix({ groups: 4, prefixTokens: 512 });
// Retrieved passages: log-normal around 2,000 tokens, up to 8,000.
const passagesLen = lengths.lognormal({ median: 2000, sigma: 0.5, min: 300, max: 8000 });

export default function () {
  const p = instructions.prompt(passagesLen.sample()); // { text, tokens, group }
  const r = llm.stream({
    messages: [{ role: 'user', content: p.text }],
    max_tokens: 64, // short answers, exactly 64 tokens (ignore_eos)
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: p.tokens });
  check(r, {
    'request succeeded': (r) => r.ok,
    [`ttft < ${ttftSLO} ms`]: (r) => r.ttft < ttftSLO,
  });
}
