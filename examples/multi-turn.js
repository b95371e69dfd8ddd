// multi-turn.js: users hold conversations. Each iteration is one
// conversation of TURNS turns; every turn sends the whole history so far
// (the previous questions and the model's real answers), after a think
// time, so prompts grow turn by turn — and a server with prefix caching
// serves the history from its cache (see cached tokens in the summary).
// Each request is tagged turn=N: the thresholds below show TTFT per turn.
//
//   llmrun run examples/multi-turn.js
//   llmrun run examples/multi-turn.js --base-url http://gpu-box:8000 -e VUS=64 -e THINK=5s
//
// Parameters: VUS (default 8), DURATION (default 1m), TURNS (default 4),
// THINK (mean think time between turns, default 1s).
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';
import { seconds } from 'llmrun/config';

const turns = Number(__ENV.TURNS || 4);
const thinkMs = 1000 * seconds(__ENV.THINK || '1s');

const perTurn = {};
for (let t = 1; t <= turns; t++) perTurn[`llm_ttft{turn:${t}}`] = ['p(95) < 2000'];

export const options = {
  scenarios: {
    conversations: {
      executor: 'constant-vus',
      vus: Number(__ENV.VUS || 8),
      duration: __ENV.DURATION || '1m',
    },
  },
  thresholds: { ...perTurn, 'llm_failed': ['rate < 0.01'] },
};

const questionLen = lengths.lognormal({ median: 60, sigma: 0.6, min: 8, max: 512 });

export default function () {
  const chat = llm.conversation({
    system: 'You are a concise assistant.',
    // Exponential think times around THINK: people do not pause evenly.
    thinkTime: () => -thinkMs * Math.log(1 - Math.random()),
  });
  for (let t = 0; t < turns; t++) {
    const r = chat.send(prompts.synthetic(questionLen.sample()), { max_tokens: 128, ignore_eos: true, temperature: 0 });
    if (!check(r, { 'turn succeeded': (r) => r.ok })) break; // a conversation does not go on past a failed turn
  }
}
