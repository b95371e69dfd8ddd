// concurrency-sweep: the same request at growing concurrency, one level
// after another, to find where a server saturates. Each level is a
// scenario named c<N>; at the end a table shows every level and says where
// throughput stopped growing while TTFT kept climbing.
//
//   llmrun run stock:concurrency-sweep -e LEVELS=1,2,4,8,16,32,64 -e STEP=30s
//   llmrun run stock:concurrency-sweep -e CONFIG=sweep.yaml
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   LEVELS         concurrency levels                    1,2,4,8,16,32
//   STEP           how long each level runs              20s
//   PAUSE          drain time between levels             30s
//   WARMUP         warmup requests at each level,        0
//                  kept out of every figure
//   INPUT_TOKENS   prompt length, exact tokens           256
//   OUTPUT_TOKENS  answer length (ignore_eos)            128
//   MIN_GAIN       throughput growth that still counts   0.10
//                  as "growing" (10 %)
import { textSummary } from 'llmrun';
import { capacityOf, levelFigures, pad, request } from './lib/sweep.js';
import { settings, seconds } from 'llmrun/config';

const p = settings({
  levels: [1, 2, 4, 8, 16, 32], step: '20s', pause: '30s', warmup: 0,
  input_tokens: 256, output_tokens: 128, min_gain: 0.1,
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
  scenarios[`c${n}`] = {
    executor: 'constant-vus',
    vus: n,
    duration: `${step}s`,
    startTime: `${i * (step + pause)}s`,
    gracefulStop: `${pause}s`,
    warmup,
    tags: { concurrency: String(n) },
  };
});
// MIN_GAIN goes to llmrun's capacity verdict, which the table below
// prints: one verdict.
export const options = { scenarios, capacity: { minGain } };

export default function () {
  request(inputTokens, outputTokens);
}

export function handleSummary(data) {
  const verdict = capacityOf(data);
  const rows = levels.map((n) => ({ n, ...levelFigures(data, `c${n}`) }));
  let out = '\nconcurrency sweep (latencies in ms, throughput over each level\'s own run time)\n';
  out += `${pad('level', 6)} ${pad('ok', 6)} ${pad('failed', 6)} ${pad('success', 8)} ${pad('req/s', 8)} ${pad('out tok/s', 10)} ${pad('TTFT p50', 9)} ${pad('TTFT p95', 9)} ${pad('TTFT p99', 9)} ${pad('TPOT p50', 9)}\n`;
  for (const r of rows) {
    out += `${pad(r.n, 6)} ${pad(r.ok, 6)} ${pad(r.failed, 6)} ${pad((100 * r.success).toFixed(1) + '%', 8)} ${pad(r.rps.toFixed(2), 8)} ${pad(r.tokps.toFixed(1), 10)} ${pad(r.ttft50.toFixed(1), 9)} ${pad(r.ttft95.toFixed(1), 9)} ${pad(r.ttft99.toFixed(1), 9)} ${pad(r.tpot50.toFixed(2), 9)}\n`;
  }
  const sat = verdict.saturation;
  const gain = `${(100 * verdict.minGain).toFixed(0)} %`;
  out += sat
    ? `saturation point: concurrency ${sat.level} (${sat.output_throughput.toFixed(1)} output tok/s); beyond it throughput grows by less than ${gain} while TTFT climbs\n`
    : `no saturation point up to concurrency ${levels[levels.length - 1]}: throughput still grew by ${gain} or more at every level (or TTFT did not climb)\n`;
  return { stdout: textSummary(data) + out };
}
