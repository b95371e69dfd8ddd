// concurrency-sweep: the same request at growing concurrency, one level
// after another, to find where a server saturates. Each level is a
// scenario named c<N>, started as soon as the level before it has ended
// (startAfter): no level waits on a clock. llmrun's summary leads with the
// verdict, where throughput stopped growing while TTFT kept climbing, and
// a row per level.
//
//   llmrun run stock:concurrency-sweep -e LEVELS=1,2,4,8,16,32,64 -e STEP=30s
//   llmrun run stock:concurrency-sweep -e CONFIG=sweep.yaml -e STOP=saturation
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   LEVELS         concurrency levels                    1,2,4,8,16,32
//   STEP           how long each level runs              20s
//   PAUSE          the most a level may take to drain    30s
//                  its requests in flight after STEP
//                  (its gracefulStop); the next level
//                  starts as soon as they have drained
//   WARMUP         warmup requests at each level,        0
//                  kept out of every figure
//   INPUT_TOKENS   prompt length, exact tokens           256
//   OUTPUT_TOKENS  answer length (ignore_eos)            128
//   MIN_GAIN       throughput growth that still counts   0.10
//                  as "growing" (10 %)
//   STOP           skip the remaining levels once        never
//                  saturation is shown (saturation), or
//                  a level misses the SLO (slo: needs
//                  --slo), or run them all (never)
import { request } from './lib/sweep.js';
import { settings, seconds } from 'llmrun/config';

const p = settings({
  levels: [1, 2, 4, 8, 16, 32], step: '20s', pause: '30s', warmup: 0,
  input_tokens: 256, output_tokens: 128, min_gain: 0.1, stop: 'never',
});
const levels = p.levels.map(Number);
const step = seconds(p.step);
const pause = seconds(p.pause);
const warmup = Number(p.warmup);
const inputTokens = Number(p.input_tokens);
const outputTokens = Number(p.output_tokens);
const minGain = Number(p.min_gain);

const scenarios = {};
levels.forEach((n, i) => {
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`LEVELS must be positive integers; got "${p.levels}"`);
  if (scenarios[`c${n}`]) throw new Error(`LEVELS must not repeat a level; got "${p.levels}"`);
  scenarios[`c${n}`] = {
    executor: 'constant-vus',
    vus: n,
    duration: `${step}s`,
    startAfter: i > 0 ? `c${levels[i - 1]}` : undefined,
    gracefulStop: `${pause}s`,
    warmup,
    tags: { concurrency: String(n) },
  };
});
// MIN_GAIN and STOP go to llmrun's capacity verdict, which the summary
// prints first: one verdict.
export const options = { scenarios, capacity: { minGain, stop: String(p.stop) } };

export default function () {
  request(inputTokens, outputTokens);
}
