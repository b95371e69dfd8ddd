// code: code completion, the file so far as the prompt and a few lines back
//
// Run it against the built-in simulator (no server needed):
//   llmrun run script.js
// Run it against your own OpenAI-compatible server (vLLM, SGLang, TGI, ...):
//   llmrun run script.js --base-url http://HOST:PORT --model MODEL
// If the server wants an API key, export it; never write it here or on the
// command line (llmrun never prints it):
//   export OPENAI_API_KEY=...        (or name your variable: --api-key-env MY_KEY)
// Change the load with -e NAME=value: VUS (developers typing at once,
// default 8) and DURATION (default 30s).
//
// A completion must appear while the developer waits for it: the SLO is on
// the time to the first token and on how fast the tokens follow.
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

const vus = Number(__ENV.VUS || 8);

/** @type {import('llmrun').Options} */
export const options = {
  scenarios: {
    code: {
      // VUS developers, each asking for the next completion as soon as the
      // last one has arrived.
      executor: 'constant-vus',
      vus,
      duration: __ENV.DURATION || '30s',
      warmup: vus, // the first request of each counts in no figure
    },
  },
  // Thresholds decide whether the run passed: llmrun exits 99 if one fails.
  thresholds: {
    llm_ttft: ['p(95) < 2000'], // time to first token, ms
    llm_tpot: ['p(95) < 100'], //  time per output token after the first, ms
    llm_failed: ['rate < 0.01'], // fewer than 1 % of requests fail
    checks: ['rate > 0.99'], //     the check() calls below pass
  },
};

// The code before the cursor: about 1,000 tokens, up to 6,000.
const contextLen = lengths.lognormal({ median: 1000, sigma: 0.6, min: 100, max: 6000 });
// The completion: a few lines, about 48 tokens, up to 256.
const completionLen = lengths.lognormal({ median: 48, sigma: 0.6, min: 8, max: 256 });

export default function () {
  const inputTokens = contextLen.sample();
  const outputTokens = completionLen.sample();
  const r = llm.stream({
    // A prompt, not messages: sent to /v1/completions, as editors do.
    prompt: prompts.synthetic(inputTokens),
    max_tokens: outputTokens,
    ignore_eos: true, // exactly max_tokens tokens, so runs compare
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, {
    'request succeeded': (r) => r.ok,
    'completion as long as asked': (r) => r.outputTokens === outputTokens,
  });
}
