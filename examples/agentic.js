// Agentic sessions: each iteration is one session of 3 to 6 turns; in each
// turn the model calls a tool once before it answers, its replies and tool
// calls go into the next request, the user thinks about 1 s between turns,
// and every request carries the session's id in x-session-id.
//
//   llmrun run examples/agentic.js                   # on the built-in simulator
//   llmrun run -e THINK_MS=200 examples/agentic.js   # shorter pauses
import llm from 'llm';
import { check } from 'llmrun';
import { lengths } from 'data';

export const options = {
  vus: 2,
  iterations: 6,
  thresholds: {
    'llm_ttft{turn:1}': ['p(95)<2000'],
    'llm_ttft{turn:3}': ['p(95)<2000'],
    'llm_session_cache_hit{turn:3}': ['avg>0'],
  },
};

const agent = llm.sessions({
  turns: lengths.uniform({ min: 3, max: 6 }),
  thinkTime: () => -Number(__ENV.THINK_MS || 1000) * Math.log(1 - Math.random()),
  userTokens: lengths.lognormal({ mean: 48, sigma: 0.5 }),
  toolCalls: 1,
  toolTokens: 96,
});

export default function () {
  const s = agent.run({ max_tokens: 48 });
  check(s, { 'session completed': (s) => s.ok });
}
