import type { RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { TimingModel } from "../timing/timingModel.js";
import { Cluster, type ClusterContext } from "./cluster.js";
import { WorkerPool } from "./workerPool.js";

/** One pool of workers that prefill and decode their own requests (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`). */
export class AggregatedCluster extends Cluster {
  readonly prefillPool: WorkerPool | null = null;
  readonly decodePool: WorkerPool;

  constructor(ctx: ClusterContext, role: WorkerRoleSpec, timing: TimingModel, router: RouterSpec) {
    const pool = new WorkerPool(0, "aggregated", role, timing, router, ctx.collector, (at, row) =>
      ctx.host.scheduleHostLoadEnd(at, row),
    );
    super(ctx, [pool], Number.POSITIVE_INFINITY);
    this.decodePool = pool;
  }

  protected slotFreed(): void {}

  protected prefillDone(row: number): void {
    throw new Error(`internal: request ${row} was handed off in an aggregated deployment`);
  }

  completeTransfer(row: number): void {
    throw new Error(`internal: a KV transfer of request ${row} landed in an aggregated deployment`);
  }

  protected cancelPastFront(): boolean {
    return false;
  }

  /** The aggregated pool is what the Planner's decode target scales; there is no prefill target. */
  applyTargets(_targetPrefill: number | null, targetDecode: number | null, t: number): void {
    if (targetDecode !== null) this.scaleTo(this.front, targetDecode, t);
  }
}
