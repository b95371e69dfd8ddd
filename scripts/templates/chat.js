// chat: chat traffic, short prompts and medium answers from users arriving at random
//
// Run it against the built-in simulator (no server needed):
//   llmrun run script.js
// Run it against your own OpenAI-compatible server (vLLM, SGLang, TGI, ...):
//   llmrun run script.js --base-url http://HOST:PORT --model MODEL
// If the server wants an API key, export it; never write it here or on the
// command line (llmrun never prints it):
//   export OPENAI_API_KEY=...        (or name your variable: --api-key-env MY_KEY)
// Change the load with -e NAME=value: RATE (requests per second, default 4)
// and DURATION (default 30s), e.g.  llmrun run script.js -e RATE=20 -e DURATION=5m
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

/** @type {import('llmrun').Options} */
export const options = {
  scenarios: {
    chat: {
      // RATE new requests a second, at random moments (a Poisson process),
      // whether or not earlier ones have finished: like independent users.
      executor: 'constant-arrival-rate',
      arrival: 'poisson',
      rate: Number(__ENV.RATE || 4),
      duration: __ENV.DURATION || '30s',
      preAllocatedVUs: 16, // virtual users ready to send requests,
      maxVUs: 128, //         and the most there may be when answers are slow
      warmup: 2, //           the first 2 requests count in no figure
    },
  },
  // Thresholds decide whether the run passed: llmrun exits 99 if one fails.
  thresholds: {
    llm_ttft: ['p(95) < 2000'], // time to first token, ms: 95 % of requests under 2 s
    llm_tpot: ['p(95) < 100'], //  time per output token after the first, ms
    llm_failed: ['rate < 0.01'], // fewer than 1 % of requests fail
    checks: ['rate > 0.99'], //     the check() calls below pass
  },
};

// Prompt and answer lengths in tokens: mostly short, with a long tail.
const promptLen = lengths.lognormal({ median: 120, sigma: 0.7, min: 8, max: 2048 });
const answerLen = lengths.lognormal({ median: 200, sigma: 0.4, min: 32, max: 1024 });

// Each virtual user calls this function for each request it sends.
export default function () {
  const inputTokens = promptLen.sample();
  const outputTokens = answerLen.sample();
  const r = llm.stream({
    // A prompt of exactly inputTokens tokens of generated text.
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens) }],
    max_tokens: outputTokens,
    ignore_eos: true, // answer exactly max_tokens tokens, so runs compare
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true }); // checked against the server's count
  check(r, {
    'request succeeded': (r) => r.ok,
    'answer as long as asked': (r) => r.outputTokens === outputTokens,
  });
}
