/**
 * The preflight memory plan (docs/resources.md §2): before any work, estimate the peak resident
 * memory of the run's process tree from what it will hold — trace rows and their KV-block
 * hashes, the simulated workers' KV pools, the Planner's tick records, per-request records, and
 * each retune sweep worker process — and refuse the run (exit 3) when that exceeds the budget.
 *
 * The workload's size comes from a pass over the trace (`traceScan.ts`: every line counted, a
 * sample parsed for prompt sizes) or from the synthetic generator's settings. The coefficients
 * are measured (docs/resources.md "Measured peaks"): bytes per row and per block of the
 * typed-array columns, per KV block of the engines' pools, fixed costs of the op tables and of a
 * sweep worker process.
 */

import { engineBlockSize } from "../config/blockSize.js";
import type { RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { TraceFormat } from "../config/traceFormats.js";
import { DEFAULT_COLLECT_LIMIT } from "../metrics/exactStatsBuilder.js";
import { DEFAULT_CHUNK_ROWS, DEFAULT_RESIDENT_ROWS, REQUEST_LOG_ROW_BYTES } from "../metrics/requestLog.js";
import { retainedBytes } from "../traffic/mooncake/stream.js";
import type { ResourceBudget } from "./budget.js";
import { scanTrace } from "./traceScan.js";

export const MIB = 1024 * 1024;

/** The plan's coefficients (bytes), measured as docs/resources.md "Measured peaks" describes. */
export const PLAN_COEFFICIENTS = {
  /** Replay machinery, JIT and heap growth of any run above the RSS at the preflight. */
  runOverheadBytes: 16 * MIB,
  /** Op-level timing: the op tables of one GPU (the first role's, and each other GPU's). */
  defaultTimingBytes: 24 * MIB,
  /** Polynomial timing's coefficients. */
  polynomialTimingBytes: 3 * MIB,
  /** Per request of a table (not streamed): table columns, collector columns, the request's engine state. */
  bytesPerRow: 400,
  /** Per request of the request log while in memory: its first `requestLogResidentRows` rows (the rest spill to disk). */
  requestLogBytesPerRow: REQUEST_LOG_ROW_BYTES,
  requestLogResidentRows: DEFAULT_RESIDENT_ROWS + DEFAULT_CHUNK_ROWS,
  /** Per request at the end: the exact distributions' values and the time series' buckets, for the first `summaryRows`. */
  summaryBytesPerRow: 48,
  summaryRows: DEFAULT_COLLECT_LIMIT,
  /** Per request in flight or read ahead of a streamed trace (row-window slots, engine sequence), besides its block hashes. */
  bytesPerLiveRow: 600,
  /** Requests in flight per engine sequence slot (running and as many waiting). */
  liveRowsPerSequenceSlot: 2,
  /** What a streamed trace reads ahead: one read of the file. */
  streamReadBytes: 1 << 20,
  /** A streamed trace's two passes: the file's read buffers the garbage collector has not freed yet. */
  streamBufferBytes: 24 * MIB,
  /** Per full engine KV block of a prompt: its chained hash (Float64). */
  bytesPerEngineBlock: 8,
  /** Per trace hash id: Mooncake's packed u32 ids; Dynamo's compact ids and the reader's hash map. */
  bytesPerHashId: { mooncake: 4, dynamo: 34 } as const,
  /** Per Dynamo request on top of bytesPerRow: the reader's columns and request-id strings. */
  dynamoBytesPerRow: 190,
  /** Per Planner tick: its record in memory and in prediction.json being written. */
  bytesPerTick: 7_700,
  /** Per request with --capture-per-request: its record, the sorted copy and its JSON lines. */
  bytesPerCapturedRequest: 7_000,
  /** The retune controller's coordinator side (window selection, the sweep's IPC). */
  retuneCoordinatorBytes: 32 * MIB,
  /** A sweep worker process above the coordinator's RSS at the preflight (same modules loaded). */
  workerOverheadBytes: 48 * MIB,
} as const;

/** How big the workload is, as far as the preflight can tell without building it. */
export interface WorkloadSize {
  /** This process's RSS before the pass over the trace (whose buffers are transient): the plan's base. */
  readonly coordinatorRssBytes: number;
  /** `scan`: counted in the trace; `synthetic`: from the generator's settings; `unknown`: the scan failed (the load reports why). */
  readonly source: "scan" | "synthetic" | "unknown";
  readonly format: TraceFormat | "synthetic";
  readonly rows: number;
  /** Σ ⌊prompt / engine block size⌋: the prompts' block hashes the run holds. */
  readonly engineBlocks: number;
  /** Σ trace hash ids per prompt (0 for synthetic traffic). */
  readonly hashIds: number;
  /** Arrival span in virtual ms (trace span ÷ speedup), or null (closed loop, unknown). */
  readonly spanMs: number | null;
  /**
   * Whether the replay will stream the trace (a Mooncake trace on its timestamps whose sample has
   * single-turn rows in order: traffic/mooncake/stream.ts), holding only the rows in flight.
   */
  readonly streamed: boolean;
  /** Mean bytes per trace line (0 when not a trace): how many rows one read of a stream holds. */
  readonly meanLineBytes: number;
}

/** Sizes the workload: a pass over the trace files, or the synthetic settings. */
export async function measureWorkload(spec: RunSpec): Promise<WorkloadSize> {
  const coordinatorRssBytes = process.memoryUsage.rss();
  const E = engineBlockSize(spec.engine);
  const src = spec.source;
  const speedup = spec.load.type === "trace_timestamps" ? spec.load.speedup : 1;
  if (src.type === "synthetic" || src.type === "synthetic-session") {
    const rows = spec.stop.requests ?? 0;
    const load = spec.load;
    // Arrival units: requests, or sessions (first turns) for sessions.
    const units = src.type === "synthetic-session" ? (spec.stop.sessions ?? 0) : rows;
    const spanMs =
      load.type === "poisson" || load.type === "constant_rate"
        ? (units / load.requestsPerSecond) * 1000
        : null;
    // A session's turn k holds its whole history: the mean prompt is the mid-session one.
    const meanInput =
      src.type === "synthetic"
        ? src.inputTokens
        : src.newInputTokensPerTurn +
          ((src.turns - 1) / 2) * (src.newInputTokensPerTurn + src.outputTokensPerTurn);
    return {
      coordinatorRssBytes,
      source: "synthetic",
      format: "synthetic",
      rows,
      engineBlocks: rows * Math.floor(meanInput / E),
      hashIds: 0,
      spanMs,
      streamed: false,
      meanLineBytes: 0,
    };
  }
  const paths = src.format === "dynamo" ? src.paths : [src.path];
  const traceBlockSize = src.blockSize ?? 512;
  try {
    const s = await scanTrace(paths, src.format, traceBlockSize, E);
    const capMs = spec.stop.maxVirtualTimeMs;
    let spanMs = s.spanMs === null ? null : s.spanMs / speedup;
    // A virtual-time cap ends the run (and its ticks) early; every row is still read and held.
    if (capMs !== null && spanMs !== null && spanMs > capMs) spanMs = capMs;
    if (spec.load.type === "concurrency") spanMs = null;
    const rows = s.rows;
    return {
      coordinatorRssBytes,
      source: "scan",
      format: src.format,
      rows,
      engineBlocks: Math.round(rows * s.meanEngineBlocks),
      hashIds: Math.round(rows * s.meanHashIds),
      spanMs,
      streamed: s.streamable && spec.load.type === "trace_timestamps",
      meanLineBytes: s.lines === 0 ? 0 : s.bytes / s.lines,
    };
  } catch {
    // Missing or unreadable files are reported by the trace load, with its own message.
    return {
      coordinatorRssBytes,
      source: "unknown",
      format: src.format,
      rows: 0,
      engineBlocks: 0,
      hashIds: 0,
      spanMs: null,
      streamed: false,
      meanLineBytes: 0,
    };
  }
}

export interface ResourcePlan {
  readonly fits: boolean;
  readonly estimatedBytes: number;
  readonly coordinatorRssBytes: number;
  /** The run's process (the coordinator): everything below but the worker processes. */
  readonly mainBytes: number;
  readonly workload: WorkloadSize;
  readonly runOverheadBytes: number;
  readonly timingBytes: number;
  readonly traceBytes: number;
  /** A streamed trace: the requests estimated in flight or read ahead at once (0 for a table). */
  readonly liveRows: number;
  /** KV blocks over the most workers the run may provision, and their pools' bytes. */
  readonly kvBlocks: number;
  readonly kvBytes: number;
  readonly plannerTicks: number;
  readonly plannerBytes: number;
  readonly captureBytes: number;
  readonly retuneCoordinatorBytes: number;
  readonly workerProcesses: number;
  /** Bytes of one sweep worker process, and of all of them. */
  readonly workerBytes: number;
  readonly workersBytes: number;
}

/** Worker processes the run forks: `planner.retune.max_parallel` with retune, else none. */
export function plannedWorkerProcesses(spec: RunSpec): number {
  const retune = spec.planner?.retune;
  return retune === undefined || retune === null ? 0 : retune.maxParallel;
}

/** Bytes of one engine's KV pool and prefix-cache index over `blocks` blocks (engine/kvBlockPool.ts). */
export function kvPoolBytes(blocks: number): number {
  // Per block: its record (hash, LRU links, references: 4 × Float64), its free-stack slot and
  // its index home (Int32 each) = 40 B; the hash index (engine/blockIndex.ts): a power of two
  // ≥ 4 × blocks of [key, block] Float64 pairs, at its largest.
  let size = 16;
  while (size < blocks * 4) size *= 2;
  return 40 * blocks + 16 * size;
}

function roles(spec: RunSpec): WorkerRoleSpec[] {
  const e = spec.engine;
  return e.mode === "aggregated" ? [e.aggregated] : [e.prefill, e.decode];
}

/** KV bytes of one worker of a role: one pool per attention-DP rank. */
function workerKvBytes(role: WorkerRoleSpec): number {
  return role.attentionData * kvPoolBytes(role.numGpuBlocks);
}

/**
 * The workers a scaling Planner may add beyond the starting ones (not advisory, not retune-only,
 * with a budget above the starting GPUs): the extra GPUs filled with the role that holds the
 * most KV per GPU. Null when it adds none.
 */
function extraWorkers(spec: RunSpec): { role: WorkerRoleSpec; count: number } | null {
  const rs = roles(spec);
  let gpus = 0;
  for (const r of rs) gpus += r.replicas * r.gpusPerWorker;
  const p = spec.planner;
  const scales = p !== null && !p.advisory && (p.enableLoadScaling || p.enableThroughputScaling);
  const budget = p?.maxGpuBudget ?? -1;
  if (!scales || budget <= gpus) return null;
  let best = rs[0];
  for (const r of rs)
    if (workerKvBytes(r) / r.gpusPerWorker > workerKvBytes(best) / best.gpusPerWorker) best = r;
  return { role: best, count: Math.floor((budget - gpus) / best.gpusPerWorker) };
}

/**
 * KV pools over the most workers the run may provision: the starting workers, plus those a
 * scaling Planner may add (`extraWorkers`).
 */
function kvPlan(spec: RunSpec): { blocks: number; bytes: number } {
  let blocks = 0;
  let bytes = 0;
  for (const r of roles(spec)) {
    blocks += r.replicas * r.attentionData * r.numGpuBlocks;
    bytes += r.replicas * workerKvBytes(r);
  }
  const extra = extraWorkers(spec);
  if (extra !== null) {
    blocks += extra.count * extra.role.attentionData * extra.role.numGpuBlocks;
    bytes += extra.count * workerKvBytes(extra.role);
  }
  return { blocks, bytes };
}

/** Op tables are read once per GPU the default-timing roles run on; polynomial timing is small. */
function timingBytes(spec: RunSpec): number {
  const gpus = new Set<string>();
  let polynomial = false;
  for (const r of roles(spec)) {
    if (r.timing.type === "default") gpus.add(r.timing.gpu.id);
    else if (r.timing.type === "polynomial") polynomial = true;
  }
  return (
    gpus.size * PLAN_COEFFICIENTS.defaultTimingBytes +
    (polynomial ? PLAN_COEFFICIENTS.polynomialTimingBytes : 0)
  );
}

/**
 * Bytes the workload holds for `w` (or a share of its rows): a table's columns, the collector's
 * and the prompts' hashes for every row, or a stream's rows in flight (`liveRows`); and in both
 * cases the request log's part in memory and the end-of-run statistics.
 */
function workloadBytes(w: WorkloadSize, liveRows: number, share = 1): number {
  const c = PLAN_COEFFICIENTS;
  const rows = share * w.rows;
  const ends =
    Math.min(rows, c.requestLogResidentRows) * c.requestLogBytesPerRow +
    Math.min(rows, c.summaryRows) * c.summaryBytesPerRow;
  if (w.streamed) {
    const blocksPerRow = w.rows === 0 ? 0 : w.engineBlocks / w.rows;
    return (
      ends +
      c.streamBufferBytes +
      retainedBytes(rows, share * w.hashIds) +
      liveRows * (c.bytesPerLiveRow + blocksPerRow * c.bytesPerEngineBlock)
    );
  }
  const perRow = c.bytesPerRow + (w.format === "dynamo" ? c.dynamoBytesPerRow : 0);
  // The one-file formats are all read as Mooncake rows are (u32 hash ids).
  const perId =
    w.format === "synthetic" ? 0 : c.bytesPerHashId[w.format === "dynamo" ? "dynamo" : "mooncake"];
  return ends + share * (w.rows * perRow + w.engineBlocks * c.bytesPerEngineBlock + w.hashIds * perId);
}

/**
 * A streamed trace's rows in memory at once: one read of the file ahead, and the requests the
 * engines hold (`liveRowsPerSequenceSlot` per sequence slot of the most workers the run may have).
 */
function streamLiveRows(spec: RunSpec, w: WorkloadSize): number {
  if (!w.streamed) return 0;
  const c = PLAN_COEFFICIENTS;
  const readAhead = w.meanLineBytes > 0 ? Math.ceil(c.streamReadBytes / w.meanLineBytes) : 0;
  let slots = 0;
  for (const r of roles(spec)) slots += r.replicas * r.attentionData * r.maxSequences;
  const extra = extraWorkers(spec);
  if (extra !== null) slots += extra.count * extra.role.attentionData * extra.role.maxSequences;
  return Math.min(w.rows, readAhead + slots * c.liveRowsPerSequenceSlot);
}

export interface PlanOptions {
  /** `--capture-per-request`: every request's record is built and written. */
  readonly capturePerRequest?: boolean;
}

export function planResources(
  spec: RunSpec,
  budget: ResourceBudget,
  workload: WorkloadSize,
  options: PlanOptions = {},
): ResourcePlan {
  const coordinatorRssBytes = workload.coordinatorRssBytes;
  const c = PLAN_COEFFICIENTS;
  const timing = timingBytes(spec);
  const liveRows = streamLiveRows(spec, workload);
  const trace = workloadBytes(workload, liveRows);
  const kv = kvPlan(spec);
  const planner = spec.planner;
  const ticks =
    planner === null || workload.spanMs === null
      ? 0
      : Math.ceil(workload.spanMs / 1000 / planner.scaleIntervalS);
  const plannerBytes = ticks * c.bytesPerTick;
  const captureBytes = options.capturePerRequest ? workload.rows * c.bytesPerCapturedRequest : 0;
  const retune = planner?.retune ?? null;
  const retuneCoordinatorBytes = retune === null ? 0 : c.retuneCoordinatorBytes;
  const mainBytes =
    coordinatorRssBytes +
    c.runOverheadBytes +
    timing +
    trace +
    kv.bytes +
    plannerBytes +
    captureBytes +
    retuneCoordinatorBytes;
  // A sweep worker replays one window: the modules, the op tables, the window's rows (its share of
  // the trace's span, plus the grace period's) and the candidate's KV pools.
  const workerProcesses = plannedWorkerProcesses(spec);
  let workerBytes = 0;
  if (retune !== null) {
    const share =
      workload.spanMs === null || workload.spanMs <= 0
        ? 1
        : Math.min(1, ((retune.intervalS + retune.graceS) * 1000) / workload.spanMs);
    workerBytes =
      coordinatorRssBytes + c.workerOverheadBytes + timing + workloadBytes(workload, 0, share) + kv.bytes;
  }
  const workersBytes = workerProcesses * workerBytes;
  const estimatedBytes = Math.round(mainBytes + workersBytes);
  return {
    fits: estimatedBytes <= budget.memoryBytes,
    estimatedBytes,
    coordinatorRssBytes,
    mainBytes: Math.round(mainBytes),
    workload,
    runOverheadBytes: c.runOverheadBytes,
    timingBytes: timing,
    traceBytes: Math.round(trace),
    liveRows,
    kvBlocks: kv.blocks,
    kvBytes: kv.bytes,
    plannerTicks: ticks,
    plannerBytes,
    captureBytes,
    retuneCoordinatorBytes,
    workerProcesses,
    workerBytes: Math.round(workerBytes),
    workersBytes: Math.round(workersBytes),
  };
}

/** The `resource-plan.json` document (snake_case keys, written sorted). */
export function resourcePlanDocument(plan: ResourcePlan, budget: ResourceBudget): Record<string, unknown> {
  const w = plan.workload;
  return {
    decision: plan.fits ? "accepted" : "refused",
    budget_bytes: budget.memoryBytes,
    memory_limit_source: budget.memorySource,
    available_memory_bytes: budget.host.availableMemoryBytes,
    available_memory_source: budget.host.availableMemorySource,
    cpu_limit: budget.cpuLimit,
    host_cpu_count: budget.host.cpuCount,
    estimated_bytes: plan.estimatedBytes,
    workload: {
      source: w.source,
      format: w.format,
      rows: w.rows,
      engine_blocks: w.engineBlocks,
      hash_ids: w.hashIds,
      span_ms: w.spanMs,
      streamed: w.streamed,
    },
    components: {
      coordinator_rss_bytes: plan.coordinatorRssBytes,
      run_overhead_bytes: plan.runOverheadBytes,
      timing_bytes: plan.timingBytes,
      trace_bytes: plan.traceBytes,
      live_rows: plan.liveRows,
      kv_blocks: plan.kvBlocks,
      kv_bytes: plan.kvBytes,
      planner_ticks: plan.plannerTicks,
      planner_bytes: plan.plannerBytes,
      capture_bytes: plan.captureBytes,
      retune_coordinator_bytes: plan.retuneCoordinatorBytes,
      main_process_bytes: plan.mainBytes,
      worker_processes: plan.workerProcesses,
      worker_bytes: plan.workerBytes,
      workers_bytes: plan.workersBytes,
    },
  };
}
