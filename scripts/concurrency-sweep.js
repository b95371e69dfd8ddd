// concurrency-sweep: the same request at growing concurrency, one level
// after another, to find where a server saturates. Each level is a
// scenario named c<N>, so the summary has a block per level.
//
//   llmrun run stock:concurrency-sweep -e LEVELS=1,2,4,8,16,32,64 \
//     -e STEP=30s -e INPUT_TOKENS=512 -e OUTPUT_TOKENS=128 --base-url ...
//
// Each level runs STEP; requests still running at its end get PAUSE to
// finish before the next level starts, so levels do not overlap.
import llm from 'llm';
import { check } from 'llmrun';

const levels = (__ENV.LEVELS || '1,2,4,8,16,32').split(',').map((s) => Number(s.trim()));
const stepSeconds = parseSeconds(__ENV.STEP || '20s');
const pauseSeconds = parseSeconds(__ENV.PAUSE || '30s');
const inputTokens = Number(__ENV.INPUT_TOKENS || 256);
const outputTokens = Number(__ENV.OUTPUT_TOKENS || 128);

function parseSeconds(s) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(s);
  if (!m) throw new Error(`STEP and PAUSE take a duration like 30s, 500ms or 2m; got "${s}"`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2]];
}

const scenarios = {};
levels.forEach((n, i) => {
  if (!(n >= 1)) throw new Error(`LEVELS must be positive integers; got "${__ENV.LEVELS}"`);
  scenarios[`c${n}`] = {
    executor: 'constant-vus',
    vus: n,
    duration: `${stepSeconds}s`,
    startTime: `${i * (stepSeconds + pauseSeconds)}s`,
    gracefulStop: `${pauseSeconds}s`,
    tags: { concurrency: String(n) },
  };
});
export const options = { scenarios };

const prompt = 'Repeat after me:' + ' the'.repeat(Math.max(inputTokens - 4, 1));

export default function () {
  const r = llm.stream({
    messages: [{ role: 'user', content: prompt }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  });
  check(r, { 'request succeeded': (r) => r.ok });
}
