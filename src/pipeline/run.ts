/**
 * The run pipeline of `fleetsim predict` and the library API (docs/architecture.md): the spec's
 * workload and timing models, then `simulate` (Planner, replay, prediction document), with the
 * warnings a run's outcome deserves.
 */

import type { RetuneController, RetuneSweepInfo } from "../autoscale/retuneController.js";
import type { RunSpec } from "../config/runSpec.js";
import { BACKEND_LABEL } from "../hardware/backendTables.js";
import { hardwareData } from "../hardware/catalog.js";
import { MIN_GROWTH } from "../metrics/saturation.js";
import type { Summary } from "../output/summary.js";
import type { Prediction } from "../report/prediction.js";
import type { Replay, ReplayResult } from "../sim/replay.js";
import type { ExecutorSpec } from "../sweep/executor.js";
import {
  backendHasTables,
  borrowedGroupsOf,
  tableBackendOf,
  tableVersionOf,
} from "../timing/opTableSource.js";
import type { RequestSource, WorkloadInfo } from "../traffic/requestSource.js";
import { TableSource } from "../traffic/tableSource.js";
import { candidateReplayPool } from "./candidateReplays.js";
import { simulate } from "./simulate.js";
import { createRoleTimings } from "./timings.js";
import { loadRetuneWorkload, openWorkload } from "./workload.js";

export interface RunOutcome {
  readonly prediction: Prediction;
  readonly result: ReplayResult;
  /** With `planner.retune`: what each window's sweep did (process counts, wall time); else absent. */
  readonly retuneSweeps?: readonly RetuneSweepInfo[];
}

export interface RunHooks {
  /**
   * Receives the replay before it starts, its workload and, with retune, the retune controller (to
   * abort it on Ctrl-C, or show progress and the sweeps).
   */
  onStart?(replay: Replay, workload: WorkloadInfo, retune: RetuneController | null): void;
  /** Called when the replay has finished, before its report is built (the shutdown phase begins). */
  onReplayEnd?(): void;
  /** Receives diagnostic lines at info level (the retune window counts, docs/retune.md §4). */
  log?(line: string): void;
  /**
   * Receives warnings: rows the trace reader dropped, the `[ADVISORY]` start-up line, a Planner
   * bootstrap that fell back to load-based scaling.
   */
  warn?(line: string): void;
}

/** The whole pipeline: spec → workload → timing → policy → replay → prediction document. */
export async function runPrediction(
  spec: RunSpec,
  opts: {
    capturePerRequest: boolean;
    /** Where retune's window sweeps run (docs/sweep.md "Executors"); local worker processes by default. */
    executor?: ExecutorSpec;
  },
  hooks: RunHooks = {},
): Promise<RunOutcome> {
  warnEstimatedHardware(spec, hooks.warn);
  warnBorrowedTables(spec, hooks.warn);
  const retuneOn = spec.planner?.retune !== undefined && spec.planner.retune !== null;
  const [workload, timings] = await Promise.all([
    retuneOn
      ? loadRetuneWorkload(spec, hooks.warn)
      : openWorkload(spec, hooks.warn).then((source: RequestSource) => ({
          source,
          table: null,
          requests: null,
        })),
    createRoleTimings(spec.engine),
  ]);
  const { table, requests } = workload;
  const source = "source" in workload ? workload.source : new TableSource(workload.table);
  // Retune's sweep workers live for the whole run (one pool for every window), no longer.
  const pool =
    requests === null || table === null
      ? null
      : candidateReplayPool(table, spec.load.type !== "concurrency", opts.executor);
  let simulation: Awaited<ReturnType<typeof simulate>>;
  try {
    simulation = await simulate(spec, source, timings, {
      capturePerRequest: opts.capturePerRequest,
      retune: requests === null || pool === null ? null : { requests, replays: pool.replays, log: hooks.log },
      messages: { warn: hooks.warn },
      onStart: (replay, planner) => hooks.onStart?.(replay, source.info, planner?.retune ?? null),
      onReplayEnd: (result) => {
        void pool?.close(); // no sweep follows the replay's end: the workers can go now
        hooks.onReplayEnd?.();
        warnRejected(result, spec, hooks.warn);
        if (result.stalled !== null) hooks.warn?.(stallMessage(result.stalled, spec));
      },
    });
  } finally {
    await pool?.close();
  }
  const { prediction, result, planner } = simulation;
  warnClientOutcome(prediction.summary, spec, hooks.warn);
  const sweeps = planner?.retune?.sweepInfo;
  return sweeps === undefined ? { prediction, result } : { prediction, result, retuneSweeps: sweeps };
}

/** Why a run stopped early: the Planner left a pool without any worker while requests waited. */
function stallMessage(stall: NonNullable<ReplayResult["stalled"]>, spec: RunSpec): string {
  const p = spec.planner;
  const engine = spec.engine;
  const role =
    engine.mode === "aggregated"
      ? engine.aggregated
      : stall.pool === "prefill"
        ? engine.prefill
        : engine.decode;
  const min =
    p === null
      ? null
      : stall.pool === "prefill"
        ? (p.prefillMinEndpoint ?? p.minEndpoint)
        : stall.pool === "decode"
          ? (p.decodeMinEndpoint ?? p.minEndpoint)
          : p.minEndpoint;
  const budget =
    p !== null && p.maxGpuBudget >= 0 && min !== null && p.maxGpuBudget < min * role.gpusPerWorker
      ? `: planner.max_num_gpus (${p.maxGpuBudget}) cannot hold the minimum of ${min} workers × ${role.gpusPerWorker} GPUs, so the budget scales the pool to zero`
      : "";
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  return (
    `the run stopped at ${s(stall.atMs)} of virtual time: scaling left the ${stall.pool} pool without any ` +
    `worker from ${s(stall.sinceMs)} on while ${stall.waiting} requests waited for it${budget}; ` +
    "they are counted as not completed"
  );
}

/**
 * Requests the client abandoned (`client.timeout_seconds`), and a saturated run (docs/metrics.md
 * "Saturation"): both mean the fleet did not keep up with the traffic, which the latency keys
 * alone do not show.
 */
function warnClientOutcome(
  summary: Readonly<Summary>,
  spec: RunSpec,
  warn: ((line: string) => void) | undefined,
): void {
  if (warn === undefined) return;
  const timedOut = summary["timed_out_requests"] ?? 0;
  if (timedOut > 0) {
    const seconds = (spec.client?.timeoutMs ?? 0) / 1000;
    warn(
      `${timedOut} of ${summary["num_requests"]} requests timed out (client.timeout_seconds = ${seconds}): ` +
        "counted as failed, not in goodput",
    );
  }
  if (summary["saturated"] === 1 && timedOut > 0 && summary["saturation_backlog_growth"] <= MIN_GROWTH) {
    warn(
      `the run is saturated: its clients gave up on ${timedOut} requests, which held the queue at ` +
        `${summary["backlog_at_last_arrival"]} requests at the last arrival; the fleet cannot keep up with this traffic`,
    );
  } else if (summary["saturated"] === 1) {
    warn(
      `the run is saturated: the backlog grew by ${Math.round(summary["saturation_backlog_growth"])} requests over ` +
        `the last ${Math.round(summary["saturation_window_ms"] / 1000)} s of arrivals ` +
        `(${summary["backlog_at_last_arrival"]} still queued at the last arrival); latencies depend on the trace's length`,
    );
  }
}

/**
 * A GPU system without op tables of its own (docs/perf-tables.md "Derived systems"): its timing is
 * an estimate, and the run says so before it starts (prediction.json's `run.topology.*.hardware_data`
 * and the fleet block say it again).
 */
function warnEstimatedHardware(spec: RunSpec, warn: ((line: string) => void) | undefined): void {
  const e = spec.engine;
  const roles = e.mode === "aggregated" ? [e.aggregated] : [e.prefill, e.decode];
  // Only the op-level model reads the op tables; polynomial and fixed timing do not.
  const opLevel = roles.filter((r) => r.timing.type === "default");
  const gpus = [...new Set(opLevel.map((r) => r.hardware ?? e.hardware))];
  for (const gpu of gpus) {
    const d = hardwareData(gpu);
    if (d.tier === "estimated") {
      warn?.(`${gpu} has no measured op tables: its timing is estimated (${d.basis}), not calibrated`);
    }
  }
}

/**
 * SGLang and TRT-LLM runs keep their own scheduler semantics; their op-level passes are priced
 * from the vLLM op tables unless `timing.op_tables: backend` picks the backend's own
 * (docs/backends.md "Timing"). Say which before the run starts, and with the backend's tables
 * name the groups its model needs that those tables lack (priced from vLLM's).
 */
function warnBorrowedTables(spec: RunSpec, warn: ((line: string) => void) | undefined): void {
  const e = spec.engine;
  if (e.backend === "vllm" || warn === undefined) return;
  const roles = e.mode === "aggregated" ? [e.aggregated] : [e.prefill, e.decode];
  const label = BACKEND_LABEL[e.backend];
  const lines = new Set<string>();
  for (const r of roles) {
    if (r.timing.type !== "default") continue;
    const gpu = r.timing.gpu.id;
    if (tableBackendOf(r.timing, e.backend) === "vllm") {
      // Block-FP8 linear layers are then the one kernel priced as the backend runs it (docs/models.md).
      const kernelNote =
        r.timing.model.weightDtype !== "fp8_block"
          ? ""
          : e.backend === "sglang"
            ? " (block-FP8 linear layers are priced as DeepGEMM, from the per-tensor FP8 cells)"
            : " (block-FP8 linear layers are priced from the per-tensor FP8 cells, as TensorRT-LLM's own block-scale GEMMs measure)";
      const why =
        r.timing.opTables === "backend"
          ? `no ${label} op tables for ${gpu}${r.timing.perfDatabase === null ? "" : " in the perf database"}`
          : backendHasTables(r.timing, e.backend)
            ? `the default; timing.op_tables: backend prices them from the ${label} tables`
            : `no ${label} op tables for ${gpu}`;
      lines.add(
        `engine.backend '${e.backend}': its scheduler is simulated, but passes on ${gpu} are priced from the vLLM op tables ` +
          `(${why}); expect kernel-level differences${kernelNote}`,
      );
      continue;
    }
    const borrowed = borrowedGroupsOf(r.timing, e.backend);
    if (borrowed.length === 0) continue;
    const version = tableVersionOf(r.timing, e.backend);
    lines.add(
      `engine.backend '${e.backend}': passes on ${gpu} are priced from the ${label}${version === null ? "" : ` ${version}`} op tables, ` +
        `but ${borrowed.join(", ")} from the vLLM tables (the ${label} tables have no such rows)`,
    );
  }
  for (const line of lines) warn(line);
}

/**
 * Requests the engines rejected (a prompt at max_model_len, or a context larger than a worker's
 * whole KV cache) would otherwise only show as a low completion count: say so, with the sizes.
 */
function warnRejected(result: ReplayResult, spec: RunSpec, warn: ((line: string) => void) | undefined): void {
  if (warn === undefined) return;
  const c = result.collector;
  const rejected = c.rejected;
  if (rejected === 0) return;
  const engine = spec.engine;
  const roles = engine.mode === "aggregated" ? [engine.aggregated] : [engine.prefill, engine.decode];
  const caches = roles.map((r) => `${r.numGpuBlocks} blocks × ${r.blockSize} tokens`).join(" / ");
  const limit = roles[0].maxModelLen === null ? "" : `, max_model_len ${roles[0].maxModelLen}`;
  warn(
    `${rejected} of ${c.arrived} requests were rejected: their prompt (or context) does not fit ` +
      `a worker's KV cache (${caches}${limit}); check kv_cache.capacity and context_length`,
  );
}
