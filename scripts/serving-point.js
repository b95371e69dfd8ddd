// serving-point: one serving benchmark, comparable to vLLM's `vllm bench
// serve` and SGLang's `bench_serving` with their random dataset: NUM_PROMPTS
// requests with random input and output lengths, sent at REQUEST_RATE
// (Poisson arrivals) or as fast as MAX_CONCURRENCY allows, after WARMUP
// requests that no figure includes. It prints their headline block.
//
//   llmrun run stock:serving-point -e NUM_PROMPTS=1000 -e MAX_CONCURRENCY=64 \
//     -e INPUT_LEN=1024 -e OUTPUT_LEN=128 --base-url http://127.0.0.1:8000
//   llmrun run stock:serving-point -e CONFIG=settings.json
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   NUM_PROMPTS      requests measured                     200
//   REQUEST_RATE     requests per second, or inf            inf
//   MAX_CONCURRENCY  requests in flight at most             (inf rate: 16)
//   INPUT_LEN        prompt length, exact tokens            256
//   OUTPUT_LEN       answer length, exact (ignore_eos)      128
//   RANGE_RATIO      lengths uniform in len·[1−r, 1+r]      0
//   WARMUP           warmup requests, excluded              0
//   MAX_VUS          VUs a finite rate may use at most      512
import llm from 'llm';
import { check, textSummary } from 'llmrun';
import { lengths, prompts } from 'data';
import { settings } from 'llmrun/config';

const p = settings({
  num_prompts: 200, request_rate: 'inf', max_concurrency: null, input_len: 256, output_len: 128,
  range_ratio: 0, warmup: 0, max_vus: 512,
});
const numPrompts = Number(p.num_prompts);
const rate = String(p.request_rate);
const maxConcurrency = p.max_concurrency === null ? undefined : p.max_concurrency;
const inputLen = Number(p.input_len);
const outputLen = Number(p.output_len);
const rangeRatio = Number(p.range_ratio);
const warmup = Number(p.warmup);
const maxVUs = Number(p.max_vus);
if (!(numPrompts >= 1)) throw new Error(`NUM_PROMPTS must be at least 1; got "${p.num_prompts}"`);
if (!(rangeRatio >= 0 && rangeRatio < 1)) throw new Error(`RANGE_RATIO must be in [0, 1); got "${p.range_ratio}"`);

// concurrency is the cap on requests in flight, printed as vLLM prints
// --max-concurrency; undefined for a rate without one.
let scenario;
let concurrency = maxConcurrency === undefined ? undefined : Number(maxConcurrency);
if (rate === 'inf') {
  if (concurrency === undefined) concurrency = 16;
  scenario = { executor: 'shared-iterations', vus: concurrency, iterations: numPrompts + warmup, maxDuration: '24h' };
} else {
  const r = Number(rate);
  if (!(r > 0)) throw new Error(`REQUEST_RATE must be a positive number or inf; got "${rate}"`);
  scenario = {
    executor: 'constant-arrival-rate',
    arrival: 'poisson',
    rate: r,
    timeUnit: '1s',
    duration: `${(numPrompts + warmup) / r}s`,
    preAllocatedVUs: Math.min(maxVUs, Math.ceil(r * 2) + 1),
    maxVUs,
  };
  if (concurrency !== undefined) scenario.maxConcurrency = concurrency;
}
scenario.warmup = warmup;
export const options = { scenarios: { serving: scenario } };

// around is len·[1 − r, 1 + r], uniform, as vLLM's --random-range-ratio.
function around(len) {
  const min = Math.max(1, Math.floor(len * (1 - rangeRatio)));
  return lengths.uniform({ min, max: Math.max(min, Math.floor(len * (1 + rangeRatio))) });
}
const inputLens = around(inputLen);
const outputLens = around(outputLen);

export default function () {
  const input = inputLens.sample();
  const out = outputLens.sample();
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(input) }],
    max_tokens: out,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: input, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok, 'answer has the asked length': (r) => r.outputTokens === out });
}

export function handleSummary(data) {
  const s = data.llmrun.serving;
  const lat = (metric) => (data.llmrun.latency || []).find((l) => l.metric === metric) || { mean_ms: 0, percentiles_ms: {} };
  const line = (label, value) => `${label.padEnd(40)}${String(value).padStart(10)}\n`;
  const ms = (v) => (v || 0).toFixed(2);
  let out = '\n' + '='.repeat(12) + ' Serving Benchmark Result ' + '='.repeat(12) + '\n';
  out += line('Successful requests:', s.completed);
  out += line('Failed requests:', s.failed);
  if (concurrency !== undefined) out += line('Maximum request concurrency:', concurrency);
  if (rate !== 'inf') out += line('Request rate configured (RPS):', Number(rate).toFixed(2));
  out += line('Benchmark duration (s):', s.duration_s.toFixed(2));
  out += line('Total input tokens:', s.total_input_tokens);
  out += line('Total generated tokens:', s.total_output_tokens);
  out += line('Request throughput (req/s):', s.request_throughput.toFixed(2));
  out += line('Output token throughput (tok/s):', s.output_throughput.toFixed(2));
  out += line('Total token throughput (tok/s):', s.total_token_throughput.toFixed(2));
  for (const [title, metric, name] of [['Time to First Token', 'llm_ttft', 'TTFT'], ['Time per Output Token (excl. 1st token)', 'llm_tpot', 'TPOT'], ['Inter-token Latency', 'llm_itl', 'ITL']]) {
    const l = lat(metric);
    out += '-'.repeat(15) + title + '-'.repeat(Math.max(0, 35 - title.length)) + '\n';
    out += line(`Mean ${name} (ms):`, ms(l.mean_ms));
    out += line(`Median ${name} (ms):`, ms(l.percentiles_ms.p50));
    out += line(`P99 ${name} (ms):`, ms(l.percentiles_ms.p99));
  }
  out += '='.repeat(50) + '\n';
  return { stdout: textSummary(data) + out };
}
