// mixed: chat, RAG and code completion at once, each with its own rate and thresholds
//
// Run it against the built-in simulator (no server needed):
//   llmrun run script.js
// Run it against your own OpenAI-compatible server (vLLM, SGLang, TGI, ...):
//   llmrun run script.js --base-url http://HOST:PORT --model MODEL
// If the server wants an API key, export it; never write it here or on the
// command line (llmrun never prints it):
//   export OPENAI_API_KEY=...        (or name your variable: --api-key-env MY_KEY)
// Change the load with -e NAME=value: CHAT_RATE, RAG_RATE, CODE_RATE
// (requests per second: 4, 1, 2), DURATION (default 30s), and CHAT_MODEL,
// RAG_MODEL, CODE_MODEL when each workload has a model of its own.
//
// Each workload is a scenario: the summary has a row for each, and a
// threshold selects a workload's requests with {scenario:NAME}.
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

// What the three scenarios share: requests arriving at random moments (a
// Poisson process) at a rate of their own, for DURATION.
const arrivals = /** @type {const} */ ({
  executor: 'constant-arrival-rate',
  arrival: 'poisson',
  duration: __ENV.DURATION || '30s',
  preAllocatedVUs: 8,
  maxVUs: 64,
  warmup: 1, // the first request of each scenario counts in no figure
});

/** @type {import('llmrun').Options} */
export const options = {
  scenarios: {
    // exec names the function the scenario runs; tags label its samples,
    // in the outputs (--out) too, so that they can be told apart there.
    chat: { ...arrivals, rate: Number(__ENV.CHAT_RATE || 4), exec: 'chat', tags: { workload: 'chat' } },
    rag: { ...arrivals, rate: Number(__ENV.RAG_RATE || 1), exec: 'rag', tags: { workload: 'rag' } },
    code: { ...arrivals, rate: Number(__ENV.CODE_RATE || 2), exec: 'code', tags: { workload: 'code' } },
  },
  // Thresholds decide whether the run passed: llmrun exits 99 if one fails.
  thresholds: {
    'llm_ttft{scenario:chat}': ['p(95) < 2000'], // chat answers start within 2 s
    'llm_ttft{scenario:rag}': ['p(95) < 3000'], //  long prompts take longer to read
    'llm_tpot{scenario:code}': ['p(95) < 100'], //  code streams fast once it starts
    llm_failed: ['rate < 0.01'], // fewer than 1 % of all requests fail
    checks: ['rate > 0.99'], //     the check() calls below pass
  },
};

// A client per workload, for its model (the run's --model when unset).
const chatClient = llm.client({ model: __ENV.CHAT_MODEL });
const ragClient = llm.client({ model: __ENV.RAG_MODEL });
const codeClient = llm.client({ model: __ENV.CODE_MODEL });

const chatPrompt = lengths.lognormal({ median: 120, sigma: 0.7, min: 8, max: 2048 });
const ragPassages = lengths.lognormal({ median: 2000, sigma: 0.5, min: 300, max: 8000 });
const ragInstructions = prompts.sharedPrefix({ groups: 4, prefixTokens: 512 });
const codeContext = lengths.lognormal({ median: 1000, sigma: 0.6, min: 100, max: 6000 });

// Every answer is exactly max_tokens long (ignore_eos), so runs compare.
export function chat() {
  const n = chatPrompt.sample();
  const r = chatClient.stream({ messages: [{ role: 'user', content: prompts.synthetic(n) }], max_tokens: 200, ignore_eos: true, temperature: 0 },
    { promptTokens: n, uniquePrompt: true });
  check(r, { 'chat succeeded': (r) => r.ok });
}

export function rag() {
  const p = ragInstructions.prompt(ragPassages.sample());
  const r = ragClient.stream({ messages: [{ role: 'user', content: p.text }], max_tokens: 64, ignore_eos: true, temperature: 0 },
    { promptTokens: p.tokens });
  check(r, { 'rag succeeded': (r) => r.ok });
}

export function code() {
  const n = codeContext.sample();
  const r = codeClient.stream({ prompt: prompts.synthetic(n), max_tokens: 48, ignore_eos: true, temperature: 0 },
    { promptTokens: n, uniquePrompt: true });
  check(r, { 'code succeeded': (r) => r.ok });
}
