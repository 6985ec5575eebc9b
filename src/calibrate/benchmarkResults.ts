/**
 * The means a benchmark client measured, read from its results file (docs/calibrate.md): `vllm
 * bench serve --save-result` JSON, AIPerf's `profile_export_aiperf.json`, or inference-perf's
 * `summary_lifecycle_metrics.json` (or one stage's `stage_N_lifecycle_metrics.json`). The format
 * is recognised from the document's keys. Pure: the caller reads the file.
 */

export type ResultsFormat = "vllm-bench-serve" | "aiperf" | "inference-perf";

export interface MeasuredMeans {
  readonly format: ResultsFormat;
  /** Time to first token, mean over successful requests, ms. */
  readonly ttftMeanMs: number;
  /** Inter-token latency, mean, ms (the client's own definition); null when not reported. */
  readonly itlMeanMs: number | null;
  /** End-to-end latency, mean, ms; null when not reported. */
  readonly e2eMeanMs: number | null;
  /** Successful requests; null when not reported. */
  readonly completed: number | null;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** An AIPerf metric `{unit, avg, …}` in ms. */
function aiperfMs(m: unknown): number | null {
  if (!isObject(m)) return null;
  const avg = num(m["avg"]);
  if (avg === null) return null;
  const unit = m["unit"];
  if (unit === "s" || unit === "sec") return avg * 1000;
  if (unit === "ns") return avg / 1e6;
  if (unit === "us") return avg / 1000;
  return avg; // AIPerf reports latencies in ms
}

/** The measured means, or why the document is not a results file fleetsim reads. */
export function readBenchmarkResults(doc: unknown): MeasuredMeans | { readonly error: string } {
  if (!isObject(doc)) return { error: "expected a JSON object" };
  // vllm bench serve (benchmark_serving.py --save-result): flat `mean_*_ms` keys.
  const vllmTtft = num(doc["mean_ttft_ms"]);
  if (vllmTtft !== null) {
    return {
      format: "vllm-bench-serve",
      ttftMeanMs: vllmTtft,
      itlMeanMs: num(doc["mean_itl_ms"]) ?? num(doc["mean_tpot_ms"]),
      e2eMeanMs: num(doc["mean_e2el_ms"]),
      completed: num(doc["completed"]),
    };
  }
  // inference-perf lifecycle metrics: seconds under successes.latency.
  const successes = doc["successes"];
  if (isObject(successes) && isObject(successes["latency"])) {
    const lat = successes["latency"] as Json;
    const mean = (k: string): number | null => (isObject(lat[k]) ? num((lat[k] as Json)["mean"]) : null);
    const ttft = mean("time_to_first_token");
    if (ttft === null)
      return { error: "inference-perf metrics without successes.latency.time_to_first_token.mean" };
    const e2e = mean("request_latency");
    const out = isObject(successes["output_len"]) ? num((successes["output_len"] as Json)["mean"]) : null;
    // ITL as inference-perf's own summary pairs them: (E2E − TTFT) / (output tokens − 1).
    const itl = e2e !== null && out !== null && out > 1 ? ((e2e - ttft) / (out - 1)) * 1000 : null;
    return {
      format: "inference-perf",
      ttftMeanMs: ttft * 1000,
      itlMeanMs: itl,
      e2eMeanMs: e2e === null ? null : e2e * 1000,
      completed: num(successes["count"]),
    };
  }
  // AIPerf's profile export: one object per metric tag, at the top level or under `records`.
  const records = isObject(doc["records"]) ? (doc["records"] as Json) : doc;
  const aiperfTtft = aiperfMs(records["time_to_first_token"]);
  if (aiperfTtft !== null) {
    const count = records["request_count"];
    return {
      format: "aiperf",
      ttftMeanMs: aiperfTtft,
      itlMeanMs: aiperfMs(records["inter_token_latency"]),
      e2eMeanMs: aiperfMs(records["request_latency"]),
      completed: isObject(count) ? num(count["avg"]) : num(count),
    };
  }
  return {
    error:
      "not a benchmark results file fleetsim reads: expected vllm bench serve JSON (mean_ttft_ms), " +
      "AIPerf's profile_export_aiperf.json (time_to_first_token.avg) or inference-perf lifecycle metrics " +
      "(successes.latency.time_to_first_token.mean)",
  };
}
