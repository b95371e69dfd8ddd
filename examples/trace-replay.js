// trace-replay.js: replay a production trace with its own timing. Each
// record of the trace (here a small one in Mooncake's format) starts one
// request at the record's timestamp, with a prompt of its input length
// built from its hash_ids (requests that share hash ids share those
// 512-token blocks, so the server's prefix cache is hit as in
// production) and a reply of its output length. The summary prints the
// prefix-cache hit rate the trace implies beside the server's. Late
// starts show in iteration_lag, records no VU was free for in
// dropped_iterations.
//
//   llmrun run examples/trace-replay.js
//   llmrun run examples/trace-replay.js --base-url http://gpu-box:8000 --tokenizer meta-llama/Llama-3.1-8B-Instruct -e TRACE=/data/mooncake_trace.jsonl -e SPEED=2
//
// Parameters: TRACE (the trace file, default the sample beside this
// script), SPEED (default 1: 2 replays twice as fast), LIMIT (replay at
// most this many records), MAX_VUS (default 64: the most requests in
// flight; a record that finds them all busy is dropped).
// docs/workloads.md#replaying-a-trace lists the formats.
import llm from 'llm';
import { prompts } from 'data';

export const options = {
  scenarios: {
    replay: {
      executor: 'trace-replay',
      trace: __ENV.TRACE || 'data/mooncake-trace.jsonl',
      speed: Number(__ENV.SPEED || 1),
      ...(__ENV.LIMIT ? { limit: Number(__ENV.LIMIT) } : {}),
      preAllocatedVUs: 16,
      maxVUs: Number(__ENV.MAX_VUS || 64),
    },
  },
};

/**
 * @param {unknown} data
 * @param {import('llmrun').TraceRecord} record
 */
export default function (data, record) {
  const p = prompts.fromHashIds(record);
  // The completions API, not chat: a chat template would add tokens before
  // the first block, so the prompt would be longer than the record says and
  // its blocks would not start where the server's cache blocks do.
  llm.stream({
    prompt: p.text,
    max_tokens: record.outputTokens,
    ignore_eos: true,
  });
}
