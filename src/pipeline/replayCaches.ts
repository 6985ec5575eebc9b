/**
 * What a sweep worker keeps between the replay jobs it runs (replayTask.ts), in bounded caches
 * keyed by exactly the spec parts that determine each entry: request tables loaded from a spec's
 * workload, and the timing models of a deployment (op tables decoded, grids built on first use).
 * Both are read-only once built: the replay never writes to its request table, and a timing model's
 * memo tables hold pure functions of their keys. A cached entry therefore gives a job the result a
 * fresh one would; only the work of building it is saved.
 */
import { engineBlockSize } from "../config/blockSize.js";
import type { EngineSpec, RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { RoleTimings } from "../timing/index.js";
import type { RequestTable } from "../traffic/requests.js";
import { BoundedCache } from "../util/boundedCache.js";
import { createRoleTimings } from "./timings.js";
import { loadWorkload } from "./workload.js";

/**
 * Everything loadWorkload reads: the source, the load (timestamps required, synthetic arrivals),
 * the request count and the engine block size the hashes are computed for.
 */
export function workloadKey(spec: RunSpec): string {
  return JSON.stringify([spec.source, spec.load, spec.stop.requests, engineBlockSize(spec.engine)]);
}

/**
 * Everything createRoleTimings reads: the mode and, per role, its timing spec (model, GPU, tables,
 * host overhead) and what a timing model takes of the role (timing/timingSpec.ts `TimedRole`).
 * Replica counts, KV capacity and the scheduler limits are not part of it: candidates that differ
 * only in those share one model.
 */
export function timingKey(engine: EngineSpec): string {
  const role = (r: WorkerRoleSpec): unknown => [
    r.timing,
    r.tensor,
    r.pipeline,
    r.attentionData,
    r.moeTensor,
    r.moeExpert,
    r.asyncScheduling,
    // The drafter prices a speculating pass's draft work (a key only when speculating).
    ...(r.speculation ? [r.speculation.kind] : []),
  ];
  return JSON.stringify(
    engine.mode === "aggregated"
      ? [engine.mode, role(engine.aggregated)]
      : [engine.mode, role(engine.prefill), role(engine.decode)],
  );
}

/** Entries kept: a sweep's candidates share one workload and a few deployments' timings. */
export const REPLAY_CACHE_CAPACITY = { workloads: 2, timings: 4 } as const;

export class ReplayCaches {
  private readonly workloads: BoundedCache<Promise<RequestTable>>;
  private readonly timings: BoundedCache<Promise<RoleTimings>>;

  constructor(capacity: { readonly workloads: number; readonly timings: number } = REPLAY_CACHE_CAPACITY) {
    this.workloads = new BoundedCache(capacity.workloads);
    this.timings = new BoundedCache(capacity.timings);
  }

  /** The spec's workload (loadWorkload), loaded once per key. */
  workload(spec: RunSpec): Promise<RequestTable> {
    return kept(this.workloads, workloadKey(spec), () => loadWorkload(spec));
  }

  /** The deployment's timing models (createRoleTimings), built once per key. */
  roleTimings(engine: EngineSpec): Promise<RoleTimings> {
    return kept(this.timings, timingKey(engine), () => createRoleTimings(engine));
  }
}

/** `cache.get`, except that a build that fails is not kept (the next job tries again). */
function kept<V>(cache: BoundedCache<Promise<V>>, key: string, build: () => Promise<V>): Promise<V> {
  return cache.get(key, () => {
    const value = build();
    value.catch(() => cache.deleteIf(key, value));
    return value;
  });
}
