// The parts the stock sweeps share: the request each level sends, and the
// figures of each level read from the summary for their tables.
import llm from 'llm';
import { check } from 'llmrun';
import { prompts } from 'data';

// request sends one chat request of exactly inputTokens prompt tokens
// that answers with exactly outputTokens tokens, and checks it succeeded.
export function request(inputTokens, outputTokens) {
  const r = llm.stream({
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens) }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok });
}

// levelFigures reads the figures of the scenario named name from
// handleSummary's data: counts, throughputs, success and TTFT/TPOT
// percentiles in ms (0 when the level did not run).
export function levelFigures(data, name) {
  const sc = (data.llmrun.scenarios || []).find((s) => s.name === name);
  const row = (metric) => ((sc && sc.latency) || []).find((l) => l.metric === metric) || { percentiles_ms: {} };
  const s = sc ? sc.serving : {};
  return {
    ok: s.completed || 0,
    failed: s.failed || 0,
    rps: s.request_throughput || 0,
    tokps: s.output_throughput || 0,
    ttft50: row('llm_ttft').percentiles_ms.p50 || 0,
    ttft95: row('llm_ttft').percentiles_ms.p95 || 0,
    ttft99: row('llm_ttft').percentiles_ms.p99 || 0,
    tpot50: row('llm_tpot').percentiles_ms.p50 || 0,
    tpot99: row('llm_tpot').percentiles_ms.p99 || 0,
    success: s.requests ? s.completed / s.requests : 0,
  };
}

// capacityOf reads llmrun's capacity verdict from handleSummary's data (the
// console's "capacity" block), so that the tables state the same verdict:
// whether a level met the SLO, the best level within it, the saturation
// point, the SLO in words and the minimum gain the verdict used.
export function capacityOf(data) {
  const c = data.llmrun.capacity || { levels: [], slo: {} };
  const slo = c.slo || {};
  const bounds = [];
  if (slo.ttft_p99_ms) bounds.push(`TTFT p99 <= ${slo.ttft_p99_ms} ms`);
  if (slo.tpot_p99_ms) bounds.push(`TPOT p99 <= ${slo.tpot_p99_ms} ms`);
  return {
    meets: (name) => (c.levels.find((l) => l.scenario === name) || {}).meets_slo === true,
    best: c.max_within_slo || null,
    saturation: c.saturation || null,
    minGain: c.min_gain || 0.1,
    slo: bounds.length ? bounds.join(' and ') + ', success rate >= 99 %' : 'none given',
  };
}

// pad right-aligns v in w columns.
export const pad = (v, w) => String(v).padStart(w);
