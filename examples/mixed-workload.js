// mixed-workload.js: the traffic a shared inference service really sees —
// chat, RAG and code generation at once, each with its own arrival rate,
// model, lengths, tags and SLOs. The summary has a row per workload (one
// scenario each), and each workload's thresholds select its own requests.
//
//   llmrun run examples/mixed-workload.js
//   llmrun run examples/mixed-workload.js --base-url http://gpu-box:8000 \
//       -e CHAT_MODEL=llama-3-8b -e RAG_MODEL=llama-3-70b -e CODE_MODEL=qwen-coder
//
// Parameters: DURATION (default 1m); CHAT_RATE, RAG_RATE, CODE_RATE
// (requests/s: 6, 2, 1); CHAT_MODEL, RAG_MODEL, CODE_MODEL (default: the
// run's --model).
import llm from 'llm';
import { check } from 'llmrun';
import { lengths, prompts } from 'data';

const duration = __ENV.DURATION || '1m';

function workload(name, rate, exec) {
  return {
    executor: 'constant-arrival-rate',
    arrival: 'poisson',
    rate: Number(rate),
    duration,
    preAllocatedVUs: 16,
    maxVUs: 128,
    exec,
    tags: { workload: name },
  };
}

export const options = {
  scenarios: {
    chat: workload('chat', __ENV.CHAT_RATE || 6, 'chat'),
    rag: workload('rag', __ENV.RAG_RATE || 2, 'rag'),
    code: workload('code', __ENV.CODE_RATE || 1, 'code'),
  },
  thresholds: {
    'llm_ttft{scenario:chat}': ['p(99) < 1000'],
    'llm_ttft{scenario:rag}': ['p(95) < 2000'],
    'llm_tpot{scenario:code}': ['p(99) < 60'],
    'llm_failed': ['rate < 0.01'],
  },
};

const clients = {
  chat: llm.client({ model: __ENV.CHAT_MODEL }),
  rag: llm.client({ model: __ENV.RAG_MODEL }),
  code: llm.client({ model: __ENV.CODE_MODEL }),
};

const chatPrompt = lengths.lognormal({ median: 120, sigma: 0.7, min: 8, max: 2048 });
const chatAnswer = lengths.lognormal({ median: 250, sigma: 0.4, min: 32, max: 1024 });
const ragContext = lengths.lognormal({ median: 3000, sigma: 0.5, min: 500, max: 16000 });
const codePrompt = lengths.normal({ mean: 150, stddev: 40, min: 40, max: 400 });

function send(client, inputTokens, outputTokens) {
  const r = client.stream({
    messages: [{ role: 'user', content: prompts.synthetic(inputTokens) }],
    max_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
  }, { promptTokens: inputTokens, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok });
  return r;
}

export function chat() {
  send(clients.chat, chatPrompt.sample(), chatAnswer.sample());
}

export function rag() {
  send(clients.rag, ragContext.sample(), 64);
}

export function code() {
  send(clients.code, codePrompt.sample(), 512);
}
