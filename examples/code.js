// code.js: code generation. Short prompts (a function signature and a
// docstring: about 150 tokens), long answers (1,024 tokens). Decode
// dominates, so the SLO is on time per output token: how fast the code
// appears once it starts.
//
//   llmrun run examples/code.js
//   llmrun run examples/code.js --base-url http://gpu-box:8000 -e VUS=32 -e TPOT_P99=40
//
// Parameters: VUS (concurrent users, default 16), DURATION (default 1m),
// OUTPUT_TOKENS (default 1024), TPOT_P99 (the SLO in ms, default 50).
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

const tpotSLO = Number(__ENV.TPOT_P99 || 50);
const outputTokens = Number(__ENV.OUTPUT_TOKENS || 1024);

export const options = {
  scenarios: {
    code: {
      executor: 'constant-vus',
      vus: Number(__ENV.VUS || 16),
      duration: __ENV.DURATION || '1m',
      warmup: 1,
    },
  },
  thresholds: {
    'llm_tpot': [`p(99) < ${tpotSLO}`],
    'llm_failed': ['rate < 0.01'],
  },
};

const promptLen = lengths.normal({ mean: 150, stddev: 40, min: 40, max: 400 });

export default function () {
  const inputTokens = promptLen.sample();
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens, { prefix: 'Complete this Python function:' }) }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, {
    'request succeeded': (r) => r.ok,
    [`tpot < ${tpotSLO} ms`]: (r) => r.tpot < tpotSLO,
  });
}
