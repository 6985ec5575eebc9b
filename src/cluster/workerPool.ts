import type { RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import { createEngine } from "../engine/create.js";
import { type DiskIoStats, DiskKvTier } from "../engine/diskKvTier.js";
import { HostKvTier } from "../engine/hostKvTier.js";
import type { KvEventListener } from "../engine/kvBlockPool.js";
import { TierUnion } from "../engine/tierUnion.js";
import type { AdmissionObserver, EngineHostOffload, WorkerEngine } from "../engine/workerEngine.js";
import type { G3OffloadReport, KvOffloadReport } from "../output/kvOffload.js";
import { KvPlacement, type KvRouting, type Placement, RoundRobinPlacement } from "../router/placement.js";
import type { TimingModel } from "../timing/timingModel.js";
import { completeRowHashes, type RequestSource } from "../traffic/requestSource.js";
import type { WorkerRole } from "../util/workerRole.js";

/** Lifecycle of a worker (`ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`): starting → ready → draining → removed. */
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
  readonly engines: WorkerEngine[] = [];
  readonly ranksPerWorker: number;
  /** Per worker: WorkerState. */
  readonly state: number[] = [];
  /** When each worker became ready (+∞ while starting): its forward-pass metrics start then. */
  readonly readyAtMs: number[] = [];
  /** Per worker: a pass is in flight. */
  readonly busy: number[] = [];
  /** When each worker's pass in flight ends (meaningful while `busy`). */
  readonly passEndMs: number[] = [];
  /** Per worker: it may have new work; drive it at this timestamp. */
  readonly dirty: number[] = [];
  /** Passes each worker has run: with attention DP and `prefillScheduleInterval` N, pass k admits waiting requests iff k % N == 0. */
  readonly passesRun: number[] = [];
  /** Per worker: passes still to run without prefill (SGLang `prefillDecodeInterval`, `Cluster.admitsWaiting`). */
  readonly prefillDeferrals: number[] = [];
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
  /** Host KV tiers (docs/offload.md): one per slot, or the pool's one shared tier; empty without offload. */
  readonly hostTiers: HostKvTier[] = [];
  /** Disk KV tiers behind them: one per host tier (`worker_local`) or the pool's shared one. */
  readonly diskTiers: DiskKvTier[] = [];
  /** Slot of each request whose host load is in flight, by row. */
  private readonly loadSlot = new Map<number, number>();

  constructor(
    /** 0 for the front pool (aggregated or prefill), 1 for the decode pool: part of event ids. */
    readonly id: number,
    readonly role: WorkerRole,
    readonly spec: WorkerRoleSpec,
    readonly timing: TimingModel,
    router: RouterSpec,
    private readonly observer: AdmissionObserver,
    /** Schedules a host load's end (`Cluster` → the replay); needed only with `spec.hostOffload`. */
    private readonly scheduleLoadEnd: ((atMs: number, row: number) => void) | null = null,
  ) {
    this.ranksPerWorker = spec.attentionData;
    const h = spec.hostOffload;
    if (h?.disk != null && h.disk.scope === "cluster_shared") this.diskTiers.push(this.newDiskTier());
    if (h != null && h.scope === "cluster_shared") this.hostTiers.push(this.newHostTier(true, 0));
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
      const config = {
        role: this.role,
        maxBatchedTokens: spec.maxBatchedTokens,
        maxSequences: spec.maxSequences,
        blockSize: spec.blockSize,
        numGpuBlocks: spec.numGpuBlocks,
        prefixCaching: spec.prefixCaching,
        maxModelLen: spec.maxModelLen,
        asyncScheduling: spec.asyncScheduling,
        firstTokenAtPrefill: spec.firstTokenAtPrefill === true,
        chunkedPrefill: spec.chunkedPrefill ?? true,
        hostOffload: this.hostOffloadFor(w * this.ranksPerWorker + r),
        speculation: spec.speculation ?? null,
        ...(spec.capacityPolicy === undefined ? {} : { capacityPolicy: spec.capacityPolicy }),
      };
      const engine = createEngine(config, spec.sglang, this.timing, this.observer);
      const routing = this.kvRouting;
      if (routing?.wantsKvEvents) {
        const slot = w * this.ranksPerWorker + r;
        const listener: KvEventListener = {
          onBlockStored: (hash) => routing.onBlockStored(slot, hash),
          onBlockRemoved: (hash) => routing.onBlockRemoved(slot, hash),
        };
        const host = spec.hostOffload;
        if (host?.routerSeesHost === true && host.scope === "dp_rank_local") {
          // The router sees a block on this rank while either tier holds it.
          const union = new TierUnion(listener);
          engine.pool.setListener(union.gpu);
          this.hostTiers[this.hostTiers.length - 1]!.setListener(union.host);
        } else {
          engine.pool.setListener(listener);
        }
      }
      this.engines.push(engine);
    }
    this.state.push(WorkerState.Starting);
    this.readyAtMs.push(Number.POSITIVE_INFINITY);
    this.busy.push(0);
    this.passEndMs.push(Number.NaN);
    this.dirty.push(0);
    this.passesRun.push(0);
    this.prefillDeferrals.push(0);
    this.provisioned++;
    this.startingCount++;
    if (ready) this.markReady(w, nowMs);
    return w;
  }

  /** A host tier (shared by the pool, or engine `slot`'s own) and, with `g3_offload`, its disk tier. */
  private newHostTier(shared: boolean, slot: number): HostKvTier {
    const h = this.spec.hostOffload!;
    const tier = new HostKvTier(h.numHostBlocks, {
      h2dBandwidthGBps: h.h2dBandwidthGBps,
      d2hBandwidthGBps: h.d2hBandwidthGBps,
      latencyToFirstByteMs: h.latencyToFirstByteMs,
      sharedH2dBandwidthGBps: shared ? h.sharedH2dBandwidthGBps : null,
      sharedD2hBandwidthGBps: shared ? h.sharedD2hBandwidthGBps : null,
    });
    const d = h.disk;
    if (d != null) {
      if (d.scope === "worker_local") this.diskTiers.push(this.newDiskTier());
      tier.disk = this.diskTiers[this.diskTiers.length - 1];
      tier.diskWriter = slot;
    }
    return tier;
  }

  private newDiskTier(): DiskKvTier {
    const h = this.spec.hostOffload!;
    const d = h.disk!;
    return new DiskKvTier(
      d.numBlocks,
      {
        readBandwidthGBps: d.readBandwidthGBps,
        writeBandwidthGBps: d.writeBandwidthGBps,
        latencyToFirstByteMs: d.latencyToFirstByteMs,
        sharedReadBandwidthGBps: d.sharedReadBandwidthGBps,
        sharedWriteBandwidthGBps: d.sharedWriteBandwidthGBps,
      },
      h.bytesPerBlock,
    );
  }

  /** The host tier engine `slot` offloads to (its own, or the pool's shared one), or null. */
  private hostOffloadFor(slot: number): EngineHostOffload | null {
    const h = this.spec.hostOffload;
    const schedule = this.scheduleLoadEnd;
    if (h == null) return null;
    if (schedule === null) throw new Error("internal: a host KV tier needs a load scheduler");
    let tier: HostKvTier;
    if (h.scope === "cluster_shared") {
      tier = this.hostTiers[0]!;
    } else {
      tier = this.newHostTier(false, slot);
      this.hostTiers.push(tier);
    }
    const loadSlot = this.loadSlot;
    return {
      tier,
      bytesPerBlock: h.bytesPerBlock,
      link: { freeAtMs: 0 },
      disk: tier.disk,
      diskLink: { freeAtMs: 0 },
      diskReader: slot,
      scheduleLoadEnd(req: number, atMs: number): void {
        loadSlot.set(req, slot);
        schedule(atMs, req);
      },
    };
  }

  /**
   * A host load of `row` landed: its engine may admit it (false when it was cancelled meanwhile).
   * Marks the worker dirty so that it runs a pass.
   */
  completeHostLoad(row: number): boolean {
    const slot = this.loadSlot.get(row);
    if (slot === undefined) return false;
    this.loadSlot.delete(row);
    if (!this.engines[slot].completeLoad(row)) return false;
    this.dirty[this.workerOf(slot)] = 1;
    return true;
  }

  /** The slot the pool's placement picks for request `row` of `source` at `t` (by its prompt blocks). */
  chooseSlot(source: RequestSource, row: number, t: number): number {
    // A KV-aware router matches every prompt block (round robin reads none).
    if (this.kvRouting !== null) completeRowHashes(source, row);
    const hashes = source.hashes(row);
    return this.placement.choose(
      hashes,
      source.hashStart(row),
      source.hashCount(row),
      source.inputLength(row),
      t,
    );
  }

  /** Prompt tokens the slot chosen last already held, per the placement's index (0 without one). */
  lastOverlapTokens(): number {
    return this.placement.lastOverlapBlocks * this.spec.blockSize;
  }

  /** Prompt blocks the slot chosen last already held, per the placement's index (0 without one). */
  lastOverlapBlocks(): number {
    return this.placement.lastOverlapBlocks;
  }

  /** Tells a load-aware router that request `row` now counts on `slot` (nothing under round robin). */
  noteDispatched(
    source: RequestSource,
    row: number,
    slot: number,
    t: number,
    predictedPrefillMs: number,
  ): void {
    if (this.kvRouting !== null) completeRowHashes(source, row);
    this.kvRouting?.onDispatched(
      slot,
      row,
      source.hashes(row),
      source.hashStart(row),
      source.hashCount(row),
      source.inputLength(row),
      t,
      predictedPrefillMs,
    );
  }

  /** What the pool's host tiers did (prediction.json `kv_offload`); null without offload. */
  hostOffloadReport(): KvOffloadReport | null {
    const h = this.spec.hostOffload;
    if (h == null) return null;
    const sum = (of: (t: HostKvTier) => number): number => sumOver(this.hostTiers, of);
    const loads = sum((t) => t.loads);
    const loaded = sum((t) => t.loadedBlocks);
    return {
      scope: h.scope,
      tiers: this.hostTiers.length,
      host_blocks_per_tier: h.numHostBlocks,
      stored_blocks: sum((t) => t.storedBlocks),
      evicted_blocks: sum((t) => t.evictedBlocks),
      loads,
      loaded_blocks: loaded,
      loaded_tokens: loaded * this.spec.blockSize,
      loaded_bytes_per_gpu: loaded * h.bytesPerBlock,
      mean_load_ms: loads === 0 ? 0 : sum((t) => t.loadWaitMs) / loads,
      resident_blocks: sum((t) => t.residentBlocks),
    };
  }

  /** What the pool's disk tiers did by `endMs` (prediction.json `g3_offload`); null without one. */
  diskOffloadReport(endMs: number): G3OffloadReport | null {
    const d = this.spec.hostOffload?.disk;
    if (d == null) return null;
    const sum = (of: (t: DiskKvTier) => number): number => sumOver(this.diskTiers, of);
    const reads = this.diskTiers.map((t) => t.readStatsAt(endMs));
    const writes = this.diskTiers.map((t) => t.writeStatsAt(endMs));
    const pendingBlocks = sum((t) => t.pendingBlocksAt(endMs));
    return {
      scope: d.scope,
      tiers: this.diskTiers.length,
      g3_blocks_per_tier: d.numBlocks,
      lookup_probes: sum((t) => t.lookupProbes),
      lookup_hits: sum((t) => t.lookupHits),
      lookup_pending: sum((t) => t.lookupPending),
      read: addDiskIo(reads),
      write: addDiskIo(writes),
      evictions: sum((t) => t.evictions),
      resident_blocks: sum((t) => t.residentBlocks) - pendingBlocks,
      pending_blocks: pendingBlocks,
      cross_worker_read_blocks: sum((t) => t.crossWorkerReadBlocks),
    };
  }

  markReady(w: number, nowMs: number): void {
    if (this.state[w] !== WorkerState.Starting) return;
    this.state[w] = WorkerState.Ready;
    this.readyAtMs[w] = nowMs;
    this.startingCount--;
    this.readyCount++;
    this.placement.addWorker(w);
  }

  /** A starting worker is cancelled: gone at once. */
  cancelStarting(w: number, nowMs: number): void {
    this.startingCount--;
    this.retire(w, nowMs);
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
    this.drainingCount--;
    this.retire(w, nowMs);
  }

  /** Worker `w` is gone at `nowMs`: its GPU time stops accruing. */
  private retire(w: number, nowMs: number): void {
    this.accrue(nowMs);
    this.state[w] = WorkerState.Removed;
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

function sumOver<T>(items: readonly T[], of: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += of(item);
  return total;
}

/** The disk tiers' I/O of one direction, added field by field. */
function addDiskIo(parts: readonly DiskIoStats[]): DiskIoStats {
  const total = (of: (x: DiskIoStats) => number): number => sumOver(parts, of);
  return {
    submitted_jobs: total((x) => x.submitted_jobs),
    completed_jobs: total((x) => x.completed_jobs),
    cancelled_jobs: total((x) => x.cancelled_jobs),
    completed_bytes: total((x) => x.completed_bytes),
    transfer_ms: total((x) => x.transfer_ms),
  };
}
