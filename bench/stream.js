// stream.js: the load of bench/e2eload. Each VU streams one chat answer of
// exactly TOKENS tokens after another.
import llm from 'llm';

const tokens = Number(__ENV.TOKENS || 256);

export default function () {
  llm.stream({
    messages: [{ role: 'user', content: 'Benchmark prompt.' }],
    max_tokens: tokens,
    ignore_eos: true,
    temperature: 0,
  });
}
