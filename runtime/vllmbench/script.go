package vllmbench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/runtime/executor"
)

// maxInfVUs bounds the VUs of a run at --request-rate inf without
// --max-concurrency: vLLM then has every request in flight at once; llmrun
// at most this many, each VU a JavaScript runtime of its own.
const maxInfVUs = 1024

// ScenarioName is the name of the run's one scenario.
const ScenarioName = "bench"

// script is the benchmark's scenario: params and the scenario are
// filled in as JSON.
const script = `// llmrun bench: vllm bench serve's benchmark (runtime/vllmbench).
import llm from 'llm';
import { prompts, dataset, images } from 'data';
import { sequence, lengths, prefix, images as imageSizes } from '%s';

const p = %s;
export const options = { scenarios: { %s: %s } };

// Each request is numbered (sequence) in the order it starts, and its
// lengths and text are those of its number, drawn from the seed: the
// same in every run of the seed, however the VUs shared the requests.
let next;
if (p.dataset === 'random' || p.dataset === 'random-mm') {
  const shared = p.prefixLen > 0 ? prompts.sharedPrefix({ groups: 1, prefixTokens: p.prefixLen }) : null;
  next = (i) => {
    const [n, out] = lengths(i);
    const text = shared ? shared.prompt(n, 0, { draw: i }).text : prompts.synthetic(n, { draw: i });
    return { text, tokens: p.prefixLen + n, out };
  };
} else if (p.dataset === 'random-rerank') {
  // One query for the run; request i sends documents i·b to i·b + b − 1
  // (the warmups repeat the first requests').
  const query = prompts.synthetic(p.queryLen, { draw: 0 });
  next = (i) => {
    const first = (i %% p.requests) * p.batch;
    const documents = [];
    for (let j = first; j < Math.min(first + p.batch, p.docs); j++) documents.push(prompts.synthetic(lengths(j)[0], { draw: j + 1 }));
    return { query, documents };
  };
} else if (p.dataset === 'prefix_repetition') {
  const shared = p.prefixLen > 0 ? prompts.sharedPrefix({ groups: p.numPrefixes, prefixTokens: p.prefixLen }) : null;
  next = (i) => {
    const group = prefix(i);
    const text = shared ? shared.prompt(p.suffixLen, group, { draw: i }).text : prompts.synthetic(p.suffixLen, { draw: i });
    return { text, tokens: p.prefixLen + p.suffixLen, out: p.outputLen };
  };
} else if (p.dataset === 'timed_trace') {
  // The trace-replay executor passes each record; its prompt shares
  // exactly the blocks of its hash ids with the records before it.
  next = (i, record) => {
    const pr = prompts.fromHashIds(record, { blockSize: p.blockSize });
    return { text: pr.text, tokens: pr.tokens, out: p.outputLen || record.outputTokens };
  };
} else {
  const records = dataset(p.path, { format: p.format });
  next = (i) => {
    const r = records.get(i %% records.length);
    return { text: r.prompt, tokens: r.promptTokens, out: p.outputLen || r.outputTokens || 128 };
  };
}

export default function (data, record) {
  const i = sequence();
  const r = next(i, record);
  let body;
  if (p.api === 'rerank') {
    // As vLLM's: no pair is refused for its length.
    body = { query: r.query, documents: r.documents, truncate_prompt_tokens: -1 };
  } else if (p.api === 'responses') {
    body = { input: r.text, max_output_tokens: r.out };
  } else {
    body = p.api === 'chat' ? { messages: [{ role: 'user', content: r.text }] } : { prompt: r.text };
    if (p.dataset === 'random-mm') {
      // Image j of request i is image set number i × maxImages + j of the seed.
      const parts = imageSizes(i).map(([width, height], j) => images.synthetic({ width, height, draw: i * p.maxImages + j })[0].part);
      body.messages[0].content = [{ type: 'text', text: r.text }, ...parts];
      r.tokens = null; // the server counts the images' tokens in the prompt too
    }
    body.max_tokens = r.out;
  }
  if (p.api === 'completions' && p.logprobs !== null) body.logprobs = p.logprobs;
  if (p.ignoreEOS) body.ignore_eos = true;
  Object.assign(body, p.sampling, p.extraBody);
  // The Collector receives the request's result from the llm module
  // (engine.Config.Results), not from the script.
  const opts = { uniquePrompt: p.uniquePrompt, text: p.keepText };
  if (p.api === 'responses') opts.api = p.api;
  if (p.requestIdPrefix !== '') opts.headers = { 'x-request-id': p.requestIdPrefix + i };
  if (typeof r.tokens === 'number') opts.promptTokens = r.tokens;
  llm.stream(body, opts);
}
`

// datasetFormats are the data module's formats of the file datasets
// --dataset-name names: custom is vLLM's JSONL of prompts.
var datasetFormats = map[string]data.Format{"sharegpt": data.FormatShareGPT, "custom": data.FormatJSONL}

// PreloadDataset loads o's dataset file, at datasetPath (absolute), into
// the run's data module as the script will ask for it, in the format
// --dataset-name says: a file that cannot be read so is an error naming
// the flags, before the run, not a line of the generated script. It does
// nothing for the generated datasets. The load (the wait for a named
// pipe's writer) ends when ctx does.
func PreloadDataset(ctx context.Context, dm *data.Module, o Options, datasetPath string) error {
	format, ok := datasetFormats[o.DatasetName]
	if !ok {
		return nil
	}
	if err := dm.Preload(ctx, datasetPath, format); err != nil {
		return fmt.Errorf("--dataset-path %s (--dataset-name %s): %w", o.DatasetPath, o.DatasetName, err)
	}
	return nil
}

// Script returns the run's script for o, which imports the Collector's
// module (ModuleName): one scenario that sends exactly
// o.NumWarmups + o.NumPrompts requests. With an infinite rate, they are
// shared by o.MaxConcurrency VUs (at most maxInfVUs without it), each
// sending its next as soon as its last ended; with a finite rate, a
// constant-arrival-rate scenario starts them at gaps drawn from the
// gamma process of o.Burstiness (Poisson at 1), rescaled so that the last
// starts at exactly their number / o.RequestRate, waiting at
// o.MaxConcurrency (maxInfVUs without it) in flight. Each request's
// lengths and prefix are the Collector's (NewCollector), held once for
// the run rather than in the script every VU evaluates. datasetPath is
// o.DatasetPath as the run opens it (absolute).
func Script(o Options, datasetPath string) ([]byte, error) {
	params := map[string]any{
		"dataset": o.DatasetName, "path": datasetPath, "api": o.api(),
		"prefixLen": o.RandomPrefixLen, "outputLen": o.OutputLen,
		"ignoreEOS": o.IgnoreEOS || o.DatasetName == "random" || o.DatasetName == "random-mm", "sampling": o.Sampling, "extraBody": o.ExtraBody,
		"logprobs": o.Logprobs, "requestIdPrefix": o.RequestIDPrefix,
		"keepText": o.SaveDetailed, "uniquePrompt": o.DatasetName != "prefix_repetition" && o.RandomPrefixLen == 0,
	}
	switch o.DatasetName {
	case "random": // its lengths are the Collector's (NewCollector)
	case RerankDataset: // the documents' lengths are the Collector's
		docs, per := o.rerankDocs()
		query, _ := o.rerankLengths(0)
		params["queryLen"], params["docs"], params["batch"], params["requests"] = query, docs, per, o.requests()
		params["ignoreEOS"], params["uniquePrompt"] = false, false
	case "random-mm": // its lengths and images' sizes too
		params["maxImages"] = maxImagesPerRequest
	case TimedTraceDataset: // its timing is the trace's (traceSchedule)
		// Its prompts share the blocks of their hash ids: not unique.
		params["blockSize"], params["uniquePrompt"] = o.TimedTrace.ChunkHashSize, false
	case "prefix_repetition":
		pr := o.PrefixRepetition
		params["prefixLen"], params["suffixLen"], params["numPrefixes"] = pr.PrefixLen, pr.SuffixLen, pr.NumPrefixes
		params["outputLen"] = pr.OutputLen
	default:
		// --dataset-name, not the file's extension, says how it is read.
		params["prefixLen"], params["format"] = 0, datasetFormats[o.DatasetName]
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("the benchmark's parameters: %w", err)
	}
	sc := o.scenario()
	if o.DatasetName == TimedTraceDataset {
		sc = o.traceSchedule(datasetPath)
	}
	sj, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("the benchmark's scenario: %w", err)
	}
	return fmt.Appendf(nil, script, ModuleName, pj, ScenarioName, sj), nil
}

// scenario is the run's scenario, as options.scenarios takes it: its
// first o.NumWarmups iterations are llmrun's warmup, in no figure.
func (o Options) scenario() map[string]any {
	sc := o.schedule()
	sc["iterations"] = o.requests() + o.NumWarmups
	if o.NumWarmups > 0 {
		sc["warmup"] = o.NumWarmups
	}
	return sc
}

// schedule is the scenario's executor and when its iterations start.
func (o Options) schedule() map[string]any {
	if math.IsInf(o.RequestRate, 1) {
		vus := o.inFlight()
		// No time bound short of llmrun's longest: the scenario ends
		// when its iterations have.
		return map[string]any{"executor": "shared-iterations", "vus": vus, "maxDuration": executor.DurationLimit.String()}
	}
	// normalize: the gaps rescaled so that the last arrival falls at
	// exactly (warmups + prompts) / rate, as vLLM's get_request does
	// without a ramp-up. The duration is llmrun's longest, not that
	// last arrival's: an arrival waiting for --max-concurrency may start
	// later, and the scenario ends with its last request anyway
	// (checkSchedule refuses a last arrival beyond it).
	sc := map[string]any{
		"executor": "constant-arrival-rate", "rate": o.RequestRate, "timeUnit": "1s",
		"duration": executor.DurationLimit.String(), "arrival": "poisson", "normalize": true,
	}
	if o.Burstiness != 1 {
		sc["arrival"], sc["burstiness"] = "gamma", o.Burstiness
	}
	// At the cap, arrivals wait: none is dropped, as none is in vLLM.
	limit := o.inFlight()
	sc["preAllocatedVUs"] = min(limit, int(math.Ceil(o.RequestRate))+1)
	sc["maxVUs"], sc["maxConcurrency"] = limit, limit
	return sc
}

// inFlight is the most requests a run of o has in flight: its requests
// and warmups, at most --max-concurrency, or maxInfVUs without it.
func (o Options) inFlight() int {
	limit := maxInfVUs
	if o.MaxConcurrency > 0 {
		limit = o.MaxConcurrency
	}
	return min(o.requests()+o.NumWarmups, limit)
}

// checkSchedule refuses, at a finite rate, a run whose last request would
// start after llmrun's longest duration, the scenario's (schedule).
func (o Options) checkSchedule() error {
	if math.IsInf(o.RequestRate, 1) {
		return nil
	}
	if secs := float64(o.requests()+o.NumWarmups) / o.RequestRate; secs+1 > executor.DurationLimit.Seconds() {
		return fmt.Errorf("--num-prompts %d (with %d warmups) at --request-rate %v: the last request would start after %.0f s, beyond llmrun's limit of %s (365 days) for a run (see docs/limits.md)",
			o.NumPrompts, o.NumWarmups, o.RequestRate, secs, executor.DurationLimit)
	}
	return nil
}
