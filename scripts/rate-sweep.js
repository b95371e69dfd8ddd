// rate-sweep: Poisson request arrivals at growing rates, one rate after
// another, to find the highest rate a server sustains within an SLO. Each
// rate is a scenario named r<RATE>, started as soon as the rate before it
// has ended (startAfter): no rate waits on a clock. llmrun's summary leads
// with the verdict, the highest rate whose TTFT p99 (and TPOT p99, when
// given) meets the SLO, and a row per rate.
//
//   llmrun run stock:rate-sweep -e RATES=1,2,4,8,16,32,64 -e STEP=60s -e SLO_TTFT_P99=2000
//   llmrun run stock:rate-sweep -e CONFIG=bench_config.toml -e STOP=slo
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   RATES            request rates, per second            1,2,4,8,16
//   STEP             how long each rate runs              30s
//   PROMPTS          requests per rate instead of STEP     (unset)
//                    (the rate's duration is PROMPTS/RATE)
//   PAUSE            the most a rate may take to drain    30s
//                    its requests in flight (its
//                    gracefulStop); the next rate starts
//                    as soon as they have drained
//   WARMUP           warmup requests at each rate         0
//   INPUT_TOKENS     prompt length, exact tokens          256
//   OUTPUT_TOKENS    answer length (ignore_eos)           128
//   SLO_TTFT_P99     TTFT p99 bound, ms                   2000
//   SLO_TPOT_P99     TPOT p99 bound, ms                   (none)
//   MAX_VUS          VUs each rate may use at most        512
//   MAX_CONCURRENCY  cap on requests in flight            (none)
//   STOP             skip the remaining rates once a      never
//                    rate misses the SLO (slo), or once
//                    saturation is shown (saturation), or
//                    run them all (never)
import { request } from './lib/sweep.js';
import { settings, seconds } from 'llmrun/config';

const p = settings({
  rates: [1, 2, 4, 8, 16], step: '30s', prompts: null, pause: '30s', warmup: 0,
  input_tokens: 256, output_tokens: 128, slo_ttft_p99: 2000, slo_tpot_p99: null,
  max_vus: 512, max_concurrency: null, stop: 'never',
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
rates.forEach((rate, i) => {
  if (!(rate > 0)) throw new Error(`RATES must be positive numbers; got "${p.rates}"`);
  if (scenarios[`r${rate}`]) throw new Error(`RATES must not repeat a rate; got "${p.rates}"`);
  const duration = p.prompts !== null ? Number(p.prompts) / rate : seconds(p.step);
  const sc = {
    executor: 'constant-arrival-rate',
    arrival: 'poisson',
    rate,
    timeUnit: '1s',
    duration: `${duration}s`,
    preAllocatedVUs: Math.min(maxVUs, Math.ceil(rate * 2) + 1),
    maxVUs,
    startAfter: i > 0 ? `r${rates[i - 1]}` : undefined,
    gracefulStop: `${pause}s`,
    warmup,
    tags: { rate: String(rate) },
  };
  if (p.max_concurrency !== null) sc.maxConcurrency = Number(p.max_concurrency);
  scenarios[`r${rate}`] = sc;
});
// The SLO and STOP go to llmrun's capacity verdict, which the summary
// prints first: one verdict (--slo, when given, wins over the SLO).
export const options = { scenarios, slo: { ttft_p99: sloTTFT, tpot_p99: sloTPOT }, capacity: { stop: String(p.stop) } };

export default function () {
  request(inputTokens, outputTokens);
}
