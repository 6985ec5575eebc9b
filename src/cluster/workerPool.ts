import type { RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { AdmissionObserver } from "../engine/vllmEngine.js";
import { VllmEngine } from "../engine/vllmEngine.js";
import { KvPlacement, type KvRouting, type Placement, RoundRobinPlacement } from "../router/placement.js";
import type { TimingModel } from "../timing/timingModel.js";
import type { WorkerRole } from "../util/workerRole.js";

/** Lifecycle of a worker (mocker.md §7): starting → ready → draining → removed. */
export const WorkerState = {
  Starting: 1,
  Ready: 2,
  Draining: 3,
  Removed: 4,
} as const;

/**
 * The workers of one role (aggregated, prefill or decode) and the policy that places requests
 * on them. Worker ids grow monotonically as the Planner adds workers; worker `w`'s attention-DP
 * ranks are the engines (slots) `w·D .. w·D + D − 1`. Only ready workers take new requests;
 * draining workers finish what they hold and are then removed.
 */
export class WorkerPool {
  /** Engine per slot; a removed worker's engines stay (never reused) so ids stay stable. */
  readonly engines: VllmEngine[] = [];
  readonly ranksPerWorker: number;
  /** Per worker: WorkerState. */
  readonly state: number[] = [];
  /** Per worker: a pass is in flight. */
  readonly busy: number[] = [];
  /** Per worker: it may have new work; drive it at this timestamp. */
  readonly dirty: number[] = [];
  readonly placement: Placement;
  /** The placement's request and KV tracking (the KV router), read once here; null for round robin. */
  readonly kvRouting: KvRouting | null;
  /**
   * ∫ provisioned (starting + ready + draining) workers dt, worker-seconds, up to `accruedToMs`.
   * Accrued only when the provisioned count changes (and at the end), so the sum does not depend
   * on how many unrelated events happened in between: same inputs, same bytes.
   */
  workerSeconds = 0;
  private accruedToMs = 0;
  provisioned = 0;
  readyCount = 0;
  startingCount = 0;
  drainingCount = 0;

  constructor(
    /** 0 for the front pool (aggregated or prefill), 1 for the decode pool: part of event ids. */
    readonly id: number,
    readonly role: WorkerRole,
    readonly spec: WorkerRoleSpec,
    readonly timing: TimingModel,
    router: RouterSpec,
    private readonly observer: AdmissionObserver,
  ) {
    this.ranksPerWorker = spec.attentionData;
    this.placement =
      router.policy === "kv_router"
        ? new KvPlacement(router, role, spec.attentionData, spec.blockSize)
        : new RoundRobinPlacement(spec.attentionData);
    this.kvRouting = this.placement.kvRouting;
    for (let w = 0; w < spec.replicas; w++) this.addWorker(true);
  }

  /** Logical workers ever created (ids 0 .. count−1). */
  get workerCount(): number {
    return this.state.length;
  }

  /** Ready + starting: what the Planner counts as the pool's size. */
  get nonDraining(): number {
    return this.readyCount + this.startingCount;
  }

  /** Adds ∫ provisioned dt up to `nowMs`. */
  accrue(nowMs: number): void {
    this.workerSeconds += (this.provisioned * (nowMs - this.accruedToMs)) / 1000;
    this.accruedToMs = nowMs;
  }

  /** Creates a worker at `nowMs`; `ready` false leaves it starting (not routable) until `markReady`. */
  addWorker(ready: boolean, nowMs = 0): number {
    this.accrue(nowMs);
    const w = this.state.length;
    const spec = this.spec;
    for (let r = 0; r < this.ranksPerWorker; r++) {
      const engine = new VllmEngine(
        {
          role: this.role,
          maxBatchedTokens: spec.maxBatchedTokens,
          maxSequences: spec.maxSequences,
          blockSize: spec.blockSize,
          numGpuBlocks: spec.numGpuBlocks,
          prefixCaching: spec.prefixCaching,
          maxModelLen: spec.maxModelLen,
          asyncScheduling: spec.asyncScheduling,
          speculation: spec.speculation ?? null,
        },
        this.timing,
        this.observer,
      );
      const routing = this.kvRouting;
      if (routing?.wantsKvEvents) {
        const slot = w * this.ranksPerWorker + r;
        engine.pool.setListener({
          onBlockStored: (hash) => routing.onBlockStored(slot, hash),
          onBlockRemoved: (hash) => routing.onBlockRemoved(slot, hash),
        });
      }
      this.engines.push(engine);
    }
    this.state.push(WorkerState.Starting);
    this.busy.push(0);
    this.dirty.push(0);
    this.provisioned++;
    this.startingCount++;
    if (ready) this.markReady(w);
    return w;
  }

  markReady(w: number): void {
    if (this.state[w] !== WorkerState.Starting) return;
    this.state[w] = WorkerState.Ready;
    this.startingCount--;
    this.readyCount++;
    this.placement.addWorker(w);
  }

  /** A starting worker is cancelled: gone at once. */
  cancelStarting(w: number, nowMs: number): void {
    this.accrue(nowMs);
    this.state[w] = WorkerState.Removed;
    this.startingCount--;
    this.provisioned--;
  }

  /** A ready worker stops taking requests; it is removed once it holds nothing. */
  drain(w: number): void {
    this.state[w] = WorkerState.Draining;
    this.readyCount--;
    this.drainingCount++;
    this.placement.removeWorker(w);
  }

  /** Whether a draining worker has finished everything it held. */
  isDrained(w: number): boolean {
    if (this.busy[w] === 1) return false;
    const D = this.ranksPerWorker;
    for (let r = 0; r < D; r++) if (!this.engines[w * D + r].isIdle()) return false;
    return true;
  }

  remove(w: number, nowMs: number): void {
    this.accrue(nowMs);
    this.state[w] = WorkerState.Removed;
    this.drainingCount--;
    this.provisioned--;
  }

  /** Whether worker `w` is provisioned (starting, ready or draining): not yet removed. */
  isProvisioned(w: number): boolean {
    return this.state[w] !== WorkerState.Removed;
  }

  /** Worker ids in a state, ascending. */
  idsIn(state: number): number[] {
    const out: number[] = [];
    for (let w = 0; w < this.state.length; w++) if (this.state[w] === state) out.push(w);
    return out;
  }

  workerOf(slot: number): number {
    return (slot / this.ranksPerWorker) | 0;
  }

  rankOf(slot: number): number {
    return slot % this.ranksPerWorker;
  }
}
