# Writes the vLLM and SGLang result files of this directory (see PROVENANCE).
#
# The lines between "BEGIN COPY" and "END COPY" are copied unmodified from
# the tools' own code at the commits PROVENANCE names: the code that turns
# request outputs into the figures (calculate_metrics) and into the saved
# result dict. What feeds them is this script's: seeded request outputs of
# a server whose TTFT, inter-token gaps and output lengths are drawn at
# random, since neither tool can be installed here to run against a server.
#
# Run with: python3 gen.py   (needs numpy; writes the files beside it)
import json
import math
import random
import warnings
from dataclasses import dataclass, field
from typing import Any, List, Tuple

import numpy as np

HERE = __file__.rsplit("/", 1)[0]


def draw_outputs(cls, n, seed, fail_every):
    """Request outputs of a simulated server, in the tool's own dataclass."""
    rng = random.Random(seed)
    outs, t = [], 0.0
    for i in range(n):
        o = cls()
        o.prompt_len = rng.randint(200, 400)
        t += rng.expovariate(8.0)
        o.start_time = t
        if fail_every and i % fail_every == fail_every - 1:
            o.success, o.error = False, "Bad Request"
            outs.append(o)
            continue
        o.success = True
        o.ttft = 0.05 + rng.lognormvariate(math.log(0.04), 0.5)
        n_out = rng.randint(20, 120)
        o.itl = [0.012 + rng.expovariate(1 / 0.004) for _ in range(n_out - 1)]
        o.latency = o.ttft + sum(o.itl)
        o.generated_text = " ".join("tok" for _ in range(n_out))
        o.output_tokens = n_out
        o.output_len = n_out
        outs.append(o)
    return outs, t + 2.0


class WordTokenizer:
    """Counts a text's words as its tokens."""

    def encode(self, text, add_special_tokens=False):
        return text.split()


# ---------------------------------------------------------------- vLLM
# vllm-project/vllm, vllm/benchmarks/serve.py at
# 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1

MILLISECONDS_TO_SECONDS_CONVERSION = 1000
TERM_PLOTLIB_AVAILABLE = False


@dataclass
class VllmOutput:
    """The fields of vLLM's RequestFuncOutput that calculate_metrics reads."""

    generated_text: str = ""
    success: bool = False
    latency: float = 0.0
    output_tokens: int = 0
    ttft: float = 0.0
    itl: list = field(default_factory=list)
    prompt_len: int = 0
    error: str = ""
    start_time: float = 0.0
    input_audio_duration: float = 0.0
    client_queue_time: float = 0.0


# BEGIN COPY (vllm/benchmarks/serve.py: class BenchmarkMetrics)
@dataclass
class BenchmarkMetrics:
    completed: int
    failed: int
    total_input: int
    total_output: int
    request_throughput: float
    request_goodput: float
    output_throughput: float
    total_token_throughput: float
    mean_ttft_ms: float
    median_ttft_ms: float
    std_ttft_ms: float
    percentiles_ttft_ms: list[tuple[float, float]]
    mean_tpot_ms: float
    median_tpot_ms: float
    std_tpot_ms: float
    percentiles_tpot_ms: list[tuple[float, float]]
    mean_itl_ms: float
    median_itl_ms: float
    std_itl_ms: float
    percentiles_itl_ms: list[tuple[float, float]]
    # E2EL stands for end-to-end latency per request.
    # It is the time taken on the client side from sending
    # a request to receiving a complete response.
    mean_e2el_ms: float
    median_e2el_ms: float
    std_e2el_ms: float
    percentiles_e2el_ms: list[tuple[float, float]]
    # Max output tokens per second and concurrent requests at that peak
    max_output_tokens_per_s: float
    max_concurrent_requests: int
    rtfx: float = 0.0  # Inverse Real-Time Factor for ASR benchmarks
# END COPY


# BEGIN COPY (vllm/benchmarks/serve.py: calculate_metrics, whole)
def calculate_metrics(
    input_requests,
    outputs,
    dur_s: float,
    tokenizer,
    selected_percentiles: list[float],
    goodput_config_dict: dict[str, float],
) -> tuple[BenchmarkMetrics, list[int]]:
    actual_output_lens: list[int] = []
    total_input = 0
    completed = 0
    good_completed = 0
    itls: list[float] = []
    tpots: list[float] = []
    all_tpots: list[float] = []
    ttfts: list[float] = []
    e2els: list[float] = []
    input_audio_duration = 0.0
    for i in range(len(outputs)):
        if outputs[i].success:
            output_len = outputs[i].output_tokens

            if not output_len:
                if tokenizer is None:
                    output_len = 1
                else:
                    # We use the tokenizer to count the number of output tokens
                    # for some serving backends instead of looking at
                    # len(outputs[i].itl) since multiple output tokens may be
                    # bundled together
                    # Note : this may inflate the output token count slightly
                    output_len = len(
                        tokenizer(
                            outputs[i].generated_text, add_special_tokens=False
                        ).input_ids
                    )
            actual_output_lens.append(output_len)
            total_input += outputs[i].prompt_len
            tpot = 0.0
            if output_len > 1:
                latency_minus_ttft = outputs[i].latency - outputs[i].ttft
                tpot = latency_minus_ttft / (output_len - 1)
                tpots.append(tpot)
            # Note: if output_len <= 1, we regard tpot as 0 for goodput
            all_tpots.append(tpot)
            itls += outputs[i].itl
            ttfts.append(outputs[i].ttft)
            e2els.append(outputs[i].latency)
            input_audio_duration += outputs[i].input_audio_duration
            completed += 1
        else:
            actual_output_lens.append(0)

    if goodput_config_dict:
        valid_metrics = []
        slo_values = []

        if "ttft" in goodput_config_dict:
            valid_metrics.append(ttfts)
            slo_values.append(
                goodput_config_dict["ttft"] / MILLISECONDS_TO_SECONDS_CONVERSION
            )
        if "tpot" in goodput_config_dict:
            valid_metrics.append(all_tpots)
            slo_values.append(
                goodput_config_dict["tpot"] / MILLISECONDS_TO_SECONDS_CONVERSION
            )
        if "e2el" in goodput_config_dict:
            valid_metrics.append(e2els)
            slo_values.append(
                goodput_config_dict["e2el"] / MILLISECONDS_TO_SECONDS_CONVERSION
            )

        for req_metric in zip(*valid_metrics):
            is_good_req = all([s >= r for s, r in zip(slo_values, req_metric)])
            if is_good_req:
                good_completed += 1

    if completed == 0:
        warnings.warn(
            "All requests failed. This is likely due to a misconfiguration "
            "on the benchmark arguments.",
            stacklevel=2,
        )

    # Calculate max output tokens per second metric
    max_output_tokens_per_s = 0.0
    max_concurrent_requests = 0

    # Find the time range across all successful requests
    successful_outputs = [output for output in outputs if output.success]
    failed_outputs = [output for output in outputs if not output.success]

    if len(failed_outputs) > 0:
        print("Failed requests during benchmark run detected (capping to 10):")
        for i, err in enumerate(failed_outputs[:10]):
            print(f"Error {i}: {err.error}")

    if successful_outputs:
        min_start_time = min(output.start_time for output in successful_outputs)
        max_end_time = max(
            output.start_time + output.latency for output in successful_outputs
        )

        # Create second buckets (ceiling to ensure we capture all time)
        duration_seconds = int(np.ceil(max_end_time - min_start_time)) + 1
        tokens_per_second = np.zeros(duration_seconds)
        concurrent_requests_per_second = np.zeros(duration_seconds)

        for i, output in enumerate(successful_outputs):
            # Calculate token generation timestamp using
            # start_time, ttft, and itl
            token_times = [output.start_time + output.ttft]
            current_time = token_times[0]
            for itl_value in output.itl:
                current_time += itl_value
                token_times.append(current_time)

            # Add tokens to second buckets
            for token_time in token_times:
                second_bucket = int(token_time - min_start_time)
                if 0 <= second_bucket < duration_seconds:
                    tokens_per_second[second_bucket] += 1

            # Track concurrent requests for each second this request was active
            request_start_second = int(output.start_time - min_start_time)
            request_end_second = int(
                np.ceil(output.start_time + output.latency - min_start_time)
            )

            for second in range(request_start_second, min(duration_seconds, request_end_second)):
                if 0 <= second < duration_seconds:
                    concurrent_requests_per_second[second] += 1

        # Calculate exact peak concurrent requests using continuous-time sweep-line
        # over half-open intervals [start, end)
        events: list[tuple[float, int]] = []
        for output in successful_outputs:
            events.append((output.start_time, 1))
            events.append((output.start_time + output.latency, -1))

        # Tie-breaking: -1 (departure) precedes +1 (arrival) for half-open intervals
        events.sort(key=lambda x: (x[0], x[1]))

        current_concurrency = 0
        peak_concurrency = 0
        for _, delta in events:
            current_concurrency += delta
            if current_concurrency > peak_concurrency:
                peak_concurrency = current_concurrency

        # Find the maximum tokens per second and corresponding
        # concurrent requests
        if len(tokens_per_second) > 0:
            max_output_tokens_per_s = float(np.max(tokens_per_second))
            max_concurrent_requests = peak_concurrency

    metrics = BenchmarkMetrics(
        completed=completed,
        failed=len(failed_outputs),
        total_input=total_input,
        total_output=sum(actual_output_lens),
        request_throughput=completed / dur_s,
        request_goodput=good_completed / dur_s,
        output_throughput=sum(actual_output_lens) / dur_s,
        total_token_throughput=(total_input + sum(actual_output_lens)) / dur_s,
        mean_ttft_ms=np.mean(ttfts or 0)
        * 1000,  # ttfts is empty if streaming is not supported by the endpoint
        std_ttft_ms=np.std(ttfts or 0) * 1000,
        median_ttft_ms=np.median(ttfts or 0) * 1000,
        percentiles_ttft_ms=[
            (p, np.percentile(ttfts or 0, p) * 1000) for p in selected_percentiles
        ],
        mean_tpot_ms=np.mean(tpots or 0) * 1000,
        std_tpot_ms=np.std(tpots or 0) * 1000,
        median_tpot_ms=np.median(tpots or 0) * 1000,
        percentiles_tpot_ms=[
            (p, np.percentile(tpots or 0, p) * 1000) for p in selected_percentiles
        ],
        mean_itl_ms=np.mean(itls or 0) * 1000,
        std_itl_ms=np.std(itls or 0) * 1000,
        median_itl_ms=np.median(itls or 0) * 1000,
        percentiles_itl_ms=[
            (p, np.percentile(itls or 0, p) * 1000) for p in selected_percentiles
        ],
        mean_e2el_ms=np.mean(e2els or 0) * 1000,
        std_e2el_ms=np.std(e2els or 0) * 1000,
        median_e2el_ms=np.median(e2els or 0) * 1000,
        percentiles_e2el_ms=[
            (p, np.percentile(e2els or 0, p) * 1000) for p in selected_percentiles
        ],
        max_output_tokens_per_s=max_output_tokens_per_s,
        max_concurrent_requests=max_concurrent_requests,
        rtfx=input_audio_duration / dur_s,
    )

    return metrics, actual_output_lens
# END COPY
# (The termplotlib branch, which TERM_PLOTLIB_AVAILABLE = False skips, and
# the docstring are left out.)


def vllm_result(save_detailed):
    outputs, benchmark_duration = draw_outputs(VllmOutput, 240, 1, 40)
    goodput_config_dict = {}
    selected_percentiles = [50.0, 90.0, 99.0]  # --metric-percentiles 50,90,99
    selected_percentile_metrics = ["ttft", "tpot", "itl", "e2el"]
    task_type_generation, tokenizer, max_concurrency = True, WordTokenizer(), None
    metrics, actual_output_lens = calculate_metrics(
        input_requests=None,
        outputs=outputs,
        dur_s=benchmark_duration,
        tokenizer=tokenizer,
        selected_percentiles=selected_percentiles,
        goodput_config_dict=goodput_config_dict,
    )
    # BEGIN COPY (vllm/benchmarks/serve.py: benchmark, the result dict)
    result = {
        "duration": benchmark_duration,
        "completed": metrics.completed,
        "failed": metrics.failed,
        "total_input_tokens": metrics.total_input,
        "total_output_tokens": metrics.total_output,
        "request_throughput": metrics.request_throughput,
        "request_goodput": metrics.request_goodput if goodput_config_dict else None,
        "output_throughput": metrics.output_throughput,
        "total_token_throughput": metrics.total_token_throughput,
        "input_lens": [output.prompt_len for output in outputs],
        "output_lens": actual_output_lens,
        "ttfts": [output.ttft for output in outputs],
        "itls": [output.itl for output in outputs],
        "latencies": [output.latency for output in outputs],
        "start_times": [output.start_time for output in outputs],
        "queue_times": [output.client_queue_time for output in outputs],
        "generated_texts": [output.generated_text for output in outputs],
        "errors": [output.error for output in outputs],
        "max_output_tokens_per_s": metrics.max_output_tokens_per_s,
        "max_concurrent_requests": metrics.max_concurrent_requests,
        "rtfx": metrics.rtfx,
    }
    # END COPY

    # BEGIN COPY (vllm/benchmarks/serve.py: benchmark, process_one_metric)
    def process_one_metric(
        # E.g., "ttft"
        metric_attribute_name: str,
        # E.g., "TTFT"
        metric_name: str,
        # E.g., "Time to First Token"
        metric_header: str,
        values: list[float] | None = None,
    ):
        # This function prints and adds statistics of the specified
        # metric.
        if metric_attribute_name not in selected_percentile_metrics:
            return
        if values is None:
            mean = getattr(metrics, f"mean_{metric_attribute_name}_ms")
            median = getattr(metrics, f"median_{metric_attribute_name}_ms")
            std = getattr(metrics, f"std_{metric_attribute_name}_ms")
            percentiles = getattr(metrics, f"percentiles_{metric_attribute_name}_ms")
        else:
            mean = np.mean(values or 0) * 1000
            median = np.median(values or 0) * 1000
            std = np.std(values or 0) * 1000
            percentiles = [
                (p, np.percentile(values or 0, p) * 1000) for p in selected_percentiles
            ]
        print("{s:{c}^{n}}".format(s=metric_header, n=50, c="-"))
        print("{:<40} {:<10.2f}".format(f"Mean {metric_name} (ms):", mean))
        print("{:<40} {:<10.2f}".format(f"Median {metric_name} (ms):", median))
        result[f"mean_{metric_attribute_name}_ms"] = mean
        result[f"median_{metric_attribute_name}_ms"] = median
        result[f"std_{metric_attribute_name}_ms"] = std
        for p, value in percentiles:
            p_word = str(int(p)) if int(p) == p else str(p)
            print("{:<40} {:<10.2f}".format(f"P{p_word} {metric_name} (ms):", value))
            result[f"p{p_word}_{metric_attribute_name}_ms"] = value

    if task_type_generation and tokenizer:
        process_one_metric("ttft", "TTFT", "Time to First Token")
        process_one_metric("tpot", "TPOT", "Time per Output Token (excl. 1st token)")
        process_one_metric("itl", "ITL", "Inter-token Latency")
    process_one_metric("e2el", "E2EL", "End-to-end Latency")
    # END COPY
    benchmark_result = result
    result_json: dict[str, Any] = {}
    # BEGIN COPY (vllm/benchmarks/serve.py: main_async, the saved dict)
    current_dt = "20261205-140000"
    result_json["date"] = current_dt
    result_json["endpoint_type"] = "openai-chat"  # for backward compatibility
    result_json["backend"] = "openai-chat"
    result_json["label"] = None
    result_json["model_id"] = "sim-model"
    result_json["tokenizer_id"] = "sim-model"
    result_json["num_prompts"] = 240
    result_json["request_rate"] = 8.0
    result_json["burstiness"] = 1.0
    result_json["max_concurrency"] = max_concurrency
    result_json = {**result_json, **benchmark_result}
    if not save_detailed:
        # Remove fields with too many data points
        for field in [
            "input_lens",
            "output_lens",
            "start_times",
            "ttfts",
            "itls",
            "generated_texts",
            "errors",
        ]:
            if field in result_json:
                del result_json[field]
            if field in benchmark_result:
                del benchmark_result[field]
    # END COPY
    return result_json


# ---------------------------------------------------------------- SGLang
# sgl-project/sglang, python/sglang/bench_serving.py at
# 0033168f0f58b2bc05aa0273bd475d9c01bafb1c


@dataclass
class SglangOutput:
    """SGLang's RequestFuncOutput, with the start time draw_outputs sets."""

    generated_text: str = ""
    success: bool = False
    latency: float = 0.0
    ttft: float = 0.0  # Time to first token
    itl: List[float] = field(default_factory=list)  # List of inter-token latencies
    prompt_len: int = 0
    error: str = ""
    output_len: int = 0
    start_time: float = 0.0
    output_tokens: int = 0


# BEGIN COPY (python/sglang/bench_serving.py: class BenchmarkMetrics)
@dataclass
class SglangBenchmarkMetrics:
    completed: int
    total_input: int
    total_output: int
    total_output_retokenized: int
    request_throughput: float
    input_throughput: float
    output_throughput: float
    output_throughput_retokenized: float
    total_throughput: float
    total_throughput_retokenized: float
    mean_ttft_ms: float
    median_ttft_ms: float
    std_ttft_ms: float
    p99_ttft_ms: float
    mean_tpot_ms: float
    median_tpot_ms: float
    std_tpot_ms: float
    p99_tpot_ms: float
    mean_itl_ms: float
    median_itl_ms: float
    std_itl_ms: float
    p95_itl_ms: float
    p99_itl_ms: float
    max_itl_ms: float
    mean_e2e_latency_ms: float
    median_e2e_latency_ms: float
    std_e2e_latency_ms: float
    p99_e2e_latency_ms: float
    concurrency: float
# END COPY (renamed SglangBenchmarkMetrics beside vLLM's)


def sglang_calculate_metrics(
    input_requests,
    outputs,
    dur_s: float,
    tokenizer,
    backend: str,
):
    BenchmarkMetrics = SglangBenchmarkMetrics
    # BEGIN COPY (python/sglang/bench_serving.py: calculate_metrics, body)
    output_lens: List[int] = []
    retokenized_output_lens: List[int] = []
    total_input = 0
    completed = 0
    itls: List[float] = []
    tpots: List[float] = []
    ttfts: List[float] = []
    e2e_latencies: List[float] = []
    for i in range(len(outputs)):
        if outputs[i].success:
            output_len = outputs[i].output_len
            output_lens.append(output_len)
            retokenized_output_len = len(
                tokenizer.encode(outputs[i].generated_text, add_special_tokens=False)
            )
            retokenized_output_lens.append(retokenized_output_len)
            total_input += input_requests[i].prompt_len
            if output_len > 1:
                tpots.append((outputs[i].latency - outputs[i].ttft) / (output_len - 1))
            itls += outputs[i].itl
            ttfts.append(outputs[i].ttft)

            e2e_latencies.append(outputs[i].latency)

            completed += 1
        else:
            output_lens.append(0)
            retokenized_output_lens.append(0)

    if completed == 0:
        warnings.warn(
            "All requests failed. This is likely due to a misconfiguration "
            "on the benchmark arguments.",
            stacklevel=2,
        )
    metrics = BenchmarkMetrics(
        completed=completed,
        total_input=total_input,
        total_output=sum(output_lens),
        total_output_retokenized=sum(retokenized_output_lens),
        request_throughput=completed / dur_s,
        input_throughput=total_input / dur_s,
        output_throughput=sum(output_lens) / dur_s,
        output_throughput_retokenized=sum(retokenized_output_lens) / dur_s,
        total_throughput=(total_input + sum(output_lens)) / dur_s,
        total_throughput_retokenized=(total_input + sum(retokenized_output_lens))
        / dur_s,
        mean_ttft_ms=np.mean(ttfts or 0)
        * 1000,  # ttfts is empty if streaming is not supported by backend
        median_ttft_ms=np.median(ttfts or 0) * 1000,
        std_ttft_ms=np.std(ttfts or 0) * 1000,
        p99_ttft_ms=np.percentile(ttfts or 0, 99) * 1000,
        mean_tpot_ms=np.mean(tpots or 0) * 1000,
        median_tpot_ms=np.median(tpots or 0) * 1000,
        std_tpot_ms=np.std(tpots or 0) * 1000,
        p99_tpot_ms=np.percentile(tpots or 0, 99) * 1000,
        mean_itl_ms=np.mean(itls or 0) * 1000,
        median_itl_ms=np.median(itls or 0) * 1000,
        std_itl_ms=np.std(itls or 0) * 1000,
        p95_itl_ms=np.percentile(itls or 0, 95) * 1000,
        p99_itl_ms=np.percentile(itls or 0, 99) * 1000,
        max_itl_ms=np.max(itls or 0) * 1000,
        mean_e2e_latency_ms=np.mean(e2e_latencies) * 1000,
        median_e2e_latency_ms=np.median(e2e_latencies) * 1000,
        std_e2e_latency_ms=np.std(e2e_latencies) * 1000,
        p99_e2e_latency_ms=np.percentile(e2e_latencies, 99) * 1000,
        concurrency=np.sum(e2e_latencies) / dur_s,
    )

    return metrics, output_lens
    # END COPY


@dataclass
class Args:
    backend: str = "sglang-oai"
    dataset_name: str = "random"
    sharegpt_output_len: Any = None
    random_input_len: int = 300
    random_output_len: int = 120
    random_range_ratio: float = 0.5
    output_details: bool = False


def sglang_line(seed, request_rate, output_details):
    args = Args(output_details=output_details)
    outputs, benchmark_duration = draw_outputs(SglangOutput, 160, seed, 0)
    input_requests = outputs
    max_concurrency, accept_length = None, None
    metrics, output_lens = sglang_calculate_metrics(
        input_requests=input_requests,
        outputs=outputs,
        dur_s=benchmark_duration,
        tokenizer=WordTokenizer(),
        backend=args.backend,
    )
    # BEGIN COPY (python/sglang/bench_serving.py: benchmark, result and details)
    result = {
        # Arguments
        "backend": args.backend,
        "dataset_name": args.dataset_name,
        "request_rate": request_rate,
        "max_concurrency": max_concurrency,
        "sharegpt_output_len": args.sharegpt_output_len,
        "random_input_len": args.random_input_len,
        "random_output_len": args.random_output_len,
        "random_range_ratio": args.random_range_ratio,
        # Results
        "duration": benchmark_duration,
        "completed": metrics.completed,
        "total_input_tokens": metrics.total_input,
        "total_output_tokens": metrics.total_output,
        "total_output_tokens_retokenized": metrics.total_output_retokenized,
        "request_throughput": metrics.request_throughput,
        "input_throughput": metrics.input_throughput,
        "output_throughput": metrics.output_throughput,
        "mean_e2e_latency_ms": metrics.mean_e2e_latency_ms,
        "median_e2e_latency_ms": metrics.median_e2e_latency_ms,
        "std_e2e_latency_ms": metrics.std_e2e_latency_ms,
        "p99_e2e_latency_ms": metrics.p99_e2e_latency_ms,
        "mean_ttft_ms": metrics.mean_ttft_ms,
        "median_ttft_ms": metrics.median_ttft_ms,
        "std_ttft_ms": metrics.std_ttft_ms,
        "p99_ttft_ms": metrics.p99_ttft_ms,
        "mean_tpot_ms": metrics.mean_tpot_ms,
        "median_tpot_ms": metrics.median_tpot_ms,
        "std_tpot_ms": metrics.std_tpot_ms,
        "p99_tpot_ms": metrics.p99_tpot_ms,
        "mean_itl_ms": metrics.mean_itl_ms,
        "median_itl_ms": metrics.median_itl_ms,
        "std_itl_ms": metrics.std_itl_ms,
        "p95_itl_ms": metrics.p95_itl_ms,
        "p99_itl_ms": metrics.p99_itl_ms,
        "concurrency": metrics.concurrency,
        "accept_length": accept_length,
    }
    result_details = {
        "input_lens": [output.prompt_len for output in outputs],
        "output_lens": output_lens,
        "ttfts": [output.ttft for output in outputs],
        "itls": [output.itl for output in outputs],
        "generated_texts": [output.generated_text for output in outputs],
        "errors": [output.error for output in outputs],
    }
    if args.output_details:
        result_for_dump = result | result_details
    else:
        result_for_dump = result
    return json.dumps(result_for_dump) + "\n"
    # END COPY (the file is opened in "a" mode: one line per run)


if __name__ == "__main__":
    with open(f"{HERE}/vllm-detailed.json", "w") as f:
        json.dump(vllm_result(True), f)
    with open(f"{HERE}/vllm-summary.json", "w") as f:
        json.dump(vllm_result(False), f)
    with open(f"{HERE}/sglang.jsonl", "w") as f:
        f.write(sglang_line(2, 4.0, False))
        f.write(sglang_line(3, 8.0, True))
