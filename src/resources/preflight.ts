/**
 * The preflight memory plan (aisimulate.md §2.6 planning heuristics, docs/resources.md §2):
 * coordinator RSS + 256 MiB + 512 MiB per worker process + a trace estimate, compared with the
 * budget before any work. The reference's trace estimate is `128 × file bytes + 32 B/token +
 * 64 KiB/request`; fleetsim uses the file-size term only (counting tokens and requests would mean
 * reading the trace, which is what the preflight is meant to avoid).
 */
import { statSync } from "node:fs";
import type { RunSpec } from "../config/runSpec.js";
import type { ResourceBudget } from "./budget.js";

export const MIB = 1024 * 1024;
/** Fixed headroom above the coordinator's RSS. */
export const PLAN_OVERHEAD_BYTES = 256 * MIB;
/** Per worker process (fleetsim's only worker processes are retune sweep workers). */
export const PLAN_WORKER_BYTES = 512 * MIB;
/** Bytes of memory planned per byte of trace file. */
export const PLAN_TRACE_FACTOR = 128;

export interface ResourcePlan {
  readonly fits: boolean;
  readonly estimatedBytes: number;
  readonly coordinatorRssBytes: number;
  readonly overheadBytes: number;
  readonly workerProcesses: number;
  readonly workerBytes: number;
  readonly traceFileBytes: number;
  readonly traceBytes: number;
}

/** Worker processes the run forks: `planner.retune.max_parallel` with retune, else none. */
export function plannedWorkerProcesses(spec: RunSpec): number {
  const retune = spec.planner?.retune;
  return retune === undefined || retune === null ? 0 : retune.maxParallel;
}

/** Total size of the trace files the run reads (0 for synthetic traffic or unreadable files). */
export function traceFileBytes(spec: RunSpec): number {
  const src = spec.source;
  if (src.type !== "trace") return 0;
  const paths = src.format === "dynamo" ? src.paths : [src.path];
  let total = 0;
  for (const p of paths) {
    try {
      total += statSync(p).size;
    } catch {
      // a missing file is reported when the trace is read
    }
  }
  return total;
}

export function planResources(
  spec: RunSpec,
  budget: ResourceBudget,
  coordinatorRssBytes: number = process.memoryUsage.rss(),
): ResourcePlan {
  const workerProcesses = plannedWorkerProcesses(spec);
  const workerBytes = workerProcesses * PLAN_WORKER_BYTES;
  const fileBytes = traceFileBytes(spec);
  const traceBytes = PLAN_TRACE_FACTOR * fileBytes;
  const estimatedBytes = coordinatorRssBytes + PLAN_OVERHEAD_BYTES + workerBytes + traceBytes;
  return {
    fits: estimatedBytes <= budget.memoryBytes,
    estimatedBytes,
    coordinatorRssBytes,
    overheadBytes: PLAN_OVERHEAD_BYTES,
    workerProcesses,
    workerBytes,
    traceFileBytes: fileBytes,
    traceBytes,
  };
}

/** The `resource-plan.json` document (snake_case keys, written sorted). */
export function resourcePlanDocument(plan: ResourcePlan, budget: ResourceBudget): Record<string, unknown> {
  return {
    decision: plan.fits ? "accepted" : "refused",
    budget_bytes: budget.memoryBytes,
    memory_limit_source: budget.memorySource,
    available_memory_bytes: budget.host.availableMemoryBytes,
    available_memory_source: budget.host.availableMemorySource,
    cpu_limit: budget.cpuLimit,
    host_cpu_count: budget.host.cpuCount,
    estimated_bytes: plan.estimatedBytes,
    components: {
      coordinator_rss_bytes: plan.coordinatorRssBytes,
      overhead_bytes: plan.overheadBytes,
      worker_processes: plan.workerProcesses,
      worker_bytes: plan.workerBytes,
      trace_file_bytes: plan.traceFileBytes,
      trace_bytes: plan.traceBytes,
    },
  };
}
