// agentic: agentic sessions, each a conversation of TURNS turns in which
// the model calls a tool TOOL_CALLS times before it answers; the replies and
// tool calls go into the next request, the user thinks THINK_TIME between
// turns (idle, in no latency), and every request of a session carries its
// id in AFFINITY_HEADER. VUS sessions run at once, SESSIONS in all. After
// llmrun's summary, a table by turn: TTFT, context and prefix-cache share.
//
//   llmrun run stock:agentic -e SESSIONS=64 -e VUS=8 -e TURNS=6 -e THINK_TIME=2000 \
//     --base-url http://127.0.0.1:8000
//
// Parameters (-e NAME=value, or lower-case keys in the CONFIG file; -e wins):
//   SESSIONS         sessions in all                           32
//   VUS              sessions at once (at most SESSIONS)       4
//   TURNS            turns per session                         4
//   THINK_TIME       mean think time between turns, ms         0 (exponential)
//   TOOL_CALLS       tool calls per turn before the answer     1
//   USER_TOKENS      user message length, words                64
//   TOOL_TOKENS      tool message length, words                128
//   OUTPUT_TOKENS    answer length, tokens (ignore_eos)        64
//   AFFINITY_HEADER  the session id's header; '' sends none    x-session-id
import llm from 'llm';
import { check, textSummary } from 'llmrun';
import { settings } from 'llmrun/config';

const p = settings({
  sessions: 32, vus: 4, turns: 4, think_time: 0, tool_calls: 1,
  user_tokens: 64, tool_tokens: 128, output_tokens: 64, affinity_header: 'x-session-id',
});
const num = (name) => {
  const v = Number(p[name]);
  if (!(v >= 0) || !Number.isInteger(v)) throw new Error(`${name.toUpperCase()} must be a whole number ≥ 0; got "${p[name]}"`);
  return v;
};
const sessions = num('sessions');
const vus = Math.max(1, Math.min(num('vus'), sessions)); // a VU per session at most
const turns = num('turns');
const thinkTime = num('think_time');
const request = { max_tokens: num('output_tokens'), ignore_eos: true, temperature: 0 };

export const options = {
  scenarios: { agentic: { executor: 'shared-iterations', vus, iterations: sessions, maxDuration: '24h' } },
  // A threshold per turn shows each turn's figures in the summary.
  thresholds: Object.fromEntries(Array.from({ length: turns }, (_, k) => [
    [`llm_ttft{turn:${k + 1}}`, ['max>=0']],
    [`llm_session_context_tokens{turn:${k + 1}}`, ['max>=0']],
    [`llm_session_cache_hit{turn:${k + 1}}`, ['max>=0']],
  ]).flat()),
};

const source = llm.sessions({
  turns,
  thinkTime: () => -thinkTime * Math.log(1 - Math.random()),
  toolCalls: num('tool_calls'),
  userTokens: num('user_tokens'),
  toolTokens: num('tool_tokens'),
  affinityHeader: String(p.affinity_header),
  system: 'You are an agent. Use the tools when asked.',
});

export default function () {
  const s = source.run(request);
  check(s, { 'session completed': (s) => s.ok && s.turns.length === turns });
}

// handleSummary adds a table by turn: its requests' TTFT, the context they
// sent (the server's prompt tokens) and the share of it the prefix cache
// served ("-" where the server does not say).
export function handleSummary(data) {
  const values = (name, turn) => (data.metrics[`${name}{turn:${turn}}`] || { values: {} }).values;
  const cell = (v, digits) => (v === undefined ? '-' : v.toFixed(digits));
  const row = (cells) => cells.map((c, k) => String(c).padStart(k === 0 ? 4 : 14)).join('') + '\n';
  let out = '\nagentic sessions by turn\n' + row(['turn', 'requests', 'TTFT p50 ms', 'TTFT p99 ms', 'context avg', 'cached avg %']);
  for (let turn = 1; turn <= turns; turn++) {
    const ttft = values('llm_ttft', turn);
    if (!ttft.count) break;
    const hit = values('llm_session_cache_hit', turn).avg;
    out += row([turn, ttft.count, cell(ttft.med, 1), cell(ttft['p(99)'], 1),
      cell(values('llm_session_context_tokens', turn).avg, 0), cell(hit === undefined ? undefined : hit * 100, 1)]);
  }
  return { stdout: textSummary(data) + out };
}
