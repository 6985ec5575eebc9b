import { varianceOf } from "../engine/passStats.js";
import type { ForwardPassMetrics } from "../planner/types.js";
import { type WorkerPool, WorkerState } from "./workerPool.js";

/** Worker ids of one pool by lifecycle state, ascending (what the Planner sees of a topology). */
export interface PoolTopology {
  readonly active: readonly number[];
  readonly starting: readonly number[];
  readonly draining: readonly number[];
}

export function topologyOf(pool: WorkerPool): PoolTopology {
  return {
    active: pool.idsIn(WorkerState.Ready),
    starting: pool.idsIn(WorkerState.Starting),
    draining: pool.idsIn(WorkerState.Draining),
  };
}

/**
 * The forward-pass metrics every rank of every ready worker has published by `nowMs` (engine
 * `publishedStats`: its latest finished pass, or an idle heartbeat); a rank that has published
 * nothing yet is left out, as the reference's replay leaves it out of its last-seen cache.
 */
export function fpmOf(pool: WorkerPool, nowMs: number): ForwardPassMetrics[] {
  const out: ForwardPassMetrics[] = [];
  const D = pool.ranksPerWorker;
  for (let w = 0; w < pool.workerCount; w++) {
    if (pool.state[w] !== WorkerState.Ready) continue;
    for (let r = 0; r < D; r++) {
      const s = pool.engines[w * D + r].publishedStats(nowMs, pool.readyAtMs[w]);
      if (s === null) continue;
      out.push({
        workerId: w,
        dpRank: r,
        wallTimeS: s.wallTimeS,
        numPrefillRequests: s.numPrefillRequests,
        sumPrefillTokens: s.sumPrefillTokens,
        varPrefillLength: s.varPrefillLength,
        sumPrefillKvTokens: s.sumPrefillKvTokens,
        numDecodeRequests: s.numDecodeRequests,
        sumDecodeKvTokens: s.sumDecodeKvTokens,
        varDecodeKvTokens: varianceOf(s.numDecodeRequests, s.sumDecodeKvTokens, s.sumDecodeKvTokensSq),
        numQueuedPrefill: s.numQueuedPrefill,
        sumQueuedPrefillTokens: s.sumQueuedPrefillTokens,
        varQueuedPrefillLength: varianceOf(
          s.numQueuedPrefill,
          s.sumQueuedPrefillTokens,
          s.sumQueuedPrefillTokensSq,
        ),
        numQueuedDecode: s.numQueuedDecode,
        sumQueuedDecodeKvTokens: s.sumQueuedDecodeKvTokens,
        varQueuedDecodeKvTokens: varianceOf(
          s.numQueuedDecode,
          s.sumQueuedDecodeKvTokens,
          s.sumQueuedDecodeKvTokensSq,
        ),
      });
    }
  }
  return out;
}
