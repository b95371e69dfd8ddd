// rate-sweep: Poisson request arrivals at growing rates, one rate after
// another, to find the highest rate a server sustains within an SLO. Each
// rate is a scenario named r<RATE>; at the end a table shows every rate and
// names the highest whose TTFT p99 (and TPOT p99, when given) meets the SLO.
//
//   llmrun run stock:rate-sweep -e RATES=1,2,4,8,16,32,64 -e STEP=60s -e SLO_TTFT_P99=2000
//   llmrun run stock:rate-sweep -e CONFIG=bench_config.toml
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   RATES            request rates, per second            1,2,4,8,16
//   STEP             how long each rate runs              30s
//   PROMPTS          requests per rate instead of STEP     (unset)
//                    (the rate's duration is PROMPTS/RATE)
//   PAUSE            drain time between rates             30s
//   WARMUP           warmup requests at each rate         0
//   INPUT_TOKENS     prompt length, exact tokens          256
//   OUTPUT_TOKENS    answer length (ignore_eos)           128
//   SLO_TTFT_P99     TTFT p99 bound, ms                   2000
//   SLO_TPOT_P99     TPOT p99 bound, ms                   (none)
//   MAX_VUS          VUs each rate may use at most        512
//   MAX_CONCURRENCY  cap on requests in flight            (none)
import { textSummary } from 'llmrun';
import { capacityOf, levelFigures, pad, request } from './lib/sweep.js';
import { settings, seconds } from 'llmrun/config';

const p = settings({
  rates: [1, 2, 4, 8, 16], step: '30s', prompts: null, pause: '30s', warmup: 0,
  input_tokens: 256, output_tokens: 128, slo_ttft_p99: 2000, slo_tpot_p99: null,
  max_vus: 512, max_concurrency: null,
});
const rates = p.rates.map(Number);
const pause = seconds(p.pause);
const warmup = Number(p.warmup);
const inputTokens = Number(p.input_tokens);
const outputTokens = Number(p.output_tokens);
const sloTTFT = Number(p.slo_ttft_p99);
const sloTPOT = p.slo_tpot_p99 === null ? undefined : Number(p.slo_tpot_p99);
const maxVUs = Number(p.max_vus);

const scenarios = {};
let start = 0;
rates.forEach((rate) => {
  if (!(rate > 0)) throw new Error(`RATES must be positive numbers; got "${p.rates}"`);
  const duration = p.prompts !== null ? Number(p.prompts) / rate : seconds(p.step);
  const sc = {
    executor: 'constant-arrival-rate',
    arrival: 'poisson',
    rate,
    timeUnit: '1s',
    duration: `${duration}s`,
    preAllocatedVUs: Math.min(maxVUs, Math.ceil(rate * 2) + 1),
    maxVUs,
    startTime: `${start}s`,
    gracefulStop: `${pause}s`,
    warmup,
    tags: { rate: String(rate) },
  };
  if (p.max_concurrency !== null) sc.maxConcurrency = Number(p.max_concurrency);
  scenarios[`r${rate}`] = sc;
  start += duration + pause;
});
// The SLO goes to llmrun's capacity verdict, which the table below
// prints: one verdict (--slo, when given, wins over it).
export const options = { scenarios, slo: { ttft_p99: sloTTFT, tpot_p99: sloTPOT } };

export default function () {
  request(inputTokens, outputTokens);
}

export function handleSummary(data) {
  const verdict = capacityOf(data);
  const rows = rates.map((rate) => ({ rate, ...levelFigures(data, `r${rate}`), meets: verdict.meets(`r${rate}`) }));
  let out = '\nrate sweep, Poisson arrivals (latencies in ms, throughput over each rate\'s own run time)\n';
  out += `${pad('rate/s', 7)} ${pad('ok', 6)} ${pad('failed', 6)} ${pad('success', 8)} ${pad('req/s', 8)} ${pad('out tok/s', 10)} ${pad('TTFT p50', 9)} ${pad('TTFT p99', 9)} ${pad('TPOT p99', 9)}  SLO\n`;
  for (const r of rows) {
    out += `${pad(r.rate, 7)} ${pad(r.ok, 6)} ${pad(r.failed, 6)} ${pad((100 * r.success).toFixed(1) + '%', 8)} ${pad(r.rps.toFixed(2), 8)} ${pad(r.tokps.toFixed(1), 10)} ${pad(r.ttft50.toFixed(1), 9)} ${pad(r.ttft99.toFixed(1), 9)} ${pad(r.tpot99.toFixed(2), 9)}  ${r.meets ? 'met' : 'missed'}\n`;
  }
  const best = verdict.best;
  out += best
    ? `highest rate within the SLO (${verdict.slo}): ${best.level} req/s (${best.output_throughput.toFixed(1)} output tok/s)\n`
    : `no rate met the SLO (${verdict.slo})\n`;
  return { stdout: textSummary(data) + out };
}
