import type { Cluster } from "../cluster/cluster.js";
import { poolName } from "../cluster/lifecycle.js";
import type { EventQueue } from "./eventQueue.js";
import type { RequestLifecycle } from "./requestLifecycle.js";
import type { ReplayStall } from "./result.js";
import type { ScalingPolicy } from "./scaling.js";
import type { TickObserver } from "./tickObserver.js";

/**
 * Ticks in a row with a pool at zero workers, requests waiting for it, and no other event left,
 * after which the run stops instead of ticking forever (the Planner scaled to zero and does not
 * come back: e.g. a budget below `min_workers` × GPUs per worker). A thousand ticks span many
 * throughput intervals, so a policy that scales back up from zero gets its chance.
 */
export const STALL_TICKS = 1000;

/**
 * The scaling policy's ticks in the replay: each tick hands the policy a snapshot of the settled
 * timestamp (`TickObserver`), applies its targets and router parameters, queues the next tick
 * while traffic remains, and stops the run once the policy has starved a pool for good.
 */
export class ScalingTicks {
  /** Work the last tick's policy started (a retune sweep): the clock waits for it (`Replay.run`). */
  work: Promise<void> | null = null;
  /** Set when the policy starved a pool (see STALL_TICKS): the run stops. */
  stall: ReplayStall | null = null;
  /** Consecutive ticks with a starved pool, since `stallSinceMs`. */
  private stallTicks = 0;
  private stallSinceMs = 0;

  constructor(
    private readonly policy: ScalingPolicy,
    private readonly observer: TickObserver,
    private readonly cluster: Cluster,
    private readonly events: EventQueue,
    private readonly lifecycle: RequestLifecycle,
  ) {}

  /** Queues the policy's first tick, if it has one. */
  scheduleFirst(): void {
    const first = this.policy.initialTickMs();
    if (first !== null && Number.isFinite(first)) this.events.pushScalingTick(first);
  }

  /** The work the last tick started (a retune sweep), handed over once; null when none. */
  takeWork(): Promise<void> | null {
    const work = this.work;
    this.work = null;
    return work;
  }

  /** The replay was aborted: a retune sweep in flight is stopped too, so the abort lands now. */
  abort(): void {
    this.policy.abort?.();
  }

  /** Runs one scaling tick and applies its targets (`ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`). */
  tick(t: number): void {
    const policy = this.policy;
    const cluster = this.cluster;
    const action = policy.onTick(this.observer.snapshot(cluster, t));
    const params = action.routerParameters ?? null;
    if (params !== null) cluster.setRouterParameters(params);
    this.work = policy.pendingWork?.() ?? null;
    cluster.applyTargets(action.targetPrefill, action.targetDecode, t);
    if (
      this.lifecycle.hasTraffic() &&
      action.nextTickMs !== null &&
      Number.isFinite(action.nextTickMs) &&
      action.nextTickMs > t
    ) {
      this.checkStall(t);
      if (this.stall !== null) return;
      this.events.pushScalingTick(action.nextTickMs);
    }
  }

  /**
   * Counts ticks at which only the next tick could change anything while a pool without any
   * worker (ready, starting or draining) holds requests back; after STALL_TICKS of them the run
   * stops (`stall`), its waiting requests unfinished.
   */
  private checkStall(t: number): void {
    const starved =
      this.events.size === 0 &&
      this.work === null &&
      this.lifecycle.nextDeadline() === Number.POSITIVE_INFINITY
        ? this.cluster.starvedPool()
        : null;
    if (starved === null) {
      this.stallTicks = 0;
      return;
    }
    if (this.stallTicks++ === 0) this.stallSinceMs = t;
    if (this.stallTicks < STALL_TICKS) return;
    this.stall = {
      atMs: t,
      sinceMs: this.stallSinceMs,
      pool: poolName(starved),
      waiting: this.cluster.waitingFor(starved),
    };
  }
}
