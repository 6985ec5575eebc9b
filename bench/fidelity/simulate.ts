/**
 * Replays one fidelity experiment through fleetsim and computes the same statistics the source
 * measured, with vLLM `benchmark_serving` definitions (bench/fidelity/README.md, "Definitions"):
 * TTFT and E2E over requests that got ≥ 1 token, ITL pooled over every inter-token gap, TPOT per
 * request over requests with ≥ 2 tokens, throughput over the span from the first arrival to the
 * last completion.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { predict } from "../../src/api/replay.js";
import { gpuSpec, knownGpuIds, tableSystem } from "../../src/hardware/catalog.js";
import type { PerRequestRecord } from "../../src/report/perRequest.js";
import { Prng } from "../../src/util/prng.js";
import type { Experiment, Measured } from "./experiment.js";

/** Knobs the benchmark varies on top of an experiment (never per-experiment tuning). */
export interface SimulationOptions {
  /** Extra YAML-shaped settings merged into `engine.workers.aggregated` (e.g. timing). */
  readonly workerOverrides?: Readonly<Record<string, unknown>>;
  /** A top-level `client` section for the run, when the client model is in use. */
  readonly client?: Readonly<Record<string, unknown>> | null;
}

export interface Predicted extends Measured {
  /** Requests that did not complete (rejected, timed out, cut by the stop). */
  readonly failed: number;
  /** Wall time of the replay on this host, ms (not a metric; for the runtime budget). */
  readonly hostMs: number;
  /** fleetsim's saturation flag (summary `saturated`, docs/metrics.md "Saturation"). */
  readonly saturated: boolean;
}

/** Arrival times (ms) of the experiment's requests, in row order. */
export function arrivalTimes(e: Experiment): Float64Array {
  const n = e.workload.inputLen.length;
  const out = new Float64Array(n);
  const w = e.workload;
  if (w.arrivalMs !== null) {
    for (let i = 0; i < n; i++) out[i] = w.arrivalMs[i];
    return out;
  }
  if (w.poisson != null) {
    // Exponential gaps from fleetsim's seeded PRNG: the source's own random stream is not
    // reproducible here, so the arrival pattern matches in distribution, not request by request.
    const rng = new Prng(w.poisson.seed);
    let t = 0;
    for (let i = 0; i < n; i++) {
      if (i > 0) t += (-Math.log(1 - rng.nextFloat()) / w.poisson.rate) * 1000;
      out[i] = t;
    }
    const span = w.poisson.spanS;
    if (span !== undefined && n > 1 && out[n - 1] > 0) {
      const scale = (span * 1000) / out[n - 1];
      for (let i = 0; i < n; i++) out[i] *= scale;
    }
    return out;
  }
  return out; // closed loop: timestamps are ignored
}

/**
 * Warm-up rows before the measured run when the server had served the same prompts already
 * (`workload.warmPrefixCache`): each prompt once, one output token, all at t = 0, and the measured
 * run starts WARMUP_GAP_MS later, when they are long done. Their KV blocks stay cached (inactive)
 * exactly as on the real server, which had room for all of them.
 */
const WARMUP_GAP_MS = 600_000;

/** Rows of the replayed trace that come before the measured requests. */
export function warmupRows(e: Experiment): number {
  return e.workload.warmPrefixCache === true && e.vllm.prefixCaching ? e.workload.inputLen.length : 0;
}

/**
 * Output lengths to replay. Where the source publishes only the run's output-token total and the
 * per-request lengths are a stand-in (`workload.outputLenSource` "stand-in: …"), the stand-in is
 * scaled to that total (largest remainder, so the sum is exact): the run's published workload.
 */
export function replayOutputLengths(e: Experiment): number[] {
  const out = e.workload.outputLen.slice();
  const total = e.measured.totalOutputTokens;
  if (!(e.workload.outputLenSource ?? "").startsWith("stand-in") || total == null) return out;
  const sum = out.reduce((a, b) => a + b, 0);
  const exact = out.map((x) => (x * total) / sum);
  const floor = exact.map(Math.floor);
  let left = total - floor.reduce((a, b) => a + b, 0);
  const order = exact
    .map((x, i) => [x - Math.floor(x), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left-- <= 0) break;
    floor[i]++;
  }
  return floor;
}

/** A Mooncake trace of the experiment: unique hash ids per prompt (no shared prefixes). */
function writeTrace(e: Experiment, file: string): void {
  const w = e.workload;
  const outputLen = replayOutputLengths(e);
  const bs = e.vllm.blockSize;
  const times = arrivalTimes(e);
  const n = w.inputLen.length;
  const ids: number[][] = [];
  let nextId = 1;
  for (let i = 0; i < n; i++) {
    const blocks: number[] = [];
    for (let b = 0; b < Math.ceil(w.inputLen[i] / bs); b++) blocks.push(nextId++);
    ids.push(blocks);
  }
  const lines: string[] = [];
  const warm = warmupRows(e);
  for (let i = 0; i < warm; i++) {
    lines.push(
      JSON.stringify({
        timestamp: 0,
        input_length: w.inputLen[i],
        output_length: 1,
        hash_ids: ids[i],
        request_id: `warm${i}`,
      }),
    );
  }
  const offset = warm > 0 ? WARMUP_GAP_MS : 0;
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        timestamp: times[i] + offset,
        input_length: w.inputLen[i],
        // A client that saw no token still cost a prefill: replay it as prefill + one token.
        output_length: Math.max(1, outputLen[i]),
        hash_ids: ids[i],
        request_id: `r${i}`,
      }),
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/** The catalog system for the experiment's GPU: a memory variant when the card is smaller. */
export function hardwareFor(e: Experiment): string {
  if (e.gpuMemoryGiB == null) return e.gpu;
  const want = e.gpuMemoryGiB * 2 ** 30;
  const variant = knownGpuIds().find(
    (id) => tableSystem(id) === e.gpu && gpuSpec(id).memCapacityBytes === want,
  );
  if (variant === undefined)
    throw new Error(`${e.id}: no ${e.gpuMemoryGiB} GiB variant of ${e.gpu} in the catalog`);
  return variant;
}

/** The fleetsim config (YAML-shaped) that mirrors the experiment's vLLM deployment. */
export function experimentConfig(
  e: Experiment,
  tracePath: string,
  opts: SimulationOptions = {},
): Record<string, unknown> {
  const v = e.vllm;
  // vLLM's KV budget: the logged block count where the source has it, else its memory formula.
  const capacity =
    v.numGpuBlocks != null
      ? { type: "fixed", blocks: v.numGpuBlocks }
      : { type: "default", memory_fraction: v.gpuMemoryUtilization };
  const closed = e.workload.closedLoopConcurrency ?? 0;
  const sglang = e.servingEngine === "sglang";
  const trtllm = e.servingEngine === "trtllm";
  const config: Record<string, unknown> = {
    traffic: {
      source: { type: "trace", format: "mooncake", paths: [tracePath], block_size: v.blockSize },
      load:
        closed > 0
          ? {
              type: "concurrency",
              concurrency: closed,
              ...(e.workload.warmupSessions !== undefined
                ? { warmup_sessions: e.workload.warmupSessions }
                : {}),
            }
          : { type: "trace_timestamps", speedup: 1 },
    },
    engine: {
      mode: "aggregated",
      model: e.model,
      hardware: hardwareFor(e),
      // The source's engine: an SGLang run replays through fleetsim's SGLang core.
      backend: e.servingEngine ?? "vllm",
      ...(e.servingEngine === undefined ? { backend_version: v.version } : {}),
      // TensorRT-LLM's enable_chunked_prefill (its benchmark template leaves it off).
      ...(trtllm ? { enable_chunked_prefill: v.chunkedPrefill } : {}),
      context_length: v.maxModelLen,
      workers: {
        aggregated: {
          parallelism: {
            replicas: 1,
            tensor: e.parallelism.tensor,
            pipeline: e.parallelism.pipeline,
            ...(e.parallelism.attentionData !== undefined
              ? { attention_data: e.parallelism.attentionData }
              : {}),
            ...(e.parallelism.moeTensor !== undefined ? { moe_tensor: e.parallelism.moeTensor } : {}),
            ...(e.parallelism.moeExpert !== undefined ? { moe_expert: e.parallelism.moeExpert } : {}),
          },
          scheduler: sglang
            ? { max_sequences: v.maxNumSeqs, async_scheduling: v.asyncScheduling === true }
            : {
                max_batched_tokens: v.maxNumBatchedTokens,
                max_sequences: v.maxNumSeqs,
                async_scheduling: v.asyncScheduling === true,
              },
          // AIConfigurator's SGLang benchmark rule: --max-prefill-tokens = ISL + 1500 (the pass
          // budget less one token per running request, as the experiment stores it) and
          // --enable-mixed-chunk; SGLang's default overlap scheduler is `asyncScheduling` (docs/backends.md).
          ...(sglang
            ? {
                sglang: {
                  max_prefill_tokens: v.maxNumBatchedTokens - v.maxNumSeqs,
                  enable_mixed_chunk: true,
                },
              }
            : {}),
          kv_cache: { block_size: v.blockSize, prefix_caching: v.prefixCaching, capacity },
          timing: { type: "default" },
          ...opts.workerOverrides,
        },
      },
    },
  };
  if (opts.client != null) config.client = opts.client;
  return config;
}

export function percentile(sorted: Float64Array, q: number): number {
  // numpy's default (linear) interpolation, as benchmark_serving reports percentiles.
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length === 0 ? Number.NaN : s / xs.length;
}

/** The trace row of a request (its uuid ends in the row, hex). */
export function rowOf(r: PerRequestRecord): number {
  return Number.parseInt(r.uuid.slice(r.uuid.lastIndexOf("-") + 1), 16);
}

/** The source's statistics over fleetsim's per-request records. */
export function statistics(
  e: Experiment,
  records: readonly PerRequestRecord[],
): Omit<Predicted, "hostMs" | "saturated"> {
  const excluded = new Set(e.latencyExcluded ?? []);
  const ttft: number[] = [];
  const e2e: number[] = [];
  const tpot: number[] = [];
  let gapSum = 0;
  let gapCount = 0;
  let outTokens = 0;
  let completed = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  const warm = warmupRows(e);
  let measuredRecords = 0;
  for (const r of records) {
    const row = rowOf(r) - warm;
    if (row < 0) continue;
    measuredRecords++;
    first = Math.min(first, r.arrival_time_ms);
    if (r.terminal_status !== "completed") continue;
    completed++;
    last = Math.max(last, r.terminal_time_ms);
    // Tokens the client saw: a request the source recorded as empty was replayed with one token.
    const realOut = e.workload.outputLen[row] === 0 ? 0 : r.output_length;
    outTokens += realOut;
    if (excluded.has(row) || realOut < 1 || r.ttft_ms === null || r.e2e_latency_ms === null) continue;
    ttft.push(r.ttft_ms);
    e2e.push(r.e2e_latency_ms);
    const n = r.output_length;
    if (n >= 2 && r.first_token_ms !== null && r.last_token_ms !== null) {
      const span = r.last_token_ms - r.first_token_ms;
      gapSum += span;
      gapCount += n - 1;
      tpot.push(span / (n - 1));
    }
  }
  const sortedTtft = Float64Array.from(ttft).sort();
  const sortedE2e = Float64Array.from(e2e).sort();
  const durationS = (last - first) / 1000;
  return {
    completed,
    failed: measuredRecords - completed,
    durationS,
    ttftMeanMs: mean(ttft),
    ttftP99Ms: percentile(sortedTtft, 0.99),
    itlMeanMs: gapCount > 0 ? gapSum / gapCount : Number.NaN,
    itlP99Ms: null, // pooled gaps are not kept per token in requests.jsonl
    tpotMeanMs: mean(tpot),
    e2eMeanMs: mean(e2e),
    e2eP99Ms: percentile(sortedE2e, 0.99),
    outputThroughputTokS: durationS > 0 ? outTokens / durationS : Number.NaN,
    requestThroughput: durationS > 0 ? completed / durationS : Number.NaN,
  };
}

/** Replays the experiment and returns fleetsim's figures. */
export async function simulate(e: Experiment, opts: SimulationOptions = {}): Promise<Predicted> {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-fidelity-"));
  try {
    const trace = join(dir, "trace.jsonl");
    writeTrace(e, trace);
    const started = performance.now();
    const report = await predict(experimentConfig(e, trace, opts), { capturePerRequest: true, baseDir: dir });
    const hostMs = performance.now() - started;
    return { ...statistics(e, report.perRequest ?? []), hostMs, saturated: report.summary.saturated === 1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
