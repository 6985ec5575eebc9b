import { type WorkerPool, WorkerState } from "./workerPool.js";

export type LifecycleTransition = "worker_starting" | "worker_ready" | "worker_draining" | "worker_removed";

/** A pool's name in prediction.json (`agg`, `prefill`, `decode`). */
export type PoolName = "agg" | "prefill" | "decode";

/** One lifecycle operation: what a scaling action (or a completed startup/drain) did to workers. */
export interface LifecycleOperation {
  readonly at_ms: number;
  readonly pool: PoolName;
  readonly cause: "scale_up" | "scale_down" | "startup_complete" | "drain_complete";
  readonly transitions: { worker_id: number; transition: LifecycleTransition; at_ms: number }[];
}

export function poolName(pool: WorkerPool): PoolName {
  return pool.role === "aggregated" ? "agg" : pool.role;
}

/**
 * The worker transitions of a run, as prediction.json's `planner.lifecycle_operations` lists
 * them. Kept only when a scaling policy drives the run: a fixed deployment has none to report.
 */
export class LifecycleLog {
  readonly operations: LifecycleOperation[] = [];

  constructor(private readonly enabled: boolean) {}

  record(
    pool: WorkerPool,
    t: number,
    cause: LifecycleOperation["cause"],
    transitions: readonly (readonly [number, LifecycleTransition])[],
  ): void {
    if (!this.enabled || transitions.length === 0) return;
    this.operations.push({
      at_ms: t,
      pool: poolName(pool),
      cause,
      transitions: transitions.map(([w, transition]) => ({ worker_id: w, transition, at_ms: t })),
    });
  }
}

/** What a scale-down asks of the cluster that owns the pool. */
export interface DrainRule {
  /** Whether worker `w` of `pool` holds nothing at all (it is then removed as it starts draining). */
  holdsNothing(pool: WorkerPool, w: number): boolean;
}

/**
 * Brings a pool's non-draining count (ready + starting) to `target` by scaling up. New workers
 * start (ready after `startup_seconds`, at once when 0); `onStarting` is called for each one
 * that must wait (the cluster schedules its ready event). Returns the transitions.
 */
export function scaleUp(
  pool: WorkerPool,
  target: number,
  t: number,
  onStarting: (w: number, readyAtMs: number) => void,
): [number, LifecycleTransition][] {
  const transitions: [number, LifecycleTransition][] = [];
  const startupMs = pool.spec.startupSeconds * 1000;
  for (let i = pool.nonDraining; i < target; i++) {
    const w = pool.addWorker(startupMs === 0, t);
    if (startupMs === 0) {
      transitions.push([w, "worker_ready"]);
    } else {
      transitions.push([w, "worker_starting"]);
      onStarting(w, t + startupMs);
    }
  }
  return transitions;
}

/**
 * Brings a pool's non-draining count down to `target`: cancels starting workers first, highest
 * id first, then drains the highest-id ready workers, which finish their in-flight work (removed
 * at once when they hold nothing). Returns the transitions.
 */
export function scaleDown(
  pool: WorkerPool,
  target: number,
  t: number,
  rule: DrainRule,
): [number, LifecycleTransition][] {
  const transitions: [number, LifecycleTransition][] = [];
  let excess = pool.nonDraining - target;
  for (let w = pool.workerCount - 1; w >= 0 && excess > 0; w--) {
    if (pool.state[w] !== WorkerState.Starting) continue;
    pool.cancelStarting(w, t);
    transitions.push([w, "worker_removed"]);
    excess--;
  }
  for (let w = pool.workerCount - 1; w >= 0 && excess > 0; w--) {
    if (pool.state[w] !== WorkerState.Ready) continue;
    pool.drain(w);
    transitions.push([w, "worker_draining"]);
    excess--;
    if (rule.holdsNothing(pool, w)) {
      pool.remove(w, t);
      transitions.push([w, "worker_removed"]);
    }
  }
  return transitions;
}
