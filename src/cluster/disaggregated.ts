import type { KvTransferSpec, RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { Sequence } from "../engine/sequence.js";
import { SequenceQueue } from "../engine/sequenceQueue.js";
import { type HandoffColumns, Terminal } from "../metrics/collector.js";
import type { SampledPoolSource } from "../metrics/timeline.js";
import type { TimingModel } from "../timing/timingModel.js";
import { type RowStore, type RowWindow, relayoutArray, relayoutI32 } from "../util/rowWindow.js";
import { Cluster, type ClusterContext } from "./cluster.js";
import { transferMs, transferTokens } from "./kvTransfer.js";
import { WorkerPool } from "./workerPool.js";

/**
 * A prefill pool handing requests to a decode pool (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`, `ai-dynamo/aisimulate@b09d365:crates/core/src/replay/disagg.rs`; `ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`), in
 * one of the reference's two orders:
 *
 * - source first (vLLM): at the end of its prefill a request is held on its prefill worker; the
 *   decode router picks its decode worker (queued while none is ready); KV is reserved there,
 *   FIFO per decode slot; the transfer starts once reserved;
 * - destination first (SGLang): at arrival the decode router picks the decode worker and KV is
 *   reserved there first (the same queues); only then does the request go to the prefill router,
 *   and its transfer starts at the end of its prefill. A request waits for decode capacity before
 *   it is prefilled, as SGLang's decode server pre-allocates KV before its prefill server runs.
 *
 * Either way, when the transfer lands the decode engine admits the request and the prefill worker
 * frees its copy. A zero-output request needs no decode worker: it goes straight to prefill.
 *
 * Source first, the reference's decode scheduler meters its destinations
 * (`ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`
 * `retry_pending_destinations`, `ai-dynamo/aisimulate@020fd86:crates/core/src/replay/disagg.rs`):
 * every hand-off joins its decode slot's FIFO, and only the FIFO's head is tried — at once while
 * the decode worker has no pass in flight, else at its pass end, once, and once more after each
 * hand-off activated there; a head that does not fit blocks the FIFO. A transfer that lands while
 * its decode worker is in a pass is activated at that pass's end, before the next pass is formed
 * (it is admitted into that pass, as one landing on an idle worker is at once). The source copy is
 * freed at the activation, or at the end of the prefill worker's pass in flight then.
 */
export class DisaggregatedCluster extends Cluster implements RowStore {
  readonly prefillPool: WorkerPool;
  readonly decodePool: WorkerPool;
  private readonly back: WorkerPool;
  private readonly handoff: HandoffColumns;
  private readonly transfer: KvTransferSpec;
  /** Per live request (slot `row & mask` of the row window): its decode-side sequence between hand-off and activation. */
  private handoffSeq: (Sequence | null)[];
  private prefillSlotOf: Int32Array;
  private decodeSlotOf: Int32Array;
  private mask: number;
  private readonly window: RowWindow;
  /** Hand-offs waiting for decode capacity, FIFO per decode slot. */
  private readonly pendingReservations: SequenceQueue[] = [];
  /** Source first: per decode slot, the rows whose KV landed during the worker's pass, in landing order. */
  private readonly landedInPass: number[][] = [];
  /** Source first: per prefill slot, the rows whose source copy is freed at the worker's pass end. */
  private readonly releaseAtPassEnd: number[][] = [];
  /** Hand-offs that found no ready decode worker, FIFO (request rows). */
  private readonly pendingHandoffs: number[] = [];
  /** The reference's `DestinationFirst` order (SGLang); else `SourceFirst`. */
  private readonly destinationFirst: boolean;

  constructor(
    ctx: ClusterContext,
    prefill: { readonly role: WorkerRoleSpec; readonly timing: TimingModel },
    decode: { readonly role: WorkerRoleSpec; readonly timing: TimingModel },
    router: RouterSpec,
    transfer: KvTransferSpec,
  ) {
    const handoff = ctx.collector.handoff;
    if (handoff === null)
      throw new Error("internal: a disaggregated run needs the collector's hand-off columns");
    const front = new WorkerPool(
      0,
      "prefill",
      prefill.role,
      prefill.timing,
      router,
      ctx.collector,
      (at, row) => ctx.host.scheduleHostLoadEnd(at, row),
    );
    const back = new WorkerPool(1, "decode", decode.role, decode.timing, router, {
      onAdmit: (req, t) => handoff.onDecodeAdmit(req, t),
    });
    // A prefill worker computes the prompt and one hidden token; the decode worker does the rest.
    super(ctx, [front, back], 1);
    this.prefillPool = front;
    this.decodePool = back;
    this.back = back;
    this.handoff = handoff;
    this.transfer = transfer;
    this.destinationFirst = decode.role.backend === "sglang";
    const window = ctx.source.window;
    this.window = window;
    this.mask = window.mask;
    this.handoffSeq = new Array<Sequence | null>(window.capacity).fill(null);
    this.prefillSlotOf = new Int32Array(window.capacity);
    this.decodeSlotOf = new Int32Array(window.capacity);
    window.register(this);
  }

  /**
   * The reference's disaggregated runtime submits a timestamp's arrivals to the prefill router
   * after its scaling tick (`seed-disagg-budget-4`, docs/conformance.md Known differences 17),
   * where its aggregated replay routes them before it (`seed-agg-startup-0`).
   */
  override get routesAfterTick(): boolean {
    return true;
  }

  relayout(first: number, end: number, oldMask: number, capacity: number): void {
    this.handoffSeq = relayoutArray(this.handoffSeq, first, end, oldMask, capacity, null);
    this.prefillSlotOf = relayoutI32(this.prefillSlotOf, first, end, oldMask, capacity, 0);
    this.decodeSlotOf = relayoutI32(this.decodeSlotOf, first, end, oldMask, capacity, 0);
    this.mask = capacity - 1;
  }

  applyTargets(targetPrefill: number | null, targetDecode: number | null, t: number): void {
    if (targetPrefill !== null) this.scaleTo(this.front, targetPrefill, t);
    if (targetDecode !== null) this.scaleTo(this.back, targetDecode, t);
  }

  override reservedBySlot(pool: WorkerPool): Sequence[][] {
    const out: Sequence[][] = [];
    if (pool !== this.back) return out;
    const handoff = this.handoff;
    for (let row = this.window.freed; row < this.window.read; row++) {
      const seq = this.handoffSeq[row & this.mask];
      if (seq === null || !handoff.hasReservation(row)) continue;
      const slot = this.decodeSlotOf[row & this.mask];
      while (out.length <= slot) out.push([]);
      out[slot].push(seq);
    }
    return out;
  }

  override timelineSources(): SampledPoolSource[] {
    return [
      { pool: this.front, extraWaiting: null },
      // Hand-offs waiting for KV on a decode worker are queued for that worker too.
      { pool: this.back, extraWaiting: (slot: number) => this.reservationsWaiting(slot) },
    ];
  }

  override starvedPool(): WorkerPool | null {
    const front = super.starvedPool();
    if (front !== null) return front;
    return this.back.provisioned === 0 && this.pendingHandoffs.length > 0 ? this.back : null;
  }

  override waitingFor(pool: WorkerPool): number {
    return pool === this.back ? this.pendingHandoffs.length : super.waitingFor(pool);
  }

  override holdsNothing(pool: WorkerPool, w: number): boolean {
    if (!pool.isDrained(w)) return false;
    if (pool !== this.back) return true;
    const D = pool.ranksPerWorker;
    for (let r = 0; r < D; r++) if (this.reservationsWaiting(w * D + r) > 0) return false;
    return true;
  }

  protected override releasePending(pool: WorkerPool, t: number): void {
    if (pool !== this.back) {
      super.releasePending(pool, t);
      return;
    }
    while (this.pendingHandoffs.length > 0 && pool.readyCount > 0)
      this.routeHandoff(this.pendingHandoffs.shift()!, t);
  }

  /** A prefill pass end reserves KV on a decode worker (`prefillDone`): decode runs stop before the next one. */
  protected override runBlockingPools(pool: WorkerPool): number {
    return pool === this.back ? 1 << this.front.id : 0;
  }

  /**
   * A decode worker with hand-offs waiting for its capacity retries them at every pass end, and
   * one whose hand-offs landed during its pass activates them at its end: no run.
   */
  protected override runAllowed(pool: WorkerPool, w: number): boolean {
    if (pool !== this.back) return true;
    const slot = w * pool.ranksPerWorker;
    return (
      this.reservationsWaiting(slot) === 0 &&
      (slot >= this.landedInPass.length || this.landedInPass[slot].length === 0)
    );
  }

  /**
   * Capacity may have freed on a decode worker (a pass end, a cancellation): retry the hand-offs
   * waiting for it. Source first, the FIFO's head once, then the hand-offs that landed during the
   * pass are activated, each followed by one more try of the head while the last one succeeded
   * (an activation frees no capacity: a head that did not fit is not tried again).
   */
  protected slotFreed(pool: WorkerPool, slot: number, t: number): void {
    if (pool !== this.back) {
      this.freeSourcesAtPassEnd(slot, t);
      return;
    }
    if (this.destinationFirst) {
      this.drainReservations(slot, t);
      return;
    }
    let reserved = this.retryHead(slot, t);
    const landed = slot < this.landedInPass.length ? this.landedInPass[slot] : null;
    if (landed === null || landed.length === 0) return;
    this.landedInPass[slot] = [];
    for (const row of landed) {
      // Abandoned during its transfer or its wait (`cancelHandoff` freed both sides), maybe released.
      if (row < this.window.freed || this.handoffSeq[row & this.mask] === null) continue;
      this.activate(row, t);
      if (reserved) reserved = this.retryHead(slot, t);
    }
  }

  /**
   * Destination first: an arrival reserves decode KV before it reaches the prefill router (a
   * zero-output request, which has nothing to decode, goes straight there).
   */
  override route(row: number, t: number): void {
    if (!this.destinationFirst || this.source.outputLength(row) === 0) super.route(row, t);
    else this.toDecodeRouter(row, t);
  }

  /**
   * A prefill worker finished a request: its KV is held there; source first, pick its decode
   * worker and reserve KV there; destination first, the reservation exists, so the transfer starts.
   */
  protected prefillDone(row: number, prefillSlot: number, t: number): void {
    this.handoff.onSourceHeld(row, t);
    this.prefillSlotOf[row & this.mask] = prefillSlot;
    if (this.destinationFirst) this.startTransfer(row, t);
    else this.toDecodeRouter(row, t);
  }

  /** The decode router places the hand-off, or queues it while no decode worker is ready. */
  private toDecodeRouter(row: number, t: number): void {
    if (this.back.readyCount === 0) this.pendingHandoffs.push(row);
    else this.routeHandoff(row, t);
  }

  private routeHandoff(row: number, t: number): void {
    const back = this.back;
    const source = this.source;
    const isl = source.inputLength(row);
    const slot = back.chooseSlot(source, row, t);
    this.decodeSlotOf[row & this.mask] = slot;
    this.handoff.onDecodeRouted(row, t, back.workerOf(slot), back.rankOf(slot), back.lastOverlapTokens());
    const seq = this.sequenceOf(row);
    if (Math.ceil(isl / back.spec.blockSize) > back.spec.numGpuBlocks) {
      // The prompt can never fit on the decode worker: reject rather than wait forever (destination
      // first, before it is prefilled).
      if (!this.destinationFirst) this.releaseSource(row, t);
      this.host.onEnded(row, t, Terminal.Rejected);
      return;
    }
    // The decode router counts the request from its choice on (the reference's add_request at
    // selection), also while the hand-off waits for KV capacity there: it is in flight on that
    // worker, which keeps it even if the worker starts draining meanwhile.
    back.noteDispatched(source, row, slot, t, Number.NaN);
    this.handoffSeq[row & this.mask] = seq;
    const queue = this.reservationQueue(slot);
    if (this.destinationFirst) {
      if (queue.length === 0 && this.reserve(seq, slot, t)) return;
      queue.pushBack(seq);
      return;
    }
    // Source first: queued; the head is tried now only on a decode worker with no pass in flight.
    queue.pushBack(seq);
    if (back.busy[back.workerOf(slot)] === 0) this.retryHead(slot, t);
  }

  /**
   * Tries to reserve decode-side KV for a hand-off; on success starts its transfer (source first)
   * or sends the request to the prefill router (destination first).
   */
  private reserve(seq: Sequence, slot: number, t: number): boolean {
    const back = this.back;
    const resident = back.engines[slot].tryReserve(seq);
    if (resident < 0) return false;
    const row = seq.req;
    const tokens = transferTokens(seq.promptLength, resident, back.spec.blockSize, this.transfer);
    this.handoff.onReserved(row, t, resident, tokens);
    if (this.destinationFirst) super.route(row, t);
    else this.startTransfer(row, t);
    return true;
  }

  /** The reserved hand-off's KV starts moving: it lands after the transfer time of its tokens. */
  private startTransfer(row: number, t: number): void {
    const tokens = this.handoff.transferredTokens[row & this.mask];
    this.host.scheduleTransferEnd(t + transferMs(tokens, this.transfer), row);
  }

  private reservationQueue(slot: number): SequenceQueue {
    while (this.pendingReservations.length <= slot) this.pendingReservations.push(new SequenceQueue());
    return this.pendingReservations[slot];
  }

  private reservationsWaiting(slot: number): number {
    return slot < this.pendingReservations.length ? this.pendingReservations[slot].length : 0;
  }

  /** Destination first: reserves for the hand-offs waiting on `slot` in order while they fit. */
  private drainReservations(slot: number, t: number): void {
    const queue = this.reservationQueue(slot);
    while (queue.length > 0 && this.reserve(queue.front(), slot, t)) queue.popFront();
  }

  /** Source first: tries to reserve for the head of `slot`'s FIFO; whether it did. */
  private retryHead(slot: number, t: number): boolean {
    const queue = this.reservationQueue(slot);
    if (queue.length === 0 || !this.reserve(queue.front(), slot, t)) return false;
    queue.popFront();
    return true;
  }

  /**
   * The KV arrived. Source first, on a decode worker in a pass it waits for the pass's end
   * (`slotFreed`); otherwise the request is activated now (and, source first, the FIFO's head
   * tried once more).
   */
  completeTransfer(row: number, t: number): void {
    const back = this.back;
    // Abandoned during its transfer (`cancelHandoff` freed both sides), and maybe released since.
    if (row < this.window.freed) return;
    const i = row & this.mask;
    if (this.handoffSeq[i] === null) return;
    const slot = this.decodeSlotOf[i];
    if (!this.destinationFirst && back.busy[back.workerOf(slot)] === 1) {
      while (this.landedInPass.length <= slot) this.landedInPass.push([]);
      this.landedInPass[slot].push(row);
      return;
    }
    this.activate(row, t);
    if (!this.destinationFirst) this.retryHead(slot, t);
  }

  /** The decode worker may admit the request (its prompt's KV is there); the prefill worker frees its copy. */
  private activate(row: number, t: number): void {
    const back = this.back;
    const i = row & this.mask;
    const seq = this.handoffSeq[i]!;
    this.handoffSeq[i] = null;
    const slot = this.decodeSlotOf[i];
    back.engines[slot].activate(seq);
    back.dirty[back.workerOf(slot)] = 1;
    this.handoff.onActivated(row, t);
    if (this.destinationFirst) {
      this.releaseSource(row, t);
      return;
    }
    // Source first, the reference frees the source once the activation is applied: at once on an
    // idle prefill worker, at the end of its pass in flight on a busy one (its `ReleaseSource`
    // waits for the pass, `ai-dynamo/aisimulate@020fd86:crates/core/src/replay/disagg.rs`); the
    // copy holds prefill KV until then. That end is known now: it is the release time.
    const front = this.front;
    const prefillSlot = this.prefillSlotOf[i];
    const w = front.workerOf(prefillSlot);
    if (front.busy[w] === 0) {
      this.releaseSource(row, t);
      return;
    }
    while (this.releaseAtPassEnd.length <= prefillSlot) this.releaseAtPassEnd.push([]);
    this.releaseAtPassEnd[prefillSlot].push(row);
    this.handoff.onSourceReleased(row, front.passEndMs[w]);
  }

  /** At a prefill worker's pass end: the source copies whose release waited for it. */
  private freeSourcesAtPassEnd(slot: number, t: number): void {
    const rows = slot < this.releaseAtPassEnd.length ? this.releaseAtPassEnd[slot] : null;
    if (rows === null || rows.length === 0) return;
    this.releaseAtPassEnd[slot] = [];
    // The request may have ended (and its row been released) meanwhile: the copy is found by row.
    for (const row of rows) this.freeSource(row, slot, t);
  }

  private releaseSource(row: number, t: number): void {
    this.freeSource(row, this.prefillSlotOf[row & this.mask], t);
    this.handoff.onSourceReleased(row, t);
  }

  /** Frees `row`'s KV held on prefill slot `slot` (its hand-off's source copy). */
  private freeSource(row: number, slot: number, t: number): void {
    const front = this.front;
    front.engines[slot].releaseHeld(row);
    const w = front.workerOf(slot);
    front.dirty[w] = 1;
    front.kvRouting?.onFreed(slot, row, t);
    // The hand-off may have been the last thing a draining prefill worker held.
    this.removeIfDrained(front, w, t);
  }

  protected cancelPastFront(row: number, t: number): boolean {
    const handoff = this.handoff;
    if (!handoff.hasSourceHeld(row)) {
      // Still in its prefill engine (which the caller cancels); destination first, its decode KV
      // is already reserved.
      if (this.destinationFirst) this.dropDestination(row, t);
      return false;
    }
    if (handoff.isActivated(row)) {
      // Its KV arrived: in its decode engine.
      this.cancelInEngine(this.back, this.decodeSlotOf[row & this.mask], row, t);
    } else {
      this.cancelHandoff(row, t);
    }
    return true;
  }

  /**
   * Destination first: cancelled before its prefill worker got it, it may hold (or wait for) a
   * decode reservation.
   */
  protected override cancelUndispatched(row: number, t: number): void {
    super.cancelUndispatched(row, t);
    if (this.destinationFirst) this.dropDestination(row, t);
  }

  /** Destination first: rejected on its prefill worker, it gives its decode reservation back. */
  protected override frontEnded(row: number, t: number): void {
    if (this.destinationFirst) this.dropDestination(row, t);
  }

  /**
   * `row` finished prefill and its KV is held on its prefill worker while it waits for a decode
   * worker, for decode capacity there, or for its transfer. Drops the decode side's claim and
   * frees the prefill copy.
   */
  private cancelHandoff(row: number, t: number): void {
    this.dropDestination(row, t);
    this.releaseSource(row, t);
  }

  /**
   * Drops whatever claim `row` has on the decode side — a place in the decode router's queue, in
   * a decode slot's reservation queue, or reserved blocks (a transfer in flight is ignored when it
   * lands) — and lets the next hand-offs reserve. Nothing when it has none.
   */
  private dropDestination(row: number, t: number): void {
    const back = this.back;
    const i = row & this.mask;
    const seq = this.handoffSeq[i];
    if (seq === null) {
      // No decode worker was ready: it may wait in the decode router's queue.
      const i = this.pendingHandoffs.indexOf(row);
      if (i >= 0) this.pendingHandoffs.splice(i, 1);
    } else {
      const slot = this.decodeSlotOf[i];
      this.handoffSeq[i] = null;
      if (!this.handoff.hasReservation(row)) {
        const queue = this.reservationQueue(slot);
        for (let i = 0; i < queue.length; i++) {
          if (queue.at(i) === seq) {
            queue.removeAt(i);
            break;
          }
        }
      } else {
        back.engines[slot].cancelReservation(seq);
      }
      back.kvRouting?.onFreed(slot, row, t);
      back.dirty[back.workerOf(slot)] = 1;
      // The freed place lets the next hand-offs reserve (source first: the head, once, on an idle
      // worker; a busy one tries it at its pass end).
      if (this.destinationFirst) this.drainReservations(slot, t);
      else if (back.busy[back.workerOf(slot)] === 0) this.retryHead(slot, t);
      this.removeIfDrained(back, back.workerOf(slot), t);
    }
  }
}
