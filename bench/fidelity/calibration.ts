/**
 * The calibration runs of the fidelity benchmark (bench/fidelity/calibration/README.md): 16 real
 * H100 vLLM runs of the public `inference-sim/training` repository, replayed through fleetsim with
 * their exact arrivals and prompts, and scored per stage the way their client measured.
 * Files are written by scripts/derive-calibration-data.ts; this module reads and replays them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { predict } from "../../src/api/replay.js";
import type { PerRequestRecord } from "../../src/report/perRequest.js";
import { percentile, rowOf } from "./simulate.js";

/** A stage's latency figures, measured or predicted, in the client's definitions (ms). */
export interface StageLatencies {
  /** Requests that succeeded, and those that failed (error or client timeout). */
  readonly completed: number;
  readonly failures: number;
  readonly ttftMeanMs: number;
  readonly ttftMedianMs: number;
  readonly ttftP90Ms: number;
  readonly ttftP99Ms: number;
  readonly e2eMeanMs: number;
  readonly e2eP90Ms: number;
  /** (E2E mean − TTFT mean) / (client output mean − 1): the client's re-tokenised token count. */
  readonly itlMeanMs: number;
}

/** One stage's figures as inference-perf published them (its lifecycle metrics). */
export interface MeasuredStage extends StageLatencies {
  readonly e2eMedianMs: number;
  readonly e2eP99Ms: number;
  /** Output tokens the client counted per request (re-tokenising the stream: fewer than sent). */
  readonly clientOutputMean: number;
  readonly inputMean: number;
  readonly outputThroughputTokS: number;
  readonly requestThroughput: number;
}

export interface CalibrationRun {
  readonly id: string;
  readonly source: {
    readonly repo: string;
    readonly config: string;
    readonly metrics: string;
    readonly perRequest: string;
  };
  readonly model: string;
  readonly gpu: string;
  readonly tensor: number;
  readonly vllm: {
    readonly maxNumBatchedTokens: number;
    readonly maxNumSeqs: number;
    readonly maxModelLen: number;
    readonly gpuMemoryUtilization: number;
    readonly blockSize: number;
    /** GPU KV blocks vLLM logged at start-up. */
    readonly kvBlocks: number;
  };
  readonly workload: {
    readonly kind: string;
    readonly numGroups: number;
    readonly promptsPerGroup: number;
    readonly systemPromptLen: number;
    readonly questionLen: number;
    /** Tokens generated per request (`ignore_eos`). */
    readonly outputLen: number;
    /** Constant-rate stages in order; `requests` of the trace belong to each, by index. */
    readonly stages: readonly {
      readonly rate: number;
      readonly durationS: number;
      readonly requests: number;
    }[];
  };
  /** Prompt p's length in tokens as the server counted it. */
  readonly promptLengths: readonly number[];
  /** [request index, prompt index] where a request did not send prompt `index mod prompts`. */
  readonly promptExceptions: readonly (readonly [number, number])[];
  /** Arrival times in µs from the first request, delta-encoded. */
  readonly arrivalUsDeltas: readonly number[];
  /**
   * How the run's failures fell, by arrival: the index of the first request that failed (null:
   * none did) and how many requests after it succeeded. The overloaded runs collapse: from the
   * first timeout on, no request succeeds (docs/fidelity.md "Calibration runs").
   */
  readonly outcome: { readonly firstFailure: number | null; readonly succeededAfterFirstFailure: number };
  readonly measured: { readonly summary: MeasuredStage; readonly stages: readonly MeasuredStage[] };
}

export const CALIBRATION_DIR = new URL("./calibration/", import.meta.url).pathname;

/** The overload runs (`reasoning`): most requests fail on hardware; scored on failures, not latency. */
export function isOverload(run: CalibrationRun): boolean {
  return run.workload.kind === "reasoning";
}

export function loadCalibrationRuns(dir = CALIBRATION_DIR): CalibrationRun[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as CalibrationRun);
}

/** Arrival times (ms) of the run's requests, in trace order. */
export function arrivalsMs(run: CalibrationRun): Float64Array {
  const out = new Float64Array(run.arrivalUsDeltas.length);
  let us = 0;
  for (let i = 0; i < out.length; i++) {
    us += run.arrivalUsDeltas[i];
    out[i] = us / 1000;
  }
  return out;
}

/** The prompt each request sent. */
export function promptsSent(run: CalibrationRun): Int32Array {
  const prompts = run.promptLengths.length;
  const out = new Int32Array(run.arrivalUsDeltas.length);
  for (let i = 0; i < out.length; i++) out[i] = i % prompts;
  for (const [i, p] of run.promptExceptions) out[i] = p;
  return out;
}

/** The stage of each request (by index). */
export function stageOf(run: CalibrationRun): Int32Array {
  const out = new Int32Array(run.arrivalUsDeltas.length);
  let i = 0;
  run.workload.stages.forEach((s, k) => {
    for (let j = 0; j < s.requests; j++) out[i++] = k;
  });
  return out;
}

/**
 * A Mooncake trace of the run at the engine's block size: a prompt's first blocks are its
 * group's system prompt (shared by the group's prompts), the rest its own; a repeated prompt has
 * the same block ids, so the prefix cache sees what vLLM saw.
 */
export function traceLines(run: CalibrationRun): string[] {
  const bs = run.vllm.blockSize;
  const w = run.workload;
  // BOS and the system prompt: the blocks fully inside them are the group's.
  const sharedBlocks = Math.floor((w.systemPromptLen + 1) / bs);
  const ids = run.promptLengths.map((len, p) => {
    const group = Math.floor(p / w.promptsPerGroup);
    const blocks: number[] = [];
    for (let b = 0; b < Math.ceil(len / bs); b++)
      blocks.push(b < sharedBlocks ? 1 + group * sharedBlocks + b : 1_000_000 + p * 10_000 + b);
    return blocks;
  });
  const times = arrivalsMs(run);
  const sent = promptsSent(run);
  const lines: string[] = [];
  for (let i = 0; i < times.length; i++) {
    const p = sent[i];
    lines.push(
      JSON.stringify({
        timestamp: times[i],
        input_length: run.promptLengths[p],
        output_length: w.outputLen,
        hash_ids: ids[p],
        request_id: `r${i}`,
      }),
    );
  }
  return lines;
}

/**
 * The client gave up after 300 s: inference-perf ran with `request_timeout: null` (results/config.yaml),
 * i.e. its HTTP session's default total timeout of 5 minutes; every failure of the overloaded runs
 * ended 300.0–301.0 s after it was sent (results/summary_lifecycle_metrics.json,
 * `failures.request_latency`) and every success within it (E2E p99 289.8–297.9 s).
 */
export const CLIENT_TIMEOUT_SECONDS = 300;

/**
 * vLLM's asynchronous scheduling: the runs' vLLM V1 (February 2026) has it on by default (since
 * vLLM 0.14.0, vllm-project/vllm#27614), and the runs show both of its marks: no per-sequence host
 * time in the step (docs/fidelity.md "Calibration runs") and one pass more before the first token.
 */
export const ASYNC_SCHEDULING = true;

export interface CalibrationOptions {
  /** Extra YAML-shaped settings merged into `engine.workers.aggregated`. */
  readonly workerOverrides?: Readonly<Record<string, unknown>>;
  /** `client.overhead.request_ms` (0: engine-side figures). */
  readonly requestMs?: number;
}

/** The fleetsim config that mirrors the run's vLLM deployment. */
export function calibrationConfig(
  run: CalibrationRun,
  tracePath: string,
  opts: CalibrationOptions = {},
): Record<string, unknown> {
  const v = run.vllm;
  const config: Record<string, unknown> = {
    traffic: {
      source: { type: "trace", format: "mooncake", paths: [tracePath], block_size: v.blockSize },
      load: { type: "trace_timestamps", speedup: 1 },
    },
    engine: {
      mode: "aggregated",
      model: run.model,
      hardware: run.gpu,
      backend: "vllm",
      context_length: v.maxModelLen,
      workers: {
        aggregated: {
          parallelism: { replicas: 1, tensor: run.tensor, pipeline: 1 },
          scheduler: {
            max_batched_tokens: v.maxNumBatchedTokens,
            max_sequences: v.maxNumSeqs,
            async_scheduling: ASYNC_SCHEDULING,
          },
          kv_cache: {
            block_size: v.blockSize,
            prefix_caching: true,
            capacity: { type: "fixed", blocks: v.kvBlocks },
          },
          timing: { type: "default" },
          ...opts.workerOverrides,
        },
      },
    },
  };
  config.client = {
    overhead: { request_ms: opts.requestMs ?? 0 },
    timeout_seconds: CLIENT_TIMEOUT_SECONDS,
  };
  return config;
}

/** fleetsim's figures for one stage; its ITL divides by the measured client output count. */
export type PredictedStage = StageLatencies;

export interface PredictedRun {
  readonly stages: readonly PredictedStage[];
  readonly saturated: boolean;
  readonly hostMs: number;
  /** The replay's failures by arrival, as `CalibrationRun.outcome` counts the measured ones. */
  readonly outcome: CalibrationRun["outcome"];
}

/** Where the failures fall by arrival (trace row order), as `CalibrationRun.outcome`. */
export function outcomeOf(records: readonly PerRequestRecord[]): CalibrationRun["outcome"] {
  const failedAt: boolean[] = [];
  for (const r of records) failedAt[rowOf(r)] = r.terminal_status !== "completed";
  const first = failedAt.indexOf(true);
  let succeeded = 0;
  if (first >= 0) for (let i = first + 1; i < failedAt.length; i++) if (failedAt[i] === false) succeeded++;
  return { firstFailure: first < 0 ? null : first, succeededAfterFirstFailure: succeeded };
}

/** Per-stage statistics over fleetsim's per-request records. */
export function stageStatistics(run: CalibrationRun, records: readonly PerRequestRecord[]): PredictedStage[] {
  const stage = stageOf(run);
  const k = run.workload.stages.length;
  const ttft: number[][] = Array.from({ length: k }, () => []);
  const e2e: number[][] = Array.from({ length: k }, () => []);
  const failures = new Array<number>(k).fill(0);
  for (const r of records) {
    const s = stage[rowOf(r)];
    if (r.terminal_status !== "completed" || r.ttft_ms === null || r.e2e_latency_ms === null) {
      failures[s]++;
      continue;
    }
    ttft[s].push(r.ttft_ms);
    e2e[s].push(r.e2e_latency_ms);
  }
  const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
  return run.workload.stages.map((_, s) => {
    const t = Float64Array.from(ttft[s]).sort();
    const e = Float64Array.from(e2e[s]).sort();
    const ttftMean = mean(ttft[s]);
    const e2eMean = mean(e2e[s]);
    const clientOut = run.measured.stages[s].clientOutputMean;
    return {
      completed: ttft[s].length,
      failures: failures[s],
      ttftMeanMs: ttftMean,
      ttftMedianMs: percentile(t, 0.5),
      ttftP90Ms: percentile(t, 0.9),
      ttftP99Ms: percentile(t, 0.99),
      e2eMeanMs: e2eMean,
      e2eP90Ms: percentile(e, 0.9),
      itlMeanMs: (e2eMean - ttftMean) / (clientOut - 1),
    };
  });
}

/** Replays the run and returns fleetsim's per-stage figures. */
export async function simulateCalibrationRun(
  run: CalibrationRun,
  opts: CalibrationOptions = {},
): Promise<PredictedRun> {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-calibration-"));
  try {
    const trace = join(dir, "trace.jsonl");
    writeFileSync(trace, `${traceLines(run).join("\n")}\n`);
    const started = performance.now();
    const report = await predict(calibrationConfig(run, trace, opts), {
      capturePerRequest: true,
      baseDir: dir,
    });
    const hostMs = performance.now() - started;
    const records = report.perRequest ?? [];
    return {
      stages: stageStatistics(run, records),
      saturated: report.summary.saturated === 1,
      hostMs,
      outcome: outcomeOf(records),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
