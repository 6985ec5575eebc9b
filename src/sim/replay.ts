import type { KvTransferSpec, RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { Sequence } from "../engine/sequence.js";
import { SequenceQueue } from "../engine/sequenceQueue.js";
import { Signal, VllmEngine } from "../engine/vllmEngine.js";
import { Collector, type HandoffColumns, Terminal } from "../metrics/collector.js";
import type { RoleTimings } from "../timing/index.js";
import type { RequestTable } from "../traffic/requests.js";
import { ArrivalPlan } from "./arrivals.js";
import { EventHeap, eventOrder, Phase } from "./eventHeap.js";
import { transferMs, transferTokens, WorkerPool } from "./workerPool.js";

export interface ReplayOptions {
  readonly capturePerRequest: boolean;
}

/** What a finished replay hands to reporting. */
export interface ReplayResult {
  readonly collector: Collector;
  readonly table: RequestTable;
  /** Virtual time of the last processed event, ms. */
  readonly endTimeMs: number;
  /** ∫ provisioned workers dt over the run, in worker-seconds, per role. */
  readonly prefillWorkerSeconds: number;
  readonly decodeWorkerSeconds: number;
  readonly prefillGpusPerWorker: number;
  readonly decodeGpusPerWorker: number;
  /** Host time spent in the event loop, ms (`wall_time_ms`). */
  readonly wallTimeMs: number;
  readonly preemptions: number;
  readonly passes: number;
  readonly disaggregated: boolean;
}

/** Thrown out of `run` when `abort()` was called (Ctrl-C). */
export class ReplayAborted extends Error {
  constructor() {
    super("replay aborted");
  }
}

const POOL_ID_SPAN = 1 << 20;

/** Whether some request's full context (prompt + output − 1 computed tokens) exceeds a role's KV cache. */
function contextMayOutgrowCache(table: RequestTable, role: WorkerRoleSpec): boolean {
  let longest = 0;
  for (let r = 0; r < table.count; r++) {
    const ctx = table.inputLength[r] + table.outputLength[r] - 1;
    if (ctx > longest) longest = ctx;
  }
  if (role.maxModelLen !== null && longest > role.maxModelLen) longest = role.maxModelLen;
  return Math.ceil(longest / role.blockSize) > role.numGpuBlocks;
}

/**
 * The discrete-event replay (aisimulate.md §5.2, mocker.md §4.2) of an aggregated pool, or of a
 * prefill pool handing requests to a decode pool (§5.4, mocker.md §3.2).
 *
 * At each timestamp, in this fixed order: pass completions (tokens, terminals, prefill hand-offs;
 * a terminal may make the next session turn ready), transfer completions (the decode side gets
 * the KV, the prefill side frees it), arrivals (routed into a worker's waiting queue), then every
 * idle worker with work starts a pass — front pool first, workers in id order. Passes execute
 * eagerly at their start; their signals are delivered at their end. Ties at one timestamp break
 * by phase and a stable id (pool and worker, request row, session), never by insertion order.
 */
export class Replay {
  private readonly heap = new EventHeap(4096);
  /** The pool requests arrive at: aggregated, or prefill. */
  private readonly front: WorkerPool;
  /** The decode pool of a disaggregated deployment. */
  private readonly back: WorkerPool | null;
  private readonly pools: WorkerPool[];
  private readonly plan: ArrivalPlan;
  readonly collector: Collector;
  private readonly handoff: HandoffColumns | null;
  private readonly transfer: KvTransferSpec | null;
  private readonly maxModelLen: number | null;
  private readonly maxTimeMs: number | null;
  /** Disaggregated: the decode-side sequence of a request between hand-off and activation. */
  private readonly handoffSeq: (Sequence | null)[];
  private readonly prefillSlotOf: Int32Array;
  private readonly decodeSlotOf: Int32Array;
  /** Disaggregated: hand-offs waiting for decode capacity, FIFO per decode slot. */
  private readonly pendingReservations: SequenceQueue[];
  private now = 0;
  private passes = 0;
  private aborted = false;
  private readonly scheduleArrival: (row: number, time: number) => void;

  constructor(
    private readonly spec: RunSpec,
    private readonly table: RequestTable,
    timings: RoleTimings,
    opts: ReplayOptions,
  ) {
    const engine = spec.engine;
    const roles = engine.mode === "aggregated" ? [engine.aggregated] : [engine.prefill, engine.decode];
    for (const role of roles) {
      if (table.engineBlockSize !== role.blockSize) {
        throw new Error(
          `internal: request hashes use block size ${table.engineBlockSize}, engine ${role.blockSize}`,
        );
      }
    }
    this.maxTimeMs = spec.stop.maxVirtualTimeMs;
    this.maxModelLen = roles[0].maxModelLen;
    this.collector = new Collector(table.count, {
      // Only completed requests may contribute token gaps. Gaps can stream straight into the
      // sketches unless some admitted request may end without completing: cut off by the
      // virtual-time cap, or rejected after its context outgrew the whole KV cache.
      holdGapsUntilTerminal: this.maxTimeMs !== null || roles.some((r) => contextMayOutgrowCache(table, r)),
      captureHistory: opts.capturePerRequest,
      disaggregated: engine.mode === "disaggregated",
    });
    this.handoff = this.collector.handoff;
    const collector = this.collector;
    if (engine.mode === "aggregated" && timings.mode === "aggregated") {
      this.front = new WorkerPool(
        0,
        "aggregated",
        engine.aggregated,
        timings.aggregated,
        spec.router,
        table.blockHashes,
        collector,
      );
      this.back = null;
      this.transfer = null;
    } else if (engine.mode === "disaggregated" && timings.mode === "disaggregated") {
      this.front = new WorkerPool(
        0,
        "prefill",
        engine.prefill,
        timings.prefill,
        spec.router,
        table.blockHashes,
        collector,
      );
      const handoff = this.handoff!;
      this.back = new WorkerPool(1, "decode", engine.decode, timings.decode, spec.router, table.blockHashes, {
        onAdmit: (req, t) => {
          if (Number.isNaN(handoff.decodeAdmit[req])) handoff.decodeAdmit[req] = t;
        },
      });
      this.transfer = engine.kvTransfer;
    } else {
      throw new Error("internal: timing models do not match the engine mode");
    }
    this.pools = this.back === null ? [this.front] : [this.front, this.back];
    const disagg = this.back !== null;
    this.handoffSeq = disagg ? new Array<Sequence | null>(table.count).fill(null) : [];
    this.prefillSlotOf = new Int32Array(disagg ? table.count : 0);
    this.decodeSlotOf = new Int32Array(disagg ? table.count : 0);
    this.pendingReservations = disagg ? this.back!.engines.map(() => new SequenceQueue()) : [];
    this.plan = new ArrivalPlan(table, spec.load);
    this.scheduleArrival = (row, time) => {
      this.heap.push(time, eventOrder(Phase.Arrival, table.session[row]), row);
    };
    this.plan.seed(this.scheduleArrival);
  }

  /** Requests a stop at the next yield point (Ctrl-C). */
  abort(): void {
    this.aborted = true;
  }

  /** Runs to the end, yielding to the Node event loop about every 50 ms of host time. */
  async run(): Promise<ReplayResult> {
    const start = performance.now();
    let sliceEnd = start + 50;
    if (this.aborted) throw new ReplayAborted();
    while (this.step(4096)) {
      if (performance.now() >= sliceEnd) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.aborted) throw new ReplayAborted();
        sliceEnd = performance.now() + 50;
      }
    }
    return this.result(performance.now() - start);
  }

  /** Synchronous run (tests, benchmarks). */
  runSync(): ReplayResult {
    const start = performance.now();
    while (this.step(1 << 30)) {
      /* keep going */
    }
    return this.result(performance.now() - start);
  }

  /** Every attention-DP rank's engine of every pool (read-only use: invariant checks and diagnostics). */
  get workers(): readonly VllmEngine[] {
    return this.back === null ? this.front.engines : [...this.front.engines, ...this.back.engines];
  }

  /** Virtual time reached so far (progress reporting). */
  get virtualTimeMs(): number {
    return this.now;
  }

  /** Processes up to `maxTimestamps` distinct timestamps; false when the run is over. */
  step(maxTimestamps: number): boolean {
    const heap = this.heap;
    const transferOrder = eventOrder(Phase.TransferComplete, 0);
    const arrivalOrder = eventOrder(Phase.Arrival, 0);
    for (let k = 0; k < maxTimestamps; k++) {
      const t = heap.peekTime();
      if (t === Number.POSITIVE_INFINITY) {
        this.checkDrained();
        return false;
      }
      // Soft cap: events at the cap are processed, later ones are not (aisimulate.md §2.1).
      if (this.maxTimeMs !== null && t > this.maxTimeMs) return false;
      if (t < this.now) throw new Error(`internal: time went backwards (${t} < ${this.now})`);
      const dt = (t - this.now) / 1000;
      for (const pool of this.pools) pool.workerSeconds += pool.workerCount * dt;
      this.now = t;
      do {
        while (heap.peekTime() === t) {
          const order = heap.peekOrder();
          const payload = heap.peekPayload();
          heap.pop();
          if (order < transferOrder) this.completePass(payload, t);
          else if (order < arrivalOrder) this.completeTransfer(payload, t);
          else this.arrive(payload, t);
        }
        this.driveWorkers(this.front, t);
        if (this.back !== null) this.driveWorkers(this.back, t);
      } while (heap.peekTime() === t);
    }
    return true;
  }

  private arrive(row: number, t: number): void {
    const collector = this.collector;
    collector.onArrival(row, t);
    const table = this.table;
    const pool = this.front;
    const offset = table.blockOffsets[row];
    const count = table.blockOffsets[row + 1] - offset;
    const isl = table.inputLength[row];
    const slot = pool.placement.choose(table.blockHashes, offset, count, isl, t);
    const overlapTokens = pool.placement.lastOverlapBlocks * pool.spec.blockSize;
    const w = pool.workerOf(slot);
    collector.onDispatch(row, t, w, pool.rankOf(slot));
    collector.routeOverlapTokens[row] = overlapTokens;
    const predicted = pool.placement.wantsPrefillPrediction
      ? pool.timing.prefillMs(1, isl, Math.min(overlapTokens, isl))
      : Number.NaN;
    pool.placement.onDispatched(slot, row, table.blockHashes, offset, count, isl, t, predicted);
    // A prefill worker computes the prompt and one hidden token; the decode worker does the rest.
    const output = this.back === null ? table.outputLength[row] : Math.min(1, table.outputLength[row]);
    pool.engines[slot].enqueue(VllmEngine.makeSequence(row, isl, output, offset, count, this.maxModelLen));
    pool.dirty[w] = 1;
  }

  private completePass(payload: number, t: number): void {
    const pool = payload >= POOL_ID_SPAN ? this.back! : this.front;
    const w = payload - pool.id * POOL_ID_SPAN;
    pool.busy[w] = 0;
    pool.dirty[w] = 1;
    const D = pool.ranksPerWorker;
    for (let r = 0; r < D; r++) {
      const slot = w * D + r;
      this.deliverSignals(pool, slot, t);
      // Capacity may have freed on a decode worker: retry the hand-offs waiting for it.
      if (pool === this.back) this.drainReservations(slot, t);
    }
  }

  private deliverSignals(pool: WorkerPool, slot: number, t: number): void {
    const engine = pool.engines[slot];
    const reqs = engine.signalReq;
    const kinds = engine.signalKind;
    const n = engine.signalCount;
    // Delivered once: a later pass overwrites the buffers.
    engine.signalCount = 0;
    const collector = this.collector;
    const placement = pool.placement;
    for (let i = 0; i < n; i++) {
      const row = reqs[i];
      const kind = kinds[i];
      if (kind === Signal.Token) {
        collector.onToken(row, t);
        if (collector.tokens[row] === 1) placement.onPrefillCompleted(slot, row, t);
        continue;
      }
      if (kind === Signal.PrefillDone) {
        placement.onPrefillCompleted(slot, row, t);
        this.handOff(row, slot, t);
        continue;
      }
      if (kind === Signal.TokenAndComplete) {
        collector.onToken(row, t);
        collector.onTerminal(row, t, Terminal.Completed);
      } else if (kind === Signal.Complete) {
        collector.onTerminal(row, t, Terminal.Completed);
      } else {
        collector.onTerminal(row, t, Terminal.Rejected);
      }
      placement.onFreed(slot, row, t);
      this.plan.onTerminal(row, t, this.scheduleArrival);
    }
  }

  /** A prefill worker finished a request: pick its decode worker and reserve KV there. */
  private handOff(row: number, prefillSlot: number, t: number): void {
    const back = this.back!;
    const handoff = this.handoff!;
    const table = this.table;
    handoff.sourceHeld[row] = t;
    this.prefillSlotOf[row] = prefillSlot;
    const offset = table.blockOffsets[row];
    const count = table.blockOffsets[row + 1] - offset;
    const isl = table.inputLength[row];
    const slot = back.placement.choose(table.blockHashes, offset, count, isl, t);
    this.decodeSlotOf[row] = slot;
    handoff.decodeWorker[row] = back.workerOf(slot);
    handoff.decodeDpRank[row] = back.rankOf(slot);
    handoff.decodeRouteOverlapTokens[row] = back.placement.lastOverlapBlocks * back.spec.blockSize;
    const seq = VllmEngine.makeSequence(row, isl, table.outputLength[row], offset, count, this.maxModelLen);
    if (Math.ceil(isl / back.spec.blockSize) > back.spec.numGpuBlocks) {
      // The prompt can never fit on the decode worker: reject rather than wait forever.
      this.releaseSource(row, t);
      this.collector.onTerminal(row, t, Terminal.Rejected);
      this.plan.onTerminal(row, t, this.scheduleArrival);
      return;
    }
    this.handoffSeq[row] = seq;
    const queue = this.pendingReservations[slot];
    if (queue.length === 0 && this.reserve(seq, slot, t)) return;
    queue.pushBack(seq);
  }

  /** Tries to reserve decode-side KV for a hand-off; on success starts its transfer. */
  private reserve(seq: Sequence, slot: number, t: number): boolean {
    const back = this.back!;
    const resident = back.engines[slot].tryReserve(seq);
    if (resident < 0) return false;
    const row = seq.req;
    const handoff = this.handoff!;
    const table = this.table;
    handoff.destinationReserved[row] = t;
    handoff.decodeReusedTokens[row] = resident;
    const offset = table.blockOffsets[row];
    back.placement.onDispatched(
      slot,
      row,
      table.blockHashes,
      offset,
      table.blockOffsets[row + 1] - offset,
      seq.promptLength,
      t,
      Number.NaN,
    );
    const transfer = this.transfer!;
    const tokens = transferTokens(seq.promptLength, resident, back.spec.blockSize, transfer);
    handoff.transferredTokens[row] = tokens;
    this.heap.push(t + transferMs(tokens, transfer), eventOrder(Phase.TransferComplete, row), row);
    return true;
  }

  private drainReservations(slot: number, t: number): void {
    const queue = this.pendingReservations[slot];
    while (queue.length > 0 && this.reserve(queue.front(), slot, t)) queue.popFront();
  }

  /** The KV arrived: the decode worker may admit the request; the prefill worker frees its copy. */
  private completeTransfer(row: number, t: number): void {
    const back = this.back!;
    const seq = this.handoffSeq[row]!;
    this.handoffSeq[row] = null;
    const slot = this.decodeSlotOf[row];
    back.engines[slot].activate(seq);
    back.dirty[back.workerOf(slot)] = 1;
    this.handoff!.destinationActivated[row] = t;
    this.releaseSource(row, t);
  }

  private releaseSource(row: number, t: number): void {
    const front = this.front;
    const slot = this.prefillSlotOf[row];
    front.engines[slot].releaseHeld(row);
    front.dirty[front.workerOf(slot)] = 1;
    front.placement.onFreed(slot, row, t);
    this.handoff!.sourceReleased[row] = t;
  }

  /**
   * Starts a pass on every idle worker of `pool` with work, in worker-id order. With attention
   * DP every rank with work forms its own batch at the same time and the worker's pass ends when
   * the slowest rank does (ranks without work wait at the barrier; aisimulate.md §4.3 step 5).
   */
  private driveWorkers(pool: WorkerPool, t: number): void {
    const engines = pool.engines;
    const D = pool.ranksPerWorker;
    const dirty = pool.dirty;
    const busy = pool.busy;
    for (let w = 0; w < pool.workerCount; w++) {
      if (dirty[w] === 0 || busy[w] === 1) continue;
      dirty[w] = 0;
      let progressed = false;
      let duration = 0;
      for (let r = 0; r < D; r++) {
        const engine = engines[w * D + r];
        if (!engine.hasWork()) continue;
        const d = engine.startPass(t);
        if (!engine.lastPassProgressed) continue;
        progressed = true;
        if (d > duration) duration = d;
      }
      // Nothing could run (e.g. the waiting heads do not fit yet): stay idle until new work.
      if (!progressed) continue;
      busy[w] = 1;
      this.passes++;
      const payload = pool.id * POOL_ID_SPAN + w;
      this.heap.push(t + duration, eventOrder(Phase.PassCompletion, payload), payload);
    }
  }

  /** With no event left, every arrived request must have ended: anything else is a simulator bug. */
  private checkDrained(): void {
    const c = this.collector;
    let open = 0;
    for (let r = 0; r < this.table.count; r++)
      if (!Number.isNaN(c.arrival[r]) && c.status[r] === Terminal.None) open++;
    if (open > 0) throw new Error(`internal: the replay reached a dead end with ${open} requests unfinished`);
  }

  private result(wallTimeMs: number): ReplayResult {
    let preemptions = 0;
    for (const e of this.workers) preemptions += e.preemptions;
    const back = this.back;
    return {
      collector: this.collector,
      table: this.table,
      endTimeMs: this.now,
      prefillWorkerSeconds: back === null ? 0 : this.front.workerSeconds,
      decodeWorkerSeconds: back === null ? this.front.workerSeconds : back.workerSeconds,
      prefillGpusPerWorker: back === null ? 0 : this.front.spec.gpusPerWorker,
      decodeGpusPerWorker: back === null ? this.front.spec.gpusPerWorker : back.spec.gpusPerWorker,
      wallTimeMs,
      preemptions,
      passes: this.passes,
      disaggregated: back !== null,
    };
  }
}
