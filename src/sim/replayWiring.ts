/**
 * The pieces `Replay`'s constructor wires together that need a decision of their own: the checks
 * of a workload against its deployment, the collector's options, the first arrivals and the time
 * series' horizon, and the invariant checker.
 */
import type { Cluster } from "../cluster/cluster.js";
import type { ClientSpec, RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import { Collector } from "../metrics/collector.js";
import type { RequestSource, WorkloadInfo } from "../traffic/requestSource.js";
import { type Arrivals, StreamArrivals } from "./arrivals.js";
import { InvariantChecker, invariantsEnabledByEnv } from "./invariants.js";
import { tableArrivals } from "./tableArrivals.js";

/** Request hashes are per KV block: the workload must have been hashed with every role's block size. */
export function checkBlockSizes(source: RequestSource, roles: readonly WorkerRoleSpec[]): void {
  for (const role of roles) {
    if (source.engineBlockSize !== role.blockSize) {
      throw new Error(
        `internal: request hashes use block size ${source.engineBlockSize}, engine ${role.blockSize}`,
      );
    }
  }
}

/** Whether some request's full context (prompt + output − 1 computed tokens) exceeds a role's KV cache. */
function contextMayOutgrowCache(info: WorkloadInfo, role: WorkerRoleSpec): boolean {
  let longest = Math.max(0, info.longestContext);
  if (role.maxModelLen !== null && longest > role.maxModelLen) longest = role.maxModelLen;
  return Math.ceil(longest / role.blockSize) > role.numGpuBlocks;
}

/** The run's collector over the workload's row window. */
export function createCollector(
  source: RequestSource,
  roles: readonly WorkerRoleSpec[],
  spec: RunSpec,
  client: ClientSpec,
  capturePerRequest: boolean,
): Collector {
  return new Collector(source.window, {
    // Only completed requests may contribute token gaps. Gaps can stream straight into the
    // sketches unless some admitted request may end without completing: cut off by the
    // virtual-time cap, or rejected after its context outgrew the whole KV cache.
    holdGapsUntilTerminal:
      spec.stop.maxVirtualTimeMs !== null ||
      client.timeoutMs !== null ||
      roles.some((r) => contextMayOutgrowCache(source.info, r)),
    captureHistory: capturePerRequest,
    disaggregated: roles.length > 1,
  });
}

/** The KV tokens of a worker that clamp every request's output (TRT-LLM no-evict), or null. */
export function outputCacheTokens(front: WorkerRoleSpec): number | null {
  // TRT-LLM no-evict engines clamp outputs to their cache when queued (aggregated only).
  return front.capacityPolicy === "guaranteed_no_evict" ? front.numGpuBlocks * front.blockSize : null;
}

/** When the workload's requests arrive: a table's own rule, or a streamed trace's timestamps. */
export function arrivalsOf(source: RequestSource, spec: RunSpec): Arrivals {
  return source.table !== null ? tableArrivals(source.table, spec.load) : new StreamArrivals(source.info);
}

/**
 * Schedules every request ready at the start (a streamed source schedules each row as it is read)
 * and returns the time series' horizon: the latest open-loop arrival (closed loop: 0, coarsened
 * later), within the virtual-time cap.
 */
export function seedArrivals(
  plan: Arrivals,
  source: RequestSource,
  spec: RunSpec,
  schedule: (row: number, time: number) => void,
): number {
  let horizonMs = 0;
  plan.seed((row, time) => {
    if (time > horizonMs) horizonMs = time;
    schedule(row, time);
  });
  if (source.table === null) {
    // A stream schedules each row as it is read; the whole trace's last arrival is known already.
    const speedup = spec.load.type === "trace_timestamps" ? spec.load.speedup : 1;
    const last = source.info.lastFirstTurnMs / speedup;
    if (last > horizonMs) horizonMs = last;
    source.onRead = schedule;
  }
  const maxTimeMs = spec.stop.maxVirtualTimeMs;
  return maxTimeMs !== null ? Math.min(horizonMs, maxTimeMs) : horizonMs;
}

/**
 * The bookkeeping checker of a cluster (sim/invariants.ts) when `enabled` (default:
 * FLEETSIM_CHECK_INVARIANTS); null in production runs, so the hot loop pays one null test.
 */
export function createInvariantChecker(
  cluster: Cluster,
  collector: Collector,
  spec: RunSpec,
  enabled: boolean | undefined,
): InvariantChecker | null {
  if (!(enabled ?? invariantsEnabledByEnv())) return null;
  return new InvariantChecker({
    pools: cluster.pools,
    collector,
    holdsNothing: (pool, w) => cluster.holdsNothing(pool, w),
    reservedBySlot: (pool) => cluster.reservedBySlot(pool),
    gpuBudget: spec.planner?.maxGpuBudget ?? null,
  });
}
