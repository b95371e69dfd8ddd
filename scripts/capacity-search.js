// capacity-search: find the highest load a server takes within an SLO, by
// a search that decides each level from the confidence intervals of its
// figures instead of running a fixed list of levels. Levels grow ×2 from
// START until one does not meet the SLO (or halve from a START that
// misses), then bisect until the capacity is bracketed within ±WIDTH, or
// BUDGET ends. A level that meets the SLO
// only within noise is run longer (up to MAX_STEP), and counts as not met
// if it stays inconclusive. llmrun's summary leads with the capacity and
// its bracket, and a row per level tried.
//
//   llmrun run stock:capacity-search -e SLO_TTFT_P99=2000 -e START=2
//   llmrun run stock:capacity-search -e VARIABLE=concurrency -e SLO_TPOT_P99=50
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   VARIABLE         rate (requests per second, Poisson    rate
//                    arrivals) or concurrency (requests
//                    in flight)
//   START            the first level tried                 1
//   MAX              the highest level tried               1024 × START
//   WIDTH            stop once the capacity is bracketed   0.05
//                    within ±WIDTH (relative)
//   BUDGET           the most time the levels may run      10m
//   STEP             how long each level runs              30s
//   MAX_STEP         the most an inconclusive level may    3 × STEP
//                    run in all
//   CONFIDENCE       level of the confidence intervals     0.95
//                    each level is judged by
//   PAUSE            the most a level may take to drain    30s
//                    its requests in flight; the next
//                    level starts as soon as they have
//   WARMUP           warmup requests before the first      0
//                    level
//   INPUT_TOKENS     prompt length, exact tokens           256
//   OUTPUT_TOKENS    answer length (ignore_eos)            128
//   SLO_TTFT_P99     TTFT p99 bound, ms                    2000
//   SLO_TPOT_P99     TPOT p99 bound, ms                    (none)
//   ARRIVAL          arrivals of a rate search: poisson    poisson
//                    or constant (evenly spaced)
//   MAX_VUS          VUs a rate level may use at most      512
import { request } from './lib/sweep.js';
import { settings, seconds } from 'llmrun/config';

const p = settings({
  variable: 'rate', start: 1, max: null, width: 0.05, budget: '10m', step: '30s', max_step: null, confidence: 0.95,
  pause: '30s', warmup: 0, input_tokens: 256, output_tokens: 128, slo_ttft_p99: 2000, slo_tpot_p99: null,
  arrival: 'poisson', max_vus: 512,
});
const variable = String(p.variable);
const start = Number(p.start);
const maxVUs = Number(p.max_vus);
const step = `${seconds(p.step)}s`;
const inputTokens = Number(p.input_tokens);
const outputTokens = Number(p.output_tokens);

// One scenario at the first level: the search scales its load round by
// round (options.capacity.search).
let scenario;
if (variable === 'rate') {
  scenario = {
    executor: 'constant-arrival-rate', arrival: String(p.arrival), rate: start, timeUnit: '1s', duration: step,
    preAllocatedVUs: Math.min(maxVUs, Math.ceil(start * 2) + 1), maxVUs,
  };
} else if (variable === 'concurrency') {
  scenario = { executor: 'constant-vus', vus: start, duration: step };
} else {
  throw new Error(`VARIABLE must be rate or concurrency; got "${variable}"`);
}
scenario.gracefulStop = `${seconds(p.pause)}s`;
scenario.warmup = Number(p.warmup);

const search = { variable, start, width: Number(p.width), budget: `${seconds(p.budget)}s`, step,
  confidence: Number(p.confidence) };
if (p.max !== null) search.max = Number(p.max);
if (p.max_step !== null) search.maxStep = `${seconds(String(p.max_step))}s`;

export const options = {
  scenarios: { search: scenario },
  slo: { ttft_p99: Number(p.slo_ttft_p99), tpot_p99: p.slo_tpot_p99 === null ? undefined : Number(p.slo_tpot_p99) },
  capacity: { search },
};

export default function () {
  request(inputTokens, outputTokens);
}
