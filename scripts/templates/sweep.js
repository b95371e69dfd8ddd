// sweep: growing concurrency, to find the most load served within an SLO
//
// Run it against the built-in simulator (no server needed):
//   llmrun run script.js
// Run it against your own OpenAI-compatible server (vLLM, SGLang, TGI, ...):
//   llmrun run script.js --base-url http://HOST:PORT --model MODEL
// If the server wants an API key, export it; never write it here or on the
// command line (llmrun never prints it):
//   export OPENAI_API_KEY=...        (or name your variable: --api-key-env MY_KEY)
// Change it with -e NAME=value: LEVELS (concurrent requests, default
// 1,2,4,8,16), STEP (how long each level runs, default 20s), and the SLO in
// ms: TTFT_P99 (default 2000) and TPOT_P99 (default 100).
//
// The levels run one after another. The summary leads with the verdict:
// where the server saturated (more requests in flight, no more tokens a
// second) and the highest level whose TTFT p99 and TPOT p99 meet the SLO.
import llm from 'llm';
import { check } from 'llmrun';
import { prompts } from 'data';

const levels = (__ENV.LEVELS || '1,2,4,8,16').split(',').map(Number);
const step = __ENV.STEP || '20s';
const slo = { ttft_p99: Number(__ENV.TTFT_P99 || 2000), tpot_p99: Number(__ENV.TPOT_P99 || 100) };

// A scenario per level, named c1, c2, ...: N virtual users sending one
// request after another, the level starting once the one before it has
// ended (startAfter), and tagged with its concurrency, which makes the run
// a sweep.
const scenarios = Object.fromEntries(levels.map((n, i) => [`c${n}`, {
  executor: /** @type {const} */ ('constant-vus'),
  vus: n,
  duration: step,
  startAfter: i > 0 ? `c${levels[i - 1]}` : undefined,
  gracefulStop: '30s', // the most a level's last requests may take to finish
  tags: { concurrency: String(n) },
}]));

/** @type {import('llmrun').Options} */
export const options = {
  scenarios,
  slo, // the capacity verdict's SLO (llmrun run --slo overrides it)
  // Thresholds decide whether the run passed: llmrun exits 99 if one fails.
  // The verdict finds the limit; these say the sweep itself went well.
  thresholds: {
    [`llm_ttft{scenario:c${levels[0]}}`]: [`p(99) < ${slo.ttft_p99}`], // the lightest load meets the SLO
    [`llm_tpot{scenario:c${levels[0]}}`]: [`p(99) < ${slo.tpot_p99}`],
    llm_failed: ['rate < 0.01'], // fewer than 1 % of requests fail
    checks: ['rate > 0.99'], //     the check() calls below pass
  },
};

export default function () {
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(256) }], // exactly 256 tokens
    max_tokens: 128,
    ignore_eos: true, // exactly 128 tokens back, at every level
    temperature: 0,
  }, { promptTokens: 256, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok });
}
