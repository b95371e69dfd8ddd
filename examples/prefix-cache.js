// prefix-cache.js: does the server's prefix cache pay off? GROUPS groups of
// requests share a system prompt of PREFIX tokens, each request adding its
// own SUFFIX tokens; then the same load runs with prompts of the same
// length that share nothing. Compare the two rows of the summary's
// scenario table: TTFT, and the cached prompt tokens the server reports.
//
//   llmrun run examples/prefix-cache.js
//   llmrun run examples/prefix-cache.js --base-url http://gpu-box:8000 -e PREFIX=4096 -e GROUPS=16
//
// Parameters: RATE (requests/s, default 8), DURATION (of each phase,
// default 30s), GROUPS (default 8), PREFIX (tokens, default 1024), SUFFIX
// (tokens, default 64). The shared prefixes depend on --seed, drawn for
// each run unless given: a run given an earlier run's --seed finds its
// prompts in the server's cache (and the summary warns for the unique
// ones).
import llm from 'llm';
import { check } from 'llmrun';
import { prompts } from 'data';
import { seconds } from 'llmrun/config';

const groups = Number(__ENV.GROUPS || 8);
const prefixTokens = Number(__ENV.PREFIX || 1024);
const suffixTokens = Number(__ENV.SUFFIX || 64);
const phase = seconds(__ENV.DURATION || '30s');

function phaseScenario(exec, start) {
  return {
    executor: 'constant-arrival-rate',
    arrival: 'poisson',
    rate: Number(__ENV.RATE || 8),
    duration: `${phase}s`,
    startTime: `${start}s`,
    preAllocatedVUs: 16,
    maxVUs: 128,
    exec,
    tags: { cache: exec },
  };
}

export const options = {
  scenarios: {
    shared: phaseScenario('shared', 0),
    unique: phaseScenario('unique', phase + 2),
  },
  thresholds: {
    'llm_ttft{scenario:shared}': ['p(50) < 1000'],
    'llm_ttft{scenario:unique}': ['p(50) < 1000'],
    'llm_cached_tokens{scenario:shared}': ['avg > 0'],
  },
};

const groupsOfPrefixes = prompts.sharedPrefix({ groups, prefixTokens });

function send(text, tokens, uniquePrompt) {
  const r = llm.stream({
    messages: [{ role: 'user', content: text }],
    max_tokens: 32,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: tokens, uniquePrompt });
  check(r, { 'request succeeded': (r) => r.ok });
}

export function shared() {
  const p = groupsOfPrefixes.prompt(suffixTokens);
  send(p.text, p.tokens, false);
}

export function unique() {
  const n = prefixTokens + suffixTokens;
  send(prompts.synthetic(n), n, true);
}
