// TypeScript declarations of llmrun's script API: the modules a script
// imports ('llm', 'llmrun', 'llmrun/config', 'data', 'metrics') and the
// globals every script sees (__ENV, __VU, __ITER, open, console).
// Written by "llmrun types"; keep this file beside your scripts with the
// jsconfig.json written with it, and your editor completes and checks
// .js and .ts scripts. Times are milliseconds unless a comment says
// otherwise. The scripting guide is docs/scripting.md.

/** A duration: a string with a unit (`'30s'`, `'1m30s'`, `'500ms'`) or a number of milliseconds. */
type LlmrunDuration = string | number;

/** Tags: names and values added to samples. Values are written as text. */
type LlmrunTags = { [name: string]: string | number | boolean };

/**
 * The variables of the environment and of `-e NAME=VALUE`, which win.
 * Read-only: assigning or deleting one throws a TypeError; copy it first
 * (`const env = { ...__ENV }`).
 */
declare var __ENV: { readonly [name: string]: string | undefined };
/** The VU's number, from 1; 0 in setup(), teardown(), handleSummary() and the init code that reads the options. */
declare var __VU: number;
/** The VU's iteration in its current scenario, from 0. */
declare var __ITER: number;
/**
 * Reads a file, in init code only (the top level of the script): as a
 * string, or with mode `'b'` as an ArrayBuffer. A relative path is
 * relative to the directory of the file whose code calls open(). At most
 * 256 MiB.
 */
declare function open(path: string): string;
declare function open(path: string, mode: 'b'): ArrayBuffer;

/** The script's logger: each call writes one line to llmrun's log, with the VU's number. */
interface Console {
  /** Logs at level info. Strings as they are, errors and functions as text, other objects as JSON. */
  log(...data: any[]): void;
  /** Logs at level info. */
  info(...data: any[]): void;
  /** Logs at level debug. */
  debug(...data: any[]): void;
  /** Logs at level warn. */
  warn(...data: any[]): void;
  /** Logs at level error. */
  error(...data: any[]): void;
}
declare var console: Console;

/** The LLM client: requests, clients of their own and multi-turn conversations. */
declare module 'llm' {
  /**
   * The wire protocol of a request: `chat` (POST /v1/chat/completions),
   * `completions` (/v1/completions), `ollama-chat` (/api/chat),
   * `ollama-generate` (/api/generate), `tgi` (/generate_stream),
   * `anthropic` (/v1/messages), `triton` (/v2/models/{model}/generate_stream),
   * `embeddings` (/v1/embeddings),
   * `rerank` (/v1/rerank), `tei-rerank` (TEI's /rerank), `responses` (/v1/responses).
   */
  export type API = 'chat' | 'completions' | 'ollama-chat' | 'ollama-generate' | 'tgi' | 'anthropic' | 'triton' | 'embeddings'
    | 'rerank' | 'tei-rerank' | 'responses';

  /** Why a request failed; docs/metrics.md defines each class. */
  export type ErrorClass =
    | 'connect' | 'dns' | 'tls' | 'timeout' | 'idle_timeout' | 'http_4xx' | 'http_429' | 'http_5xx'
    | 'stream_error' | 'cut' | 'decode' | 'invalid_request' | 'canceled';

  /** Where a result's outputTokens came from: the server's usage, the client's tokenizer, or one per chunk. */
  export type TokenSource = 'usage' | 'tokenizer' | 'chunks';

  /** A part of a chat message's content: text, an image (OpenAI's and vLLM's image_url, which data's images give as `part`), or another the server knows. */
  export type ContentPart =
    | { type: 'text'; text: string }
    | { type: 'image_url'; image_url: { url: string; detail?: string } }
    | { type: string; [field: string]: unknown };

  /** A message of a chat request. */
  export interface ChatMessage {
    /** Who speaks: `system`, `user`, `assistant`, `tool` (or another role the server knows). */
    role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | (string & {});
    /** The text, or parts (`[{ type: 'text', text }]`, images); null for an assistant's tool calls alone. */
    content: string | ContentPart[] | null;
    /** The speaker's name. */
    name?: string;
    /** An assistant message's tool calls, as OpenAI writes them. */
    tool_calls?: object[];
    /** A tool message's answer to this call. */
    tool_call_id?: string;
  }

  /** A tool the model may call (OpenAI's format). */
  export interface Tool {
    type: 'function';
    function: { name: string; description?: string; parameters?: object; strict?: boolean };
  }

  /**
   * The fields of an OpenAI-compatible request (vLLM, SGLang, llama.cpp,
   * gateways) that llmrun's users send most. Sent as they are; the
   * client adds `stream: true`, `stream_options: { include_usage: true }`
   * and its model where the body leaves them out. A field a server takes
   * that is not listed here goes in `extra_body`.
   */
  export interface OpenAIBody {
    /** The model; default the client's (`--model`, or llm.client()'s `model`). */
    model?: string;
    /** The most tokens to generate. */
    max_tokens?: number;
    /** The most tokens to generate, reasoning included (OpenAI's newer name). */
    max_completion_tokens?: number;
    /** vLLM: the fewest tokens to generate before an end-of-sequence may stop the answer. */
    min_tokens?: number;
    /** vLLM, SGLang: go on past the end-of-sequence token, so that the answer has exactly max_tokens tokens. */
    ignore_eos?: boolean;
    /** Sampling temperature; 0 is greedy. */
    temperature?: number;
    /** Nucleus sampling: the probability mass kept. */
    top_p?: number;
    /** vLLM, SGLang: sample among the k likeliest tokens only. */
    top_k?: number;
    /** vLLM: the least probability of a token, relative to the likeliest. */
    min_p?: number;
    /** Answers generated per request. */
    n?: number;
    /** Stop sequences. */
    stop?: string | string[];
    /** vLLM: token ids that stop the answer. */
    stop_token_ids?: number[];
    /** The sampling seed. */
    seed?: number;
    presence_penalty?: number;
    frequency_penalty?: number;
    /** vLLM, SGLang: penalty on tokens already in the prompt or the answer (1: none). */
    repetition_penalty?: number;
    logit_bias?: { [token: string]: number };
    logprobs?: boolean | number;
    top_logprobs?: number;
    /** false: a non-streamed request, whose TTFT is its E2E. Default true. */
    stream?: boolean;
    /** Added as `{ include_usage: true }` unless given. */
    stream_options?: { include_usage?: boolean; continuous_usage_stats?: boolean };
    /** `{ type: 'json_object' }` or a JSON schema the answer must follow. */
    response_format?: object;
    /** Tools the model may call; their calls are in the result's toolCalls. */
    tools?: Tool[];
    tool_choice?: 'none' | 'auto' | 'required' | object;
    parallel_tool_calls?: boolean;
    /** For reasoning models: `'low'`, `'medium'` or `'high'`. */
    reasoning_effort?: string;
    /** vLLM, SGLang: arguments of the chat template (`{ enable_thinking: false }`). */
    chat_template_kwargs?: object;
    /** vLLM: keep special tokens in the text. */
    skip_special_tokens?: boolean;
    /** vLLM: keep the stop string in the text. */
    include_stop_str_in_output?: boolean;
    /** The end user, for the server's logs. */
    user?: string;
    /** Fields lifted into the body as they are (as OpenAI's Python client does): any field a server takes. */
    extra_body?: object;
  }

  /** A chat request (`chat`, the default when the body has `messages`). */
  export interface ChatBody extends OpenAIBody {
    /** The conversation so far. */
    messages: ChatMessage[];
  }

  /** A completions request (`completions`, the default when the body has `prompt`). */
  export interface CompletionBody extends OpenAIBody {
    /** The prompt: text, texts, or token ids. */
    prompt: string | string[] | number[];
    /** Echo the prompt before the answer. */
    echo?: boolean;
    /** Text after the completion (fill in the middle). */
    suffix?: string;
    best_of?: number;
  }

  /** Ollama's model options (`options`): num_predict, temperature, ... */
  export interface OllamaOptions {
    /** The most tokens to generate. */
    num_predict?: number;
    temperature?: number;
    top_p?: number;
    top_k?: number;
    seed?: number;
    stop?: string[];
    /** The context window, in tokens. */
    num_ctx?: number;
    repeat_penalty?: number;
  }

  /** The fields Ollama's chat and generate requests share. */
  export interface OllamaBody {
    /** The model; default the client's. */
    model?: string;
    options?: OllamaOptions;
    /** false: one JSON answer. Default true. */
    stream?: boolean;
    /** `'json'` or a JSON schema. */
    format?: string | object;
    /** How long the model stays loaded: `'5m'`, or seconds. */
    keep_alive?: string | number;
    /** Thinking models: think before answering. */
    think?: boolean;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /** Ollama's POST /api/chat (api `ollama-chat`). */
  export interface OllamaChatBody extends OllamaBody {
    messages: ChatMessage[];
    tools?: Tool[];
  }

  /** Ollama's POST /api/generate (api `ollama-generate`). */
  export interface OllamaGenerateBody extends OllamaBody {
    prompt: string;
    system?: string;
    template?: string;
    /** Send the prompt without the model's template. */
    raw?: boolean;
    /** Base64 images, for multimodal models. */
    images?: string[];
  }

  /** Hugging Face Text Generation Inference (api `tgi`): `{ inputs, parameters }`. */
  export interface TGIBody {
    /** The prompt. */
    inputs: string;
    /** Generation parameters; `details: true` is added unless given. */
    parameters?: {
      max_new_tokens?: number;
      temperature?: number;
      top_p?: number;
      top_k?: number;
      seed?: number;
      stop?: string[];
      do_sample?: boolean;
      repetition_penalty?: number;
      details?: boolean;
      decoder_input_details?: boolean;
      return_full_text?: boolean;
      truncate?: number;
    };
    /** false: POST /generate, one JSON answer. */
    stream?: boolean;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /** Anthropic's Messages API (api `anthropic`): POST /v1/messages. */
  export interface AnthropicBody {
    /** The model; default the client's. */
    model?: string;
    /** Required, as Anthropic requires it: a body without it fails as invalid_request, unsent. */
    max_tokens: number;
    messages: { role: 'user' | 'assistant'; content: string | object[] }[];
    /** The system prompt. */
    system?: string | object[];
    temperature?: number;
    top_p?: number;
    top_k?: number;
    stop_sequences?: string[];
    /** `{ type: 'enabled', budget_tokens: 1024 }` for extended thinking. */
    thinking?: object;
    tools?: object[];
    tool_choice?: object;
    metadata?: object;
    /** false: one JSON message. Default true. */
    stream?: boolean;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /**
   * NVIDIA Triton's generate extension (api `triton`). The model is in
   * the path (`model`, else the client's); the rest is the model's
   * inputs; inputs not listed here go in `extra_body`.
   */
  export interface TritonBody {
    /** The model, taken out of the body into the path; default the client's. */
    model?: string;
    /** The model's version, for /v2/models/{model}/versions/{version}/... */
    model_version?: string;
    /** The prompt. */
    text_input: string;
    /** TensorRT-LLM's ensemble: the most tokens to generate. */
    max_tokens?: number;
    bad_words?: string | string[];
    stop_words?: string | string[];
    temperature?: number;
    top_p?: number;
    top_k?: number;
    /** false: POST .../generate, one JSON answer. Default true. */
    stream?: boolean;
    /** The vLLM backend's sampling parameters (`{ max_tokens: 128 }`); `stream` is added unless given. */
    parameters?: { [name: string]: string | number | boolean };
    /** The vLLM backend: report the output tokens (then outputTokens are the server's count). */
    return_num_output_tokens?: boolean;
    /** The vLLM backend: report the prompt's tokens. */
    return_num_input_tokens?: boolean;
    /** The vLLM backend: report the finish reason. */
    return_finish_reason?: boolean;
    /** Extra inputs, lifted into the body. */
    extra_body?: object;
  }

  /** An embeddings request (api `embeddings`): POST /v1/embeddings, never streamed. */
  export interface EmbeddingsBody {
    /** The model; default the client's. */
    model?: string;
    /** What to embed: a text, texts, or token ids. */
    input: string | string[] | number[] | number[][];
    /** `'float'` or `'base64'` (4 bytes a dimension). */
    encoding_format?: 'float' | 'base64';
    dimensions?: number;
    user?: string;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /** A rerank request (api `rerank`): vLLM's (Jina/Cohere-style) POST /v1/rerank, never streamed. */
  export interface RerankBody {
    /** The model; default the client's. */
    model?: string;
    /** What the documents are ranked against. */
    query: string;
    /** The documents to score: at least one. */
    documents: string[];
    /** Return only the best n results; 0 or absent: all. */
    top_n?: number;
    /** Cut each (query, document) pair to this many tokens; -1: to the model's length. */
    truncate_prompt_tokens?: number;
    /** Cohere's: whether results carry their document. */
    return_documents?: boolean;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /** A rerank request of Text Embeddings Inference (api `tei-rerank`): POST /rerank, never streamed. */
  export interface TEIRerankBody {
    /** What the texts are ranked against. */
    query: string;
    /** The texts to score: at least one. */
    texts: string[];
    /** Scores as logits rather than in 0..1. */
    raw_scores?: boolean;
    /** Whether results carry their text. */
    return_text?: boolean;
    /** Cut inputs longer than the model's length rather than refuse them. */
    truncate?: boolean;
  }

  /** OpenAI's Responses API (api `responses`): POST /v1/responses. */
  export interface ResponsesBody {
    /** The model; default the client's. */
    model?: string;
    /** Required: a text (one user message), or message items (`{ role, content }`, function_call_output items, ...). */
    input: string | object[];
    /** The system prompt of this response (not carried over to one that continues it). */
    instructions?: string;
    max_output_tokens?: number;
    temperature?: number;
    top_p?: number;
    /** Tools the model may call (`{ type: 'function', name, parameters }`); their calls are in the result's toolCalls. */
    tools?: object[];
    tool_choice?: 'auto' | 'none' | 'required' | object;
    /** Continue this response (a result's responseId): the server adds its conversation before input. */
    previous_response_id?: string;
    /** false: the server keeps no copy, so the response cannot be continued. Default true. */
    store?: boolean;
    /** `{ effort: 'low' | 'medium' | 'high', summary?: 'auto' }` for reasoning models. */
    reasoning?: object;
    /** false: one JSON response object. Default true. */
    stream?: boolean;
    /** vLLM: generate max_output_tokens whatever the model says. */
    ignore_eos?: boolean;
    /** llmsim's extension (vLLM's Responses API does not take it): the fewest tokens to generate. */
    min_tokens?: number;
    /** Extra fields, lifted into the body. */
    extra_body?: object;
  }

  /** The body of a request, in its protocol's format; sent as it is, with the protocol's streaming flag and defaults added. */
  export type RequestBody =
    | ChatBody | CompletionBody | OllamaChatBody | OllamaGenerateBody | TGIBody | AnthropicBody | TritonBody | EmbeddingsBody
    | RerankBody | TEIRerankBody | ResponsesBody;

  /** A retry policy. Retries are off unless a policy says so. */
  export interface RetryOptions {
    /** Attempts in all; 0 or 1: no retry (the default). */
    attempts?: number;
    /** The classes retried, before any token arrived. Default `['connect', 'http_429', 'http_5xx']`. */
    on?: ErrorClass[];
    backoff?: {
      /** The first wait: base · 2^(n−1), jittered. Default 500 ms. */
      base?: LlmrunDuration;
      /** The longest wait. Default 10 s. */
      max?: LlmrunDuration;
      /** false: ignore the server's Retry-After. Default true: wait at least that long. */
      retryAfter?: boolean;
    };
  }

  /** llmrun's settings of one request (stream()'s second argument), kept apart from the body. */
  export interface StreamOptions {
    /** Tags of this request's samples, added to the VU's. */
    tags?: LlmrunTags;
    /** Extra HTTP headers of this request. */
    headers?: { [name: string]: string };
    /** Total timeout of this request. Default the client's (`--timeout`, 120 s). */
    timeout?: LlmrunDuration;
    /** Longest silence of the response body once it has started; 0: none. Default the client's (30 s). */
    idleTimeout?: LlmrunDuration;
    /** Over the client's policy: the fields set replace the client's; `{ attempts: 0 }` turns retries off. */
    retry?: RetryOptions;
    /** The protocol of this request. Default the client's, else inferred (`messages` → chat, `prompt` → completions). */
    api?: API;
    /** Keep the answer in result.text (up to 1 MiB). Default false. */
    text?: boolean;
    /** Keep the gaps between chunks in result.itl (the first 4096). Default false. */
    itl?: boolean;
    /** Throw on failure instead of returning ok: false (the failure is recorded either way). Default false. */
    throw?: boolean;
    /** The prompt's length in tokens as the script made it (prompts.synthetic(n)), which the summary compares with the server's count. */
    promptTokens?: number;
    /** The whole prompt is unique (no shared prefix): the summary warns when the server served such prompts from its cache. */
    uniquePrompt?: boolean;
  }

  /** llm.client()'s options; each defaults to the command line's. */
  export interface ClientOptions {
    /** The server's API root, with or without /v1. Default `--base-url`, LLMRUN_BASE_URL or OPENAI_BASE_URL. */
    baseURL?: string;
    /** Sent as `Authorization: Bearer KEY` (`x-api-key` for anthropic). Default the command line's key. */
    apiKey?: string;
    /** The model of requests whose body names none. Default `--model`. */
    model?: string;
    /** The protocol of requests that name none. Default: inferred from each body. */
    api?: API;
    /** Extra HTTP headers of every request. */
    headers?: { [name: string]: string };
    /** Total timeout of a request, from its start. Default `--timeout`, 120 s. */
    timeout?: LlmrunDuration;
    /** Longest silence of a response body once it has started; 0: none. Default `--idle-timeout`, 30 s. */
    idleTimeout?: LlmrunDuration;
    /** The retry policy. Default: no retry. */
    retry?: RetryOptions;
    /** true: speak HTTP/2 (negotiated with https, h2c with http). Default false: HTTP/1.1. */
    http2?: boolean;
    /** TLS settings of https servers. */
    tls?: {
      /** Accept any certificate (a test server's self-signed one). */
      insecureSkipVerify?: boolean;
      /** A PEM file of certificate authorities to trust besides the system's, read when the client is made. */
      caFile?: string;
    };
    /** The most connections to the server; 0: no cap (the default). */
    maxConns?: number;
    /** `'cl100k_base'`, `'o200k_base'`, a tokenizer.json path or a Hugging Face model id: counts output tokens where the server sends no usage, and checks the usage where it does. Default `--tokenizer`. */
    tokenizer?: string;
  }

  /** A tool call of the answer, assembled from its streamed deltas. */
  export interface ToolCall {
    id: string;
    type: string;
    /** The function called. */
    name: string;
    /** The arguments as the model wrote them: usually JSON, not checked. */
    arguments: string;
  }

  /** The connection phases of the request's final attempt, in ms; dns, connect and tls are 0 on a reused connection. */
  export interface Timings {
    /** Request start → a connection was available. */
    queue: number;
    /** Name lookup. */
    dns: number;
    /** TCP connect. */
    connect: number;
    /** TLS handshake. */
    tls: number;
    /** Request start → first response byte (headers). */
    ttfb: number;
  }

  /** What one request measured. Times are ms from the start of its final attempt. */
  export interface Result {
    /** The request succeeded. */
    ok: boolean;
    /** The HTTP status; 0 when none arrived. */
    status: number;
    /** A failed request's message (secrets redacted); '' on success. */
    error: string;
    /** A failed request's class; '' on success. */
    errorClass: ErrorClass | '';
    /** The server's Retry-After of an error response, in seconds; 0 when none. */
    retryAfter: number;
    /** Times the request was sent: 1, or more when retried. */
    attempts: number;
    /** The class of each attempt that failed and was retried, in order. */
    retried: ErrorClass[];
    /** The response's HTTP version: 'HTTP/1.1', 'HTTP/2.0'; '' when none arrived. */
    proto: string;
    /** The protocol used; '' for a request refused before it had one (invalid_request). */
    api: API | '';
    /** The model of the request. */
    model: string;
    /** The response was streamed. A non-streamed one has TTFT = E2E and no TPOT nor ITL. */
    stream: boolean;
    /** Time to first token: start → first chunk with text, reasoning or a tool call; 0 when none arrived. */
    ttft: number;
    /** Time to first output: start → first answer (not reasoning) token; 0 when none arrived. */
    ttfo: number;
    /** Time per output token: (e2e − ttft) / (outputTokens − 1); 0 unless outputTokens > 1. */
    tpot: number;
    /** End to end: start → end of the response, or → the failure. */
    e2e: number;
    /** Token-bearing chunks received. */
    chunks: number;
    /** Generated tokens, from tokenSource. */
    outputTokens: number;
    /** The server's count of the prompt's tokens; 0 if unknown. */
    promptTokens: number;
    /** Prompt tokens the server served from its prefix cache; 0 if unknown. */
    cachedTokens: number;
    /** The server's count of reasoning tokens among outputTokens; 0 if unknown. */
    reasoningTokens: number;
    /** Chunks that carried only reasoning text (the client's count). */
    reasoningChunks: number;
    /** Where outputTokens came from; '' when no answer was read (a failure before it). */
    tokenSource: TokenSource | '';
    /** Why the model stopped: 'stop', 'length', 'tool_calls', ... as the server says; '' when it said nothing. */
    finishReason: string;
    /** The answer's text, with stream()'s `text: true` (up to 1 MiB); '' otherwise. */
    text: string;
    /** text (or the kept reasoning or tool arguments) passed 1 MiB and was cut. */
    textTruncated: boolean;
    /** A second count of a usage-counted request's output tokens (present when checkSource is). */
    checkTokens?: number;
    /** What made checkTokens: the tokenizer, or the chunks of a streamed answer; absent when there is no second count. */
    checkSource?: TokenSource;
    /** The tool calls the model made, in index order; [] when none. */
    toolCalls: ToolCall[];
    /** An embeddings response's number of vectors; 0 otherwise. */
    embeddings: number;
    /** An embeddings response's vector length; 0 otherwise. */
    dimensions: number;
    /** A rerank request's number of documents sent (scored, whether top_n returned them or not); absent for other APIs. */
    documents?: number;
    /** A rerank response's scores, best first: each document's index in the request and its score; absent for other APIs. */
    rerank?: RerankScore[];
    /** The Responses API's id of the response, for previous_response_id; present only for api `responses`. */
    responseId?: string;
    /** Images the request sent in its messages' content parts; 0 without images. */
    imageCount: number;
    /** Their bytes (each data URL's decoded length); 0 without images, and for images sent by http(s) URL. */
    imageBytes: number;
    /** Their pixels (width × height of each); 0 as imageBytes is. */
    imagePixels: number;
    /** The connection phases of the final attempt. */
    timings: Timings;
    /** Durations the server reported, in ms (Ollama: total, load, promptEval, eval); absent when none. */
    serverTimings?: { [name: string]: number };
    /** The gaps between consecutive token-bearing chunks (the first 4096), with stream()'s `itl: true`. */
    itl?: number[];
    /** With `itl: true`: the gaps beyond the first 4096, which count in llm_itl all the same. */
    itlFolded?: number;
  }

  /** One document's score in a rerank response. */
  export interface RerankScore {
    /** The document's index in the request's documents (or texts). */
    index: number;
    /** Its relevance score, as the server gave it. */
    score: number;
  }

  /** A client of its own: llm.client()'s result. */
  export interface Client {
    /** Sends one request with this client's settings and returns what it measured. Not in init code. */
    stream(body: RequestBody, options?: StreamOptions): Result;
    /** The client's model ('' when none). */
    readonly model: string;
    /** The client's base URL. */
    readonly baseURL: string;
  }

  /** llm.conversation()'s options. */
  export interface ConversationOptions {
    /** The system message, first in every request. */
    system?: string;
    /** The pause before every turn after the first: a duration, or a function returning milliseconds. */
    thinkTime?: LlmrunDuration | (() => number);
    /** Start a new conversation after this many turns; 0: never (the default). */
    maxTurns?: number;
    /** The client to send with (made by llm.client()); default the command line's. */
    client?: Client;
    /** The protocol of every turn; `'responses'`: a turn sends its message alone and continues the last reply by previous_response_id. */
    api?: API;
  }

  /** The body of a turn: a request's fields but its messages (and prompt), which the conversation owns. */
  export type TurnBody = Omit<ChatBody, 'messages'> | Omit<AnthropicBody, 'messages'> | Omit<OllamaChatBody, 'messages'>
    | Omit<ResponsesBody, 'input' | 'previous_response_id'>;

  /** A multi-turn chat session of one VU: each turn sends the whole history so far. */
  export interface Conversation {
    /**
     * One turn: after the think time (from the second turn on), sends the
     * history plus content as the user's message, with body's other fields;
     * the samples are tagged turn=N. On success the message and the reply
     * join the history. Returns the request's result, its text kept.
     */
    send(content: string, body?: TurnBody, options?: StreamOptions): Result;
    /** Starts a new conversation: empty history, turn 0. */
    reset(): void;
    /** The turns sent so far. */
    readonly turn: number;
    /** The history as a chat request's messages, the system message first. */
    readonly messages: { role: string; content: string }[];
  }

  /** A count a session draws: a number, a function returning one, or a distribution of the data module. */
  export type SessionCount = number | (() => number) | { sample(): number };

  /** llm.sessions()'s options. */
  export interface SessionOptions {
    /** The system message, first in every request. */
    system?: string;
    /** The pause before every turn after the first (idle, in no latency): a duration, or a function returning milliseconds. */
    thinkTime?: LlmrunDuration | (() => number);
    /** The client to send with (made by llm.client()); default the command line's. */
    client?: Client;
    /** Turns per session; default 4. */
    turns?: SessionCount;
    /** Words of each synthetic user message; default 64. */
    userTokens?: SessionCount;
    /** Tool calls per turn before the answer; default 0 (no tools sent). */
    toolCalls?: SessionCount;
    /** Words of each tool message that answers a tool call; default 128. */
    toolTokens?: SessionCount;
    /** A session's user messages instead of synthetic ones: strings, or messages of which the user's count (a dataset record's). */
    userMessages?: () => (string | { role: string; content: string })[];
    /** The tools sent when toolCalls is set; default one function, lookup({ query }). */
    tools?: unknown[];
    /** The header that carries the session's id on every request; default 'x-session-id', '' for none. */
    affinityHeader?: string;
  }

  /** One turn of a session, as run() returns it. */
  export interface SessionTurn {
    /** The turn's number, from 1. */
    turn: number;
    /** The requests of the turn: one per tool round, and the answer. */
    requests: number;
    /** The tool calls the model made in the turn. */
    toolCalls: number;
    /** The server's prompt tokens of the turn's last request: the context reached. */
    promptTokens: number;
    /** Of those, the ones the server served from its prefix cache; -1 when it does not say. */
    cachedTokens: number;
    /** The TTFT of the turn's first request, in ms. */
    ttft: number;
  }

  /** One session's figures. */
  export interface Session {
    /** The session's id, sent in the affinity header. */
    id: string;
    /** false when a request failed, or the run stopped, before the session's end. */
    ok: boolean;
    /** The turns sent, in order. */
    turns: SessionTurn[];
    /** The session's wall time in ms, think time included. */
    duration: number;
    /** The think time alone, in ms. */
    thinkTime: number;
  }

  /** A source of agentic sessions. */
  export interface Sessions {
    /** Runs one session on a conversation of its own; body's fields go into every request, options are request options. Not in init code. */
    run(body?: TurnBody, options?: StreamOptions): Session;
  }

  /** Sends one request with the default client (the command line's target) and returns what it measured. Not in init code. */
  export function stream(body: RequestBody, options?: StreamOptions): Result;
  /** A client of its own; options left out take the command line's. Clients with the same options are shared by every VU. */
  export function client(options?: ClientOptions): Client;
  /** A multi-turn conversation. */
  export function conversation(options?: ConversationOptions): Conversation;
  /** Agentic sessions as a workload: run() is one session. */
  export function sessions(options?: SessionOptions): Sessions;

  const llm: { stream: typeof stream; client: typeof client; conversation: typeof conversation; sessions: typeof sessions };
  export default llm;
}

/** check, sleep, group, textSummary, and the types of a script's options and summary. */
declare module 'llmrun' {
  /** A check: a function of the value, or a value whose truthiness is the verdict. */
  export type Checker<T> = ((value: T) => unknown) | boolean;

  /**
   * Runs each named check on value, records each in the `checks` rate
   * (tagged check and group) and returns whether all passed. Not in init
   * code.
   */
  export function check<T>(value: T, checks: { [name: string]: Checker<T> }, tags?: LlmrunTags): boolean;
  /** Pauses the VU for seconds; returns early when the iteration must stop. */
  export function sleep(seconds: number): void;
  /** Runs fn with the group's name added to the `group` tag, times it in group_duration, and returns its result. */
  export function group<T>(name: string, fn: () => T): T;
  /**
   * The end-of-run summary llmrun prints itself, as text, from the data
   * handleSummary(data) received.
   */
  export function textSummary(data: SummaryData, options?: { /** Colours; default false. */ color?: boolean }): string;

  const llmrun: { check: typeof check; sleep: typeof sleep; group: typeof group; textSummary: typeof textSummary };
  export default llmrun;

  /** A scenario's warmup: iterations (a number), a duration (a string), or an object of either. */
  export type Warmup = number | string | { iterations: number } | { duration: LlmrunDuration };

  /** The fields every scenario takes. */
  export interface ScenarioBase {
    /** The exported function the scenario calls. Default 'default'. */
    exec?: string;
    /** When the scenario starts, from the run's start (or after startAfter's end). Default 0. */
    startTime?: LlmrunDuration;
    /** llmrun's own: start when the scenario named has ended and drained. */
    startAfter?: string;
    /** How long iterations still running at the end may go on before they are cut. Default 30s. */
    gracefulStop?: LlmrunDuration;
    /** Variables added to __ENV in this scenario. */
    env?: { [name: string]: string };
    /** Tags of this scenario's samples. */
    tags?: { [name: string]: string };
    /** The scenario's warmup: its samples are dropped. Default options.warmup. */
    warmup?: Warmup;
  }

  /** A stage of a ramping executor: move to target over duration. */
  export interface Stage {
    duration: LlmrunDuration;
    /** VUs (ramping-vus) or iterations per timeUnit (ramping-arrival-rate). */
    target: number;
  }

  /** A fixed number of VUs looping for a duration. */
  export interface ConstantVUsScenario extends ScenarioBase {
    executor: 'constant-vus';
    /** Default 1. */
    vus?: number;
    /** Required. */
    duration: LlmrunDuration;
  }

  /** A number of iterations shared by the VUs. */
  export interface SharedIterationsScenario extends ScenarioBase {
    executor: 'shared-iterations';
    /** Default 1. */
    vus?: number;
    /** Iterations in all. Default 1. */
    iterations?: number;
    /** Iterations not started by then are skipped. Default 10m. */
    maxDuration?: LlmrunDuration;
  }

  /** A number of iterations run by each VU. */
  export interface PerVUIterationsScenario extends ScenarioBase {
    executor: 'per-vu-iterations';
    /** Default 1. */
    vus?: number;
    /** Iterations of each VU. Default 1. */
    iterations?: number;
    /** Default 10m. */
    maxDuration?: LlmrunDuration;
  }

  /** VUs that follow stages. */
  export interface RampingVUsScenario extends ScenarioBase {
    executor: 'ramping-vus';
    /** Default 1. */
    startVUs?: number;
    /** Required. */
    stages: Stage[];
    /** How long a VU ramped down may finish its iteration. Default 30s. */
    gracefulRampDown?: LlmrunDuration;
  }

  /** The fields of the arrival-rate executors (an open model). */
  export interface ArrivalRateFields {
    /** The period a rate is given per. Default 1s. */
    timeUnit?: LlmrunDuration;
    /** VUs initialised before the run. Required. */
    preAllocatedVUs: number;
    /** More VUs are made during the run, up to this many. Default preAllocatedVUs (or maxConcurrency when larger). */
    maxVUs?: number;
    /** The arrival process: evenly spaced (default), Poisson, or gamma with burstiness. */
    arrival?: 'constant' | 'poisson' | 'gamma';
    /** The gamma shape (required with 'gamma'): 1 is Poisson, lower is burstier. */
    burstiness?: number;
    /** The most iterations in flight: an arrival that finds it reached waits, late, rather than being dropped. */
    maxConcurrency?: number;
  }

  /** A constant rate of iterations, whatever their duration. */
  export interface ConstantArrivalRateScenario extends ScenarioBase, ArrivalRateFields {
    executor: 'constant-arrival-rate';
    /** Iterations per timeUnit. Required. */
    rate: number;
    /** Required. */
    duration: LlmrunDuration;
    /** Exactly this many arrivals in all (vLLM's --num-prompts). */
    iterations?: number;
    /** With iterations: vLLM's rescaled gaps, the last arrival at iterations / rate. */
    normalize?: boolean;
  }

  /** A rate of iterations that follows stages. */
  export interface RampingArrivalRateScenario extends ScenarioBase, ArrivalRateFields {
    executor: 'ramping-arrival-rate';
    /** Iterations per timeUnit at the start. Default 0. */
    startRate?: number;
    /** Rate targets. Required. */
    stages: Stage[];
  }

  /** Replays a trace file: one iteration per record, at the record's timestamp divided by speed. */
  export interface TraceReplayScenario extends ScenarioBase {
    executor: 'trace-replay';
    /** The trace file's path, relative to the script. Required. */
    trace: string;
    /** 'mooncake', 'azure', 'burstgpt' or 'jsonl'. Default: told by the file's first line. */
    format?: 'mooncake' | 'azure' | 'burstgpt' | 'jsonl';
    /** Divides the trace's gaps: 2 replays twice as fast. Default 1. */
    speed?: number;
    /** The part of the trace replayed, in the trace's own time. Default all of it. */
    window?: { /** Default 0s. */ from?: LlmrunDuration; /** Default: to the end. */ duration?: LlmrunDuration };
    /** At most this many records of the window. */
    limit?: number;
    /** VUs initialised before the run. Required. */
    preAllocatedVUs: number;
    /** More VUs are made during the run, up to this many. Default preAllocatedVUs (or maxConcurrency when larger). */
    maxVUs?: number;
    /** The most iterations in flight: a record that finds it reached waits, late, rather than being dropped. */
    maxConcurrency?: number;
  }

  /** The record a trace-replay iteration replays: its function's second argument, `function (data, record)`. */
  export interface TraceRecord {
    /** The record's position in the trace, from 0. */
    index: number;
    /** Its timestamp, ms after the trace's first record's. */
    start: number;
    /** The prompt's length in tokens. */
    inputTokens: number;
    /** The reply's length in tokens. */
    outputTokens: number;
    /** The ids of the prompt's blocks of tokens (Mooncake's hash_ids); empty when the trace has none. */
    hashIds: number[];
    /** The record's other fields: a JSON line's other keys, a CSV row's other columns (as strings). */
    fields: { [name: string]: unknown };
  }

  /** A scenario, by its executor. */
  export type Scenario =
    | ConstantVUsScenario | SharedIterationsScenario | PerVUIterationsScenario | RampingVUsScenario
    | ConstantArrivalRateScenario | RampingArrivalRateScenario
    | TraceReplayScenario;

  /** A threshold: an expression such as 'p(99)<2000', or the object form. */
  export type Threshold = string | {
    /** The expression: `AGG OP NUMBER`, AGG one of avg, min, max, med, p(N), rate, count, value. */
    threshold: string;
    /** Stop the run when it fails (checked every 2 s). */
    abortOnFail?: boolean;
    /** Not before this much of the run. */
    delayAbortEval?: LlmrunDuration;
    /** What a metric without samples gets: 'pass' or 'fail'. */
    noSamples?: 'pass' | 'fail';
  };

  /** A serving-level objective, ms (or a duration string). */
  export interface SLO {
    ttft_p99?: number | string;
    tpot_p99?: number | string;
  }

  /** The script's options: `export const options = { ... }`. Unknown fields are errors that name them. */
  export interface Options {
    /** Shorthand: VUs of a constant-vus (with duration) or shared-iterations (with iterations) scenario. */
    vus?: number;
    /** Shorthand: a constant-vus scenario this long. */
    duration?: LlmrunDuration;
    /** Shorthand: a shared-iterations scenario of this many iterations. */
    iterations?: number;
    /** Shorthand: a ramping-vus scenario starting at vus. */
    stages?: Stage[];
    /** Scenarios by name, run concurrently. */
    scenarios?: { [name: string]: Scenario };
    /** Tags of every sample. */
    tags?: { [name: string]: string };
    /** Default 60s. */
    setupTimeout?: LlmrunDuration;
    /** Default 60s. */
    teardownTimeout?: LlmrunDuration;
    /** Thresholds by metric, or sub-metric by tags (`'llm_ttft{scenario:chat}'`): one, or a list. */
    thresholds?: { [metric: string]: Threshold | Threshold[] };
    /** Every scenario's warmup, unless it sets its own. */
    warmup?: Warmup;
    /** What a sweep's capacity verdict and the report judge against (--slo wins): numbers of ms, or `'ttft_p99=2000,tpot_p99=50'`. */
    slo?: SLO | string;
    /** Per-request bounds, ms: a request within every bound is good (--goodput wins). */
    goodput?: { ttft?: number | string; tpot?: number | string; e2e?: number | string; e2el?: number | string } | string;
    /** A sweep's criteria: the throughput growth that still counts between levels (0.1: 10 %), and when to stop early. */
    capacity?: {
      minGain?: number;
      stop?: 'never' | 'saturation' | 'slo';
      /** Search for the most load within the SLO instead of sweeping fixed levels (docs/capacity.md, "Searching for capacity"). */
      search?: {
        variable?: 'rate' | 'concurrency';
        start?: number;
        max?: number;
        width?: number;
        budget?: string | number;
        step?: string | number;
        maxStep?: string | number;
        confidence?: number;
        goodputShare?: number;
      };
    };
    /** The servers' metrics and GPU telemetry to read beside the run, or false (docs/server-metrics.md). */
    serverMetrics?: false | {
      urls?: string | string[];
      preset?: string;
      interval?: LlmrunDuration;
      gpu?: string | string[];
    };
    /** Stops a run whose requests all fail alike, or false. */
    earlyStop?: boolean | {
      /** The first requests judged. Default 10. */
      requests?: number;
      /** The classes that stop the run. */
      classes?: ErrorClassName[];
      /** The rule over the whole run, or false. */
      midRun?: boolean | { for?: LlmrunDuration; requests?: number; classes?: ErrorClassName[] };
      /** The longest pause of a VU whose requests cannot reach the target, or false. */
      backoff?: LlmrunDuration | false;
      /** Below this success rate (0 to 1) the run's end warns; 0: no warning. */
      minSuccessRate?: number;
    };
  }

  /** An error class's name, as options and thresholds spell it. */
  export type ErrorClassName = import('llm').ErrorClass;

  /** One metric of handleSummary's data (k6's layout). */
  export interface SummaryMetric {
    type: 'counter' | 'gauge' | 'rate' | 'trend';
    contains: 'default' | 'time' | 'data';
    /** Counters: count, rate. Gauges: value, min, max. Rates: rate, passes, fails. Trends: avg, min, med, max, p(90), p(95), p(99), count. */
    values: { [stat: string]: number };
    /** The metric's thresholds by expression. */
    thresholds?: { [expression: string]: { ok: boolean } };
  }

  /** A group of handleSummary's data, with the checks that ran in it. */
  export interface SummaryGroup {
    name: string;
    path: string;
    id: string;
    groups: SummaryGroup[];
    checks: { name: string; path: string; id: string; passes: number; fails: number }[];
  }

  /** A serving block of the result file (whole run, or one scenario). */
  export interface Serving {
    duration_s: number;
    requests: number;
    completed: number;
    failed: number;
    interrupted: number;
    success_rate: number;
    /** Requests per second. */
    request_throughput: number;
    total_output_tokens: number;
    total_input_tokens: number;
    total_reasoning_tokens: number;
    total_cached_input_tokens: number;
    mean_input_tokens: number;
    mean_output_tokens: number;
    /** Output tokens per second. */
    output_throughput: number;
    /** Input and output tokens per second. */
    total_token_throughput: number;
    /** Documents of completed rerank requests; absent without any. */
    total_documents?: number;
    /** Documents of completed rerank requests per second; absent without any. */
    document_throughput?: number;
    iterations: number;
    interrupted_iterations: number;
    warmup_requests: number;
    warmup_iterations: number;
    dropped_iterations: number;
    iteration_lag_p50_ms: number;
    iteration_lag_p99_ms: number;
    /** Requests within every --goodput bound. */
    goodput?: Section;
    headline: { [figure: string]: number };
  }

  /** A row of the result file's latency table. */
  export interface LatencyRow {
    metric: string;
    label: string;
    count: number;
    mean_ms: number;
    min_ms: number;
    max_ms: number;
    /** By name: p50, p90, p95, p99, ... */
    percentiles_ms: { [percentile: string]: number };
  }

  /** A count of one error message. */
  export interface MessageCount {
    message: string;
    count: number;
  }

  /** A section of the result file whose fields docs/results.md lists. */
  export type Section = { [field: string]: unknown };

  /** The run's identity and settings, what makes it reproducible. */
  export interface Meta {
    run_id?: string;
    testid?: string;
    /** The command line's --tag pairs. */
    tags?: { [name: string]: string };
    /** 'llmrun'. */
    tool: string;
    version: string;
    script: string;
    script_sha256: string;
    target: string;
    base_url: string;
    models: string[];
    seed: number;
    /** The seed was drawn, not given. */
    seed_drawn?: boolean;
    host: string;
    os: string;
    cpus: number;
    go_version: string;
    /** RFC 3339 time. */
    start: string;
    /** RFC 3339 time. */
    end: string;
    interrupted: boolean;
    /** Each scenario's load shape. */
    load_shape: Section[];
    /** The script's options as it exported them. */
    options?: Section;
    /** The result files merged into this one. */
    merged_from?: string[];
    /** The SLO judged against (ms). */
    slo?: { ttft_p99?: number; tpot_p99?: number };
    execution_segment?: string;
    execution_segment_sequence?: string;
    instances?: number;
    missing_instances?: number[];
    min_success_rate?: number;
    /** The latency percentiles llmrun bench was asked to print (--metric-percentiles); absent for other runs. */
    metric_percentiles?: number[];
  }

  /** The result file, as --summary-export writes it; docs/results.md describes every field. */
  export interface ResultFile {
    schema_version: number;
    meta: Meta;
    /** The whole run's serving figures. */
    serving: Serving;
    /** llm_ttft, llm_tpot, llm_itl, llm_e2e, ...: one row each. */
    latency: LatencyRow[];
    scenarios: { name: string; serving: Serving; latency: LatencyRow[]; metrics: { [name: string]: Section } }[];
    /** Failed requests by class, most frequent first, with their first distinct messages. */
    errors: { class: string; count: number; messages?: MessageCount[] }[];
    /** Failed attempts that were retried, by class. */
    retries?: { class: string; count: number; messages?: MessageCount[] }[];
    /** Exceptions of the script, by message. */
    script_errors: MessageCount[];
    /** Exceptions whose message was not kept. */
    other_script_errors?: number;
    checks: { name: string; group?: string; passes: number; fails: number }[];
    /** How the load generator itself fared: CPU, scheduling delay, warnings. */
    client: Section;
    /** The server's usage compared with a second count of the output tokens. */
    token_checks?: Section[];
    /** The prompt lengths asked for compared with the server's count. */
    prompt_check?: Section;
    /** How much of the prompts declared unique the server served from its cache. */
    unique_prompt_cache?: Section;
    thresholds: { metric: string; threshold: string; value: number; passed: boolean; note?: string; skipped?: boolean }[];
    /** What each --out output stored and lost. */
    outputs?: Section[];
    /** The run interval by interval. */
    timeline?: Section[];
    /** The server's own metrics and its GPUs' telemetry over the measured window. */
    server?: Section;
    /** A sweep's verdict. */
    capacity?: Section;
    /** The abortOnFail threshold that stopped the run. */
    aborted_by?: string;
    /** Why the early stop stopped the run. */
    early_stop?: string;
    /** When, in seconds into the run. */
    early_stop_at_s?: number;
    /** Warns that too few requests succeeded. */
    low_success?: string;
    /** Chains of scenarios stopped before their end (options.capacity.stop). */
    chain_stops?: Section[];
    /** What the request sent to each target before the run showed. */
    preflight?: Section[];
    /** Every metric's statistics by name, and the sub-metrics thresholds select. */
    metrics: { [name: string]: Section };
  }

  /** handleSummary(data)'s argument: k6's layout, plus llmrun's result file. */
  export interface SummaryData {
    /** Every metric with samples, by name. */
    metrics: { [name: string]: SummaryMetric };
    root_group: SummaryGroup;
    options: { summaryTrendStats: string[]; summaryTimeUnit: string; noColor: boolean };
    state: { isStdOutTTY: boolean; isStdErrTTY: boolean; testRunDurationMs: number };
    /** The result file, as --summary-export writes it. */
    llmrun: ResultFile;
  }

  /** What handleSummary returns: 'stdout', 'stderr' or a file path, to the content written there; null or undefined writes nothing. */
  export type SummaryOutputs = { [destination: string]: string | ArrayBuffer | Uint8Array } | null | undefined;
}

/** Settings files and parameters: load, parse, settings, seconds. */
declare module 'llmrun/config' {
  /**
   * A setting's value, of its default's kind: a number, a boolean, a list
   * (of numbers when the default's are, or it is empty), a string; with a
   * null default, what the environment or the file gives, as it is.
   */
  export type Setting<D> =
    D extends null ? unknown
    : D extends number ? number
    : D extends boolean ? boolean
    : D extends readonly number[] ? number[]
    : D extends readonly unknown[] ? string[]
    : D extends string ? string
    : unknown;

  /** Reads a JSON, YAML or TOML file (by its extension) in init code; its top level is an object. */
  export function load(path: string): { [key: string]: any };
  /** Parses text as 'json', 'yaml' (or 'yml') or 'toml'. */
  export function parse(text: string, format: 'json' | 'yaml' | 'yml' | 'toml'): { [key: string]: any };
  /**
   * Resolves a script's parameters, in init code: for each key of
   * defaults, -e's variable of the key in upper case, else the key in the
   * file __ENV.CONFIG names, else the default; values take the default's
   * kind (a list default reads "1,2,4").
   */
  export function settings<T extends { [key: string]: unknown }>(defaults: T): { [K in keyof T]: Setting<T[K]> };
  /** A duration as seconds: a number is already seconds, a string a Go duration ('30s', '1m30s'). */
  export function seconds(value: string | number): number;

  const config: { load: typeof load; parse: typeof parse; settings: typeof settings; seconds: typeof seconds };
  export default config;
}

/** Workloads: tokenizers, exact-length prompts, length distributions, datasets, shared prefixes. */
declare module 'data' {
  /** A tokenizer: tokenizer(spec)'s result. */
  export interface Tokenizer {
    /** Its name. */
    readonly name: string;
    /** Text to token ids. */
    encode(text: string): number[];
    /** Token ids to text. */
    decode(ids: number[]): string;
    /** The number of tokens of text. */
    count(text: string): number;
  }

  /** A tokenizer: a built-in encoding ('cl100k_base', 'o200k_base'), a tokenizer.json path, a Hugging Face model id, or tokenizer()'s object. */
  export type TokenizerSpec = string | Tokenizer;

  /** A length distribution: each VU draws from its own stream, seeded by --seed. */
  export interface Length {
    /** One length, in tokens. */
    sample(): number;
    /** The distribution, in words. */
    toString(): string;
  }

  /** A record of a dataset. */
  export interface DatasetRecord {
    /** Its index, from 0. */
    index: number;
    id: string;
    /** The first user message (or the prompt). */
    prompt: string;
    /** The reference answer; '' when none. */
    completion: string;
    /** The conversation before the answer. */
    messages: { role: string; content: string }[];
    /** The prompt's tokens, by the dataset's tokenizer. */
    promptTokens: number;
    /** The completion's tokens, by the dataset's tokenizer. */
    outputTokens: number;
    /** The images the record names (JSONL "images", CSV "image"), paths or URLs for images.file; [] when none. */
    images: string[];
  }

  /** A dataset, loaded once per run and shared by every VU. */
  export interface Dataset {
    readonly path: string;
    readonly format: 'sharegpt' | 'jsonl' | 'csv';
    /** The records kept. */
    readonly length: number;
    /** The records left out (ShareGPT conversations without a turn to replay). */
    readonly skipped: number;
    /** Record i, from 0. */
    get(i: number): DatasetRecord;
    /** A random record (the VU's stream). */
    sample(): DatasetRecord;
    /** The next record of a cursor all VUs share, wrapping around. */
    next(): DatasetRecord;
  }

  /** A prompt of a shared-prefix group. */
  export interface SharedPrefixPrompt {
    /** The group, from 0. */
    group: number;
    prefix: string;
    suffix: string;
    /** prefix + suffix. */
    text: string;
    /** The prompt's tokens. */
    tokens: number;
  }

  /** What prompts.fromHashIds reads of a trace record. */
  export interface HashIdsRecord {
    hashIds?: number[];
    inputTokens: number;
    /** The record's position in the trace: the request's number unless `request` is given. */
    index?: number;
    /** Read and not used: a trace-replay record's other fields. */
    start?: number;
    outputTokens?: number;
    fields?: { [name: string]: unknown };
  }

  /** The options of prompts.fromHashIds. */
  export interface HashIdsOptions {
    /** Tokens of a hash block. Default 512 (Mooncake's). */
    blockSize?: number;
    /** Blocks the expected hit rate's cache keeps, least recently used evicted. Default unbounded. */
    cacheBlocks?: number;
    /** The request's number, which draws its own tokens after the blocks. Default the record's index, else random. */
    request?: number;
    tokenizer?: TokenizerSpec;
  }

  /** A trace record's prompt built from its hash ids. */
  export interface HashIdsPrompt {
    text: string;
    /** The prompt's tokens: inputTokens. */
    tokens: number;
    /** The tokens of the hash ids' blocks; the rest is the request's own. */
    hashedTokens: number;
    /** The tokens of it that earlier prompts' hash ids put in a prefix cache; 0 in init code. */
    expectedCachedTokens: number;
  }

  /** Groups of prompts sharing a prefix, the same in every VU. */
  export interface SharedPrefix {
    readonly groups: number;
    readonly prefixTokens: number;
    readonly prefixes: string[];
    /** A prompt of the group (a random one when left out) with a unique suffix of suffixTokens tokens. */
    prompt(suffixTokens: number, group?: number, options?: { draw?: number }): SharedPrefixPrompt;
  }

  /** A tokenizer; default --tokenizer, else cl100k_base. */
  export function tokenizer(spec?: TokenizerSpec): Tokenizer;
  /** Loads a ShareGPT JSON, JSONL or CSV file, in init code; the format by its extension unless given. */
  export function dataset(path: string, options?: { format?: 'sharegpt' | 'jsonl' | 'csv'; tokenizer?: TokenizerSpec }): Dataset;

  export const prompts: {
    /**
     * Text that encodes to exactly n tokens. `prefix` starts it; `draw: i`
     * draws the text of number i of the run's seed, the same whichever VU
     * draws it.
     */
    synthetic(n: number, options?: { prefix?: string; tokenizer?: TokenizerSpec; draw?: number }): string;
    /** Prefix groups for prefix-cache benchmarks. */
    sharedPrefix(options: { groups: number; prefixTokens: number; tokenizer?: TokenizerSpec }): SharedPrefix;
    /**
     * A trace record's prompt of exactly inputTokens tokens: block k is the
     * first blockSize (default 512) tokens of hash id hashIds[k]'s, the same
     * in every request; the rest is the request's own, drawn for `request`
     * (default the record's index). The record is a trace-replay
     * iteration's, or plain values, the options among them. In an iteration
     * it counts the prompt as sent, for the hit rate the trace implies (a
     * cache of cacheBlocks blocks; default unbounded).
     */
    fromHashIds(record: HashIdsRecord & HashIdsOptions, options?: HashIdsOptions): HashIdsPrompt;
  };

  /** An image for a chat request. */
  export interface Image {
    /** Its data URL (`data:image/jpeg;base64,...`), or the http(s) URL a dataset named. */
    readonly url: string;
    /** The image file's bytes; 0 for an http(s) URL. */
    readonly bytes: number;
    /** Its size in pixels; 0 for an http(s) URL. */
    readonly width: number;
    readonly height: number;
    /** 'jpeg', 'png' or 'gif'; '' for an http(s) URL. */
    readonly format: string;
    /** The content part that sends it: `{ type: 'image_url', image_url: { url } }`. */
    readonly part: { type: 'image_url'; image_url: { url: string } };
  }

  export const images: {
    /**
     * count (default 1) images of random noise, as vLLM's random-mm sends;
     * JPEG unless format says 'png'. The same in every run of the seed: the
     * VU's n-th call's, or with `draw: i` number i's, whichever VU draws it.
     */
    synthetic(options: { width: number; height: number; count?: number; format?: 'jpeg' | 'png'; draw?: number }): Image[];
    /** A PNG, JPEG or GIF file (found as dataset() finds files), or an image a dataset names by data URL or http(s) URL. */
    file(pathOrURL: string): Image;
  };

  /** The bounds of a distribution, in tokens. */
  export interface LengthBounds {
    /** Default 1. */
    min?: number;
    /** Default 2^24. */
    max?: number;
  }

  export const lengths: {
    /** Always n. */
    fixed(n: number): Length;
    /** Uniform in [min, max]. */
    uniform(options: { min: number; max: number }): Length;
    /** Normal, cut to [min, max]. */
    normal(options: { mean: number; stddev: number } & LengthBounds): Length;
    /** Log-normal of the given mean or median and sigma, cut to [min, max]. */
    lognormal(options: ({ mean: number; median?: undefined } | { median: number; mean?: undefined }) & { sigma: number } & LengthBounds): Length;
    /** The given lengths, drawn at random. */
    empirical(values: number[]): Length;
    /** A dataset's prompt (the default) or output token counts, of random records. */
    empirical(dataset: Dataset, field?: 'prompt' | 'output'): Length;
  };

  const data: { tokenizer: typeof tokenizer; dataset: typeof dataset; prompts: typeof prompts; lengths: typeof lengths; images: typeof images };
  export default data;
}

/** Custom metrics: Counter, Gauge, Rate, Trend, made in init code. */
declare module 'metrics' {
  /** A metric of the script's. */
  export interface Metric {
    /** Its name. */
    readonly name: string;
    /** Records a sample (a boolean is 1 or 0), tagged with the VU's tags and these. Not in init code. */
    add(value: number | boolean, tags?: LlmrunTags): boolean;
  }
  /** A sum: count and rate per second. */
  export interface Counter extends Metric {}
  export const Counter: { new (name: string): Counter };
  /** The last value, with min and max. */
  export interface Gauge extends Metric {}
  export const Gauge: { new (name: string): Gauge };
  /** The share of non-zero samples. */
  export interface Rate extends Metric {}
  export const Rate: { new (name: string): Rate };
  /** A distribution: avg, min, med, max, percentiles. */
  export interface Trend extends Metric {}
  /** isTime: the values are milliseconds. */
  export const Trend: { new (name: string, isTime?: boolean): Trend };

  const metrics: { Counter: typeof Counter; Gauge: typeof Gauge; Rate: typeof Rate; Trend: typeof Trend };
  export default metrics;
}
