import { DEFAULT_CLIENT, type KvTransferSpec, type RunSpec, type WorkerRoleSpec } from "../config/runSpec.js";
import { varianceOf } from "../engine/passStats.js";
import type { Sequence } from "../engine/sequence.js";
import { SequenceQueue } from "../engine/sequenceQueue.js";
import { cappedOutputTokens, Signal, VllmEngine } from "../engine/vllmEngine.js";
import { Collector, type HandoffColumns, Terminal } from "../metrics/collector.js";
import { TimelineSampler, type TimelineSamples } from "../metrics/timeline.js";
import type { ForwardPassMetrics } from "../planner/types.js";
import type { RoleTimings } from "../timing/index.js";
import type { RequestTable } from "../traffic/requests.js";
import { ArrivalPlan } from "./arrivals.js";
import { EventHeap, eventOrder, Phase } from "./eventHeap.js";
import { InvariantChecker, invariantsEnabledByEnv } from "./invariants.js";
import type {
  LifecycleOperation,
  LifecycleTransition,
  PoolTopology,
  ScalingPolicy,
  TickSnapshot,
  TrafficWindow,
} from "./scaling.js";
import { transferMs, transferTokens, WorkerPool, WorkerState } from "./workerPool.js";

export interface ReplayOptions {
  readonly capturePerRequest: boolean;
  /** Drives scaling ticks (the Planner); null for a fixed deployment. */
  readonly scaling?: ScalingPolicy | null;
  /** Check bookkeeping invariants while running (sim/invariants.ts); default: FLEETSIM_CHECK_INVARIANTS. */
  readonly checkInvariants?: boolean;
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
  /** Worker transitions caused by scaling (empty for a fixed deployment). */
  readonly lifecycleOperations: readonly LifecycleOperation[];
  /** Worker state sampled at bucket boundaries (`timeseries`, metrics/timeline.ts). */
  readonly timeline: TimelineSamples;
  /**
   * Set when the run stopped because scaling left a pool without any worker while requests
   * waited for it and nothing else could happen (`STALL_TICKS` ticks in a row); null otherwise.
   */
  readonly stalled: ReplayStall | null;
}

/** A run the scaling policy starved: its pool had no worker for `STALL_TICKS` ticks while requests waited. */
export interface ReplayStall {
  readonly atMs: number;
  readonly sinceMs: number;
  readonly pool: "agg" | "prefill" | "decode";
  /** Requests waiting for a worker of that pool when the run stopped. */
  readonly waiting: number;
}

/**
 * Ticks in a row with a pool at zero workers, requests waiting for it, and no other event left,
 * after which the run stops instead of ticking forever (the Planner scaled to zero and does not
 * come back: e.g. a budget below `min_workers` × GPUs per worker). A thousand ticks span many
 * throughput intervals, so a policy that scales back up from zero gets its chance.
 */
export const STALL_TICKS = 1000;

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
  /** Client send → router (`client.overhead.request_ms`): the fleet sees a request this much later. */
  private readonly requestMs: number;
  /** Engine output → client (`client.overhead.response_ms`): tokens and ends are recorded this much later. */
  private readonly responseMs: number;
  /** `client.timeout_seconds` in ms: a request not finished this long after it was sent is abandoned; null = never. */
  private readonly timeoutMs: number | null;
  /**
   * Rows in arrival order, for their timeouts: deadlines (arrival + timeout) come in the same
   * order, so the next one is at the head once ended requests are skipped (`nextDeadline`).
   */
  private readonly deadlineRows: Int32Array;
  private deadlineHead = 0;
  private deadlineTail = 0;
  /** Per pool, per worker: requests abandoned while the worker's pass was in flight, cancelled at its end. */
  private readonly cancelAtPassEnd: number[][][];
  /** Cancellations waiting in `cancelAtPassEnd`: the run is not over while an engine still holds one. */
  private cancelsPending = 0;
  /** Disaggregated: the decode-side sequence of a request between hand-off and activation. */
  private readonly handoffSeq: (Sequence | null)[];
  private readonly prefillSlotOf: Int32Array;
  private readonly decodeSlotOf: Int32Array;
  /** Disaggregated: hand-offs waiting for decode capacity, FIFO per decode slot. */
  private readonly pendingReservations: SequenceQueue[] = [];
  /** Requests that found no ready worker in the front pool, FIFO (the router's pending queue). */
  private readonly pendingArrivals: number[] = [];
  /** Disaggregated: hand-offs that found no ready decode worker, FIFO (request rows). */
  private readonly pendingHandoffs: number[] = [];
  private readonly scaling: ScalingPolicy | null;
  private tickOrdinal = 0;
  private tickDue = false;
  /** Work the last tick's policy started (a retune sweep): the clock waits for it (`run`). */
  private work: Promise<void> | null = null;
  /** Arrival events in the heap, and arrived requests without a terminal state. */
  private queuedArrivalEvents = 0;
  private openRequests = 0;
  private readonly lifecycle: LifecycleOperation[] = [];
  private traffic = emptyTraffic();
  private trafficSinceMs = 0;
  private now = 0;
  private passes = 0;
  private aborted = false;
  private readonly scheduleArrival: (row: number, time: number) => void;
  /** Samples worker state at bucket boundaries, lazily from `step` (no events of its own). */
  private readonly timeline: TimelineSampler;
  /** Bookkeeping checks (tests); null in production runs, so the hot loop pays one null test. */
  private readonly invariants: InvariantChecker | null;
  /** Whether the run ended by running out of work (not by the virtual-time cap). */
  private finished = false;
  /** Consecutive ticks with a starved pool (see STALL_TICKS), since `stallSinceMs`. */
  private stallTicks = 0;
  private stallSinceMs = 0;
  private stall: ReplayStall | null = null;

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
    const client = spec.client ?? DEFAULT_CLIENT;
    this.requestMs = client.requestMs;
    this.responseMs = client.responseMs;
    this.timeoutMs = client.timeoutMs;
    this.deadlineRows = new Int32Array(this.timeoutMs === null ? 0 : table.count);
    this.maxModelLen = roles[0].maxModelLen;
    this.collector = new Collector(table.count, {
      // Only completed requests may contribute token gaps. Gaps can stream straight into the
      // sketches unless some admitted request may end without completing: cut off by the
      // virtual-time cap, or rejected after its context outgrew the whole KV cache.
      holdGapsUntilTerminal:
        this.maxTimeMs !== null ||
        client.timeoutMs !== null ||
        roles.some((r) => contextMayOutgrowCache(table, r)),
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
    this.cancelAtPassEnd = this.pools.map(() => []);
    const disagg = this.back !== null;
    this.handoffSeq = disagg ? new Array<Sequence | null>(table.count).fill(null) : [];
    this.prefillSlotOf = new Int32Array(disagg ? table.count : 0);
    this.decodeSlotOf = new Int32Array(disagg ? table.count : 0);
    this.plan = new ArrivalPlan(table, spec.load);
    this.scheduleArrival = (row, time) => {
      this.queuedArrivalEvents++;
      this.heap.push(time, eventOrder(Phase.Arrival, table.session[row]), row);
    };
    // The latest arrival known now sets the time series' interval (closed loop: 0, coarsened later).
    let horizonMs = 0;
    this.plan.seed((row, time) => {
      if (time > horizonMs) horizonMs = time;
      this.scheduleArrival(row, time);
    });
    if (this.maxTimeMs !== null) horizonMs = Math.min(horizonMs, this.maxTimeMs);
    const back = this.back;
    this.timeline = new TimelineSampler(
      this.pools.map((pool) => ({
        pool,
        // Hand-offs waiting for KV on a decode worker are queued for that worker too.
        extraWaiting: pool === back ? (slot: number) => this.reservationsWaiting(slot) : null,
      })),
      horizonMs,
    );
    this.scaling = opts.scaling ?? null;
    const first = this.scaling?.initialTickMs() ?? null;
    if (first !== null && Number.isFinite(first)) this.heap.push(first, eventOrder(Phase.Scaling, 0), 0);
    this.invariants =
      (opts.checkInvariants ?? invariantsEnabledByEnv())
        ? new InvariantChecker({
            pools: this.pools,
            collector,
            holdsNothing: (pool, w) => this.holdsNothing(pool, w),
            reservedBySlot: (pool) => this.reservedBySlot(pool),
            gpuBudget: spec.planner?.maxGpuBudget ?? null,
          })
        : null;
  }

  /** Per slot of `pool`: the hand-offs reserved there whose KV transfer is in flight (invariant checks). */
  private reservedBySlot(pool: WorkerPool): Sequence[][] {
    const out: Sequence[][] = [];
    if (pool !== this.back) return out;
    const handoff = this.handoff!;
    for (let row = 0; row < this.handoffSeq.length; row++) {
      const seq = this.handoffSeq[row];
      if (seq === null || Number.isNaN(handoff.destinationReserved[row])) continue;
      const slot = this.decodeSlotOf[row];
      while (out.length <= slot) out.push([]);
      out[slot].push(seq);
    }
    return out;
  }

  /** Requests a stop at the next yield point (Ctrl-C). */
  abort(): void {
    this.aborted = true;
    // A retune sweep in flight is stopped too, so the abort lands now, not after the sweep.
    this.scaling?.abort?.();
  }

  /** Runs to the end, yielding to the Node event loop about every 50 ms of host time. */
  async run(): Promise<ReplayResult> {
    const start = performance.now();
    let sliceEnd = start + 50;
    if (this.aborted) throw new ReplayAborted();
    while (this.step(4096)) {
      const work = this.work;
      if (work !== null) {
        // Virtual time stands still while the policy's work (a retune sweep) runs.
        this.work = null;
        await work;
        if (this.aborted) throw new ReplayAborted();
        sliceEnd = performance.now() + 50;
        continue;
      }
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
      if (this.work !== null) {
        this.work.catch(() => {}); // reported by the error below, not as an unhandled rejection
        throw new Error(
          "internal: the scaling policy started asynchronous work (a retune sweep); use Replay.run(), not runSync()",
        );
      }
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
    const readyOrder = eventOrder(Phase.WorkerReady, 0);
    const transferOrder = eventOrder(Phase.TransferComplete, 0);
    const arrivalOrder = eventOrder(Phase.Arrival, 0);
    const scalingOrder = eventOrder(Phase.Scaling, 0);
    for (let k = 0; k < maxTimestamps; k++) {
      // Scaling starved a pool for good (checkStall): the waiting requests stay unfinished.
      if (this.stall !== null) return false;
      const t = Math.min(heap.peekTime(), this.nextDeadline());
      // With scaling, only ticks and startups may remain once all traffic is served: done then.
      const finished =
        this.scaling !== null &&
        this.openRequests === 0 &&
        this.queuedArrivalEvents === 0 &&
        this.cancelsPending === 0;
      if (t === Number.POSITIVE_INFINITY || finished) {
        this.checkDrained();
        this.finished = true;
        return false;
      }
      // Soft cap: events at the cap are processed, later ones are not (aisimulate.md §2.1).
      if (this.maxTimeMs !== null && t > this.maxTimeMs) return false;
      if (t < this.now) throw new Error(`internal: time went backwards (${t} < ${this.now})`);
      // Boundaries up to t see the state before the events at t.
      if (t >= this.timeline.nextBoundaryMs) this.timeline.sampleUntil(t);
      this.now = t;
      do {
        while (heap.peekTime() === t) {
          const order = heap.peekOrder();
          const payload = heap.peekPayload();
          heap.pop();
          if (order < readyOrder) this.completePass(payload, t);
          else if (order < transferOrder) this.workerReady(payload, t);
          else if (order < arrivalOrder) this.completeTransfer(payload, t);
          else if (order < scalingOrder) {
            if (payload < 0) {
              this.reachRouter(-payload - 1, t);
            } else {
              this.queuedArrivalEvents--;
              this.arrive(payload, t);
            }
          } else this.tickDue = true;
        }
        // Timeouts after everything else of their timestamp: a request finished at its deadline is finished.
        if (this.nextDeadline() === t) this.expire(t);
        this.driveWorkers(this.front, t);
        if (this.back !== null) this.driveWorkers(this.back, t);
        // Scaling ticks run last, so the policy sees a settled timestamp (aisimulate.md §5.2).
        if (this.tickDue && heap.peekTime() !== t) {
          this.tickDue = false;
          this.tick(t);
          this.driveWorkers(this.front, t);
          if (this.back !== null) this.driveWorkers(this.back, t);
          this.invariants?.afterTick(t);
          // The tick started asynchronous work: return so that `run` awaits it before going on.
          if (this.work !== null) return true;
        }
      } while (heap.peekTime() === t || this.tickDue || this.nextDeadline() === t);
      this.invariants?.afterTimestamp(t);
    }
    return true;
  }

  /** The client sends a request: it reaches the router `requestMs` later (docs/client.md). */
  private arrive(row: number, t: number): void {
    this.collector.onArrival(row, t);
    this.openRequests++;
    this.traffic.numReq++;
    if (this.timeoutMs !== null) this.deadlineRows[this.deadlineTail++] = row;
    if (this.requestMs === 0) {
      this.reachRouter(row, t);
      return;
    }
    // Same phase and order as its arrival; a negative payload tells it from a client send.
    this.heap.push(t + this.requestMs, eventOrder(Phase.Arrival, this.table.session[row]), -row - 1);
  }

  /** The request reaches the router: it is dispatched, or waits for a ready worker. */
  private reachRouter(row: number, t: number): void {
    // Abandoned before it got there (a timeout shorter than request_ms).
    if (this.collector.status[row] !== Terminal.None) return;
    if (this.front.readyCount === 0) {
      // No ready worker (all starting or draining): wait in the router's queue.
      this.pendingArrivals.push(row);
      return;
    }
    this.dispatch(row, t);
  }

  /** Routes an arrived request to a ready worker of the front pool. */
  private dispatch(row: number, t: number): void {
    const collector = this.collector;
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
      if (r === D - 1) this.cancelDeferred(pool, w, t);
      // Capacity may have freed on a decode worker: retry the hand-offs waiting for it.
      if (pool === this.back) this.drainReservations(slot, t);
    }
    this.removeIfDrained(pool, w, t);
  }

  /**
   * A draining worker is removed as soon as it holds nothing: no pass in flight, no queued,
   * running, held (prefill KV awaiting its transfer) or reserved request, and no hand-off
   * waiting for its KV. Called wherever a worker can lose its last piece of work: a pass
   * completion, and the release of a prefill copy after its transfer (or rejection).
   */
  private removeIfDrained(pool: WorkerPool, w: number, t: number): void {
    if (pool.state[w] !== WorkerState.Draining || !this.holdsNothing(pool, w)) return;
    pool.remove(w, t);
    this.record(pool, t, "drain_complete", [[w, "worker_removed"]]);
  }

  private holdsNothing(pool: WorkerPool, w: number): boolean {
    if (!pool.isDrained(w)) return false;
    if (pool !== this.back) return true;
    const D = pool.ranksPerWorker;
    for (let r = 0; r < D; r++) if (this.reservationsWaiting(w * D + r) > 0) return false;
    return true;
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
      if (collector.status[row] !== Terminal.None) {
        // Abandoned while this pass ran: its KV is freed at the pass end (`cancelDeferred`), unless
        // the pass itself ended it here; the client sees nothing of it any more.
        if (kind === Signal.TokenAndComplete || kind === Signal.Complete || kind === Signal.Rejected) {
          placement.onFreed(slot, row, t);
        }
        continue;
      }
      if (kind === Signal.Token) {
        // A token the client would see after its deadline is never seen: the request times out first.
        if (t + this.responseMs <= this.deadlineOf(row)) collector.onToken(row, t + this.responseMs);
        if (collector.tokens[row] === 1) placement.onPrefillCompleted(slot, row, t);
        continue;
      }
      if (kind === Signal.PrefillDone) {
        placement.onPrefillCompleted(slot, row, t);
        this.handOff(row, slot, t);
        continue;
      }
      if (kind === Signal.TokenAndComplete) {
        collector.onToken(row, t + this.responseMs);
        this.finishFromEngine(row, t, Terminal.Completed);
      } else if (kind === Signal.Complete) {
        this.finishFromEngine(row, t, Terminal.Completed);
      } else {
        this.finishFromEngine(row, t, Terminal.Rejected);
      }
      placement.onFreed(slot, row, t);
    }
  }

  /** A prefill worker finished a request: pick its decode worker and reserve KV there. */
  private handOff(row: number, prefillSlot: number, t: number): void {
    this.handoff!.sourceHeld[row] = t;
    this.prefillSlotOf[row] = prefillSlot;
    if (this.back!.readyCount === 0) {
      this.pendingHandoffs.push(row);
      return;
    }
    this.routeHandoff(row, t);
  }

  private routeHandoff(row: number, t: number): void {
    const back = this.back!;
    const handoff = this.handoff!;
    const table = this.table;
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
      this.finishFromEngine(row, t, Terminal.Rejected);
      return;
    }
    // The decode router counts the request from its choice on (the reference's add_request at
    // selection), also while the hand-off waits for KV capacity there: it is in flight on that
    // worker, which keeps it even if the worker starts draining meanwhile.
    back.placement.onDispatched(slot, row, table.blockHashes, offset, count, isl, t, Number.NaN);
    this.handoffSeq[row] = seq;
    const queue = this.reservationQueue(slot);
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
    handoff.destinationReserved[row] = t;
    handoff.decodeReusedTokens[row] = resident;
    const transfer = this.transfer!;
    const tokens = transferTokens(seq.promptLength, resident, back.spec.blockSize, transfer);
    handoff.transferredTokens[row] = tokens;
    this.heap.push(t + transferMs(tokens, transfer), eventOrder(Phase.TransferComplete, row), row);
    return true;
  }

  private reservationQueue(slot: number): SequenceQueue {
    while (this.pendingReservations.length <= slot) this.pendingReservations.push(new SequenceQueue());
    return this.pendingReservations[slot];
  }

  private reservationsWaiting(slot: number): number {
    return slot < this.pendingReservations.length ? this.pendingReservations[slot].length : 0;
  }

  private drainReservations(slot: number, t: number): void {
    const queue = this.reservationQueue(slot);
    while (queue.length > 0 && this.reserve(queue.front(), slot, t)) queue.popFront();
  }

  /** The KV arrived: the decode worker may admit the request; the prefill worker frees its copy. */
  private completeTransfer(row: number, t: number): void {
    const back = this.back!;
    const seq = this.handoffSeq[row];
    if (seq === null) return; // abandoned during its transfer (`cancelHandoff` freed both sides)
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
    const w = front.workerOf(slot);
    front.dirty[w] = 1;
    front.placement.onFreed(slot, row, t);
    this.handoff!.sourceReleased[row] = t;
    // The hand-off may have been the last thing a draining prefill worker held.
    this.removeIfDrained(front, w, t);
  }

  /** The engine side ended a request at `t`: the client learns it `responseMs` later. */
  private finishFromEngine(row: number, t: number, status: number): void {
    const seen = t + this.responseMs;
    const deadline = this.deadlineOf(row);
    // The engine finished, but the answer reaches the client after it gave up.
    if (seen > deadline) this.terminate(row, deadline, Terminal.TimedOut);
    else this.terminate(row, seen, status);
  }

  /** When the client abandons `row` (+∞ without a timeout). */
  private deadlineOf(row: number): number {
    return this.timeoutMs === null ? Number.POSITIVE_INFINITY : this.collector.arrival[row] + this.timeoutMs;
  }

  /** The earliest deadline of a request still open (+∞ when none); drops ended requests from the head. */
  private nextDeadline(): number {
    if (this.timeoutMs === null) return Number.POSITIVE_INFINITY;
    const rows = this.deadlineRows;
    const status = this.collector.status;
    while (this.deadlineHead < this.deadlineTail && status[rows[this.deadlineHead]] !== Terminal.None) {
      this.deadlineHead++;
    }
    return this.deadlineHead < this.deadlineTail
      ? this.collector.arrival[rows[this.deadlineHead]] + this.timeoutMs
      : Number.POSITIVE_INFINITY;
  }

  /** Abandons every open request whose deadline is `t`. */
  private expire(t: number): void {
    while (this.nextDeadline() === t) this.abandon(this.deadlineRows[this.deadlineHead], t);
  }

  /**
   * The client gave up on `row` at `t` (docs/client.md): the request is cancelled wherever it is —
   * on its way to the router, waiting for a worker, queued or running in an engine, held for or
   * during its KV transfer, waiting for decode capacity — its KV and sequence slot are freed, and
   * it ends `TimedOut` (a closed-loop or session's next turn follows as after any other end).
   */
  private abandon(row: number, t: number): void {
    const c = this.collector;
    const handoff = this.handoff;
    if (Number.isNaN(c.dispatched[row])) {
      // Not dispatched: on its way to the router (its event is ignored), or waiting for a ready worker.
      const i = this.pendingArrivals.indexOf(row);
      if (i >= 0) this.pendingArrivals.splice(i, 1);
    } else if (handoff === null || Number.isNaN(handoff.sourceHeld[row])) {
      // In its front engine (aggregated or prefill worker).
      const pool = this.front;
      this.cancelInEngine(pool, c.worker[row] * pool.ranksPerWorker + c.dpRank[row], row, t);
    } else if (!Number.isNaN(handoff.destinationActivated[row])) {
      // Its KV arrived: in its decode engine.
      this.cancelInEngine(this.back!, this.decodeSlotOf[row], row, t);
    } else {
      this.cancelHandoff(row, t);
    }
    this.terminate(row, t, Terminal.TimedOut);
  }

  /** Cancels `row` in the engine at `slot` now, or at the end of the worker's pass in flight. */
  private cancelInEngine(pool: WorkerPool, slot: number, row: number, t: number): void {
    const w = pool.workerOf(slot);
    if (pool.busy[w] === 1) {
      const lists = this.cancelAtPassEnd[pool.id];
      while (lists.length <= w) lists.push([]);
      lists[w].push(row);
      this.cancelsPending++;
      return;
    }
    this.cancelNow(pool, slot, row, t);
  }

  private cancelNow(pool: WorkerPool, slot: number, row: number, t: number): void {
    if (!pool.engines[slot].cancel(row)) return; // its pass ended it meanwhile
    const w = pool.workerOf(slot);
    pool.dirty[w] = 1;
    pool.placement.onFreed(slot, row, t);
    if (pool === this.back) this.drainReservations(slot, t);
    this.removeIfDrained(pool, w, t);
  }

  /** At the end of worker `w`'s pass: the cancellations that waited for it. */
  private cancelDeferred(pool: WorkerPool, w: number, t: number): void {
    const lists = this.cancelAtPassEnd[pool.id];
    if (w >= lists.length || lists[w].length === 0) return;
    const rows = lists[w];
    lists[w] = [];
    this.cancelsPending -= rows.length;
    const c = this.collector;
    for (const row of rows) {
      const slot =
        pool === this.back ? this.decodeSlotOf[row] : c.worker[row] * pool.ranksPerWorker + c.dpRank[row];
      this.cancelNow(pool, slot, row, t);
    }
  }

  /**
   * Disaggregated: `row` finished prefill and its KV is held on its prefill worker while it waits
   * for a decode worker, for decode capacity there, or for its transfer. Drops the decode side's
   * claim (queued hand-off or reserved blocks; a transfer in flight is ignored when it lands) and
   * frees the prefill copy.
   */
  private cancelHandoff(row: number, t: number): void {
    const back = this.back!;
    const seq = this.handoffSeq[row];
    if (seq === null) {
      // No decode worker was ready: it waits in the decode router's queue.
      const i = this.pendingHandoffs.indexOf(row);
      if (i >= 0) this.pendingHandoffs.splice(i, 1);
    } else {
      const slot = this.decodeSlotOf[row];
      this.handoffSeq[row] = null;
      if (Number.isNaN(this.handoff!.destinationReserved[row])) {
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
      back.placement.onFreed(slot, row, t);
      back.dirty[back.workerOf(slot)] = 1;
      this.drainReservations(slot, t);
      this.removeIfDrained(back, back.workerOf(slot), t);
    }
    this.releaseSource(row, t);
  }

  /** A request reached a terminal state (client time `t`): bookkeeping shared by every path. */
  private terminate(row: number, t: number, status: number): void {
    const c = this.collector;
    c.onTerminal(row, t, status);
    this.openRequests--;
    if (status === Terminal.Completed) {
      const w = this.traffic;
      const isl = this.table.inputLength[row];
      const tokens = c.tokens[row];
      w.shapeCount++;
      w.sumIsl += isl;
      w.sumOsl += tokens;
      if (isl > 0) {
        w.hitRateCount++;
        w.sumKvHitRate += c.reusedMax[row] / isl;
      }
    }
    this.plan.onTerminal(row, t, this.scheduleArrival);
  }

  /** A started worker finished its startup delay. */
  private workerReady(payload: number, t: number): void {
    const pool = payload >= POOL_ID_SPAN ? this.back! : this.front;
    const w = payload - pool.id * POOL_ID_SPAN;
    if (pool.state[w] !== WorkerState.Starting) return; // cancelled meanwhile
    pool.markReady(w);
    this.record(pool, t, "startup_complete", [[w, "worker_ready"]]);
    this.releasePending(pool, t);
  }

  /** Requests that waited for a ready worker of `pool` go now. */
  private releasePending(pool: WorkerPool, t: number): void {
    if (pool === this.front) {
      while (this.pendingArrivals.length > 0 && pool.readyCount > 0)
        this.dispatch(this.pendingArrivals.shift()!, t);
    } else {
      while (this.pendingHandoffs.length > 0 && pool.readyCount > 0)
        this.routeHandoff(this.pendingHandoffs.shift()!, t);
    }
  }

  /** Runs one scaling tick and applies its targets (mocker.md §7). */
  private tick(t: number): void {
    const policy = this.scaling!;
    const back = this.back;
    const decodePool = back ?? this.front;
    const window: TrafficWindow = { ...this.traffic, durationS: (t - this.trafficSinceMs) / 1000 };
    const snapshot: TickSnapshot = {
      tickOrdinal: this.tickOrdinal++,
      nowMs: t,
      prefillFpm: back === null ? null : fpmOf(this.front),
      decodeFpm: fpmOf(decodePool),
      prefillTopology: back === null ? null : topologyOf(this.front),
      decodeTopology: topologyOf(decodePool),
      traffic: window,
    };
    this.traffic = emptyTraffic();
    this.trafficSinceMs = t;
    const action = policy.onTick(snapshot);
    const params = action.routerParameters ?? null;
    if (params !== null) for (const pool of this.pools) pool.placement.setCostParameters?.(params);
    this.work = policy.pendingWork?.() ?? null;
    if (back !== null && action.targetPrefill !== null) this.scaleTo(this.front, action.targetPrefill, t);
    if (action.targetDecode !== null) this.scaleTo(decodePool, action.targetDecode, t);
    const more = this.openRequests > 0 || this.queuedArrivalEvents > 0;
    if (more && action.nextTickMs !== null && Number.isFinite(action.nextTickMs) && action.nextTickMs > t) {
      this.checkStall(t);
      if (this.stall !== null) return;
      this.heap.push(action.nextTickMs, eventOrder(Phase.Scaling, 0), 0);
    }
  }

  /**
   * Counts ticks at which only the next tick could change anything while a pool without any
   * worker (ready, starting or draining) holds requests back; after STALL_TICKS of them the run
   * stops (`stalled`), its waiting requests unfinished.
   */
  private checkStall(t: number): void {
    const starved =
      this.heap.size === 0 &&
      this.work === null &&
      this.nextDeadline() === Number.POSITIVE_INFINITY &&
      ((this.front.provisioned === 0 && this.pendingArrivals.length > 0) ||
        (this.back !== null && this.back.provisioned === 0 && this.pendingHandoffs.length > 0));
    if (!starved) {
      this.stallTicks = 0;
      return;
    }
    if (this.stallTicks++ === 0) this.stallSinceMs = t;
    if (this.stallTicks < STALL_TICKS) return;
    const frontStarved = this.front.provisioned === 0 && this.pendingArrivals.length > 0;
    const pool = frontStarved ? this.front : this.back!;
    this.stall = {
      atMs: t,
      sinceMs: this.stallSinceMs,
      pool: pool.role === "aggregated" ? "agg" : pool.role,
      waiting: frontStarved ? this.pendingArrivals.length : this.pendingHandoffs.length,
    };
  }

  /**
   * Brings a pool's non-draining count (ready + starting) to `target`: new workers start (ready
   * after `startup_seconds`, at once when 0); a scale-down cancels starting workers first, highest
   * id first, then drains the highest-id ready workers, which finish their in-flight work.
   */
  private scaleTo(pool: WorkerPool, target: number, t: number): void {
    const current = pool.nonDraining;
    if (target === current) return;
    const transitions: [number, LifecycleTransition][] = [];
    if (target > current) {
      const startupMs = pool.spec.startupSeconds * 1000;
      for (let i = current; i < target; i++) {
        const w = pool.addWorker(startupMs === 0, t);
        if (startupMs === 0) {
          transitions.push([w, "worker_ready"]);
        } else {
          transitions.push([w, "worker_starting"]);
          this.heap.push(
            t + startupMs,
            eventOrder(Phase.WorkerReady, pool.id * POOL_ID_SPAN + w),
            pool.id * POOL_ID_SPAN + w,
          );
        }
      }
      this.record(pool, t, "scale_up", transitions);
      this.releasePending(pool, t);
      return;
    }
    let excess = current - target;
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
      if (this.holdsNothing(pool, w)) {
        pool.remove(w, t);
        transitions.push([w, "worker_removed"]);
      }
    }
    this.record(pool, t, "scale_down", transitions);
  }

  private record(
    pool: WorkerPool,
    t: number,
    cause: LifecycleOperation["cause"],
    transitions: [number, LifecycleTransition][],
  ): void {
    if (this.scaling === null || transitions.length === 0) return;
    this.lifecycle.push({
      at_ms: t,
      pool: pool.role === "aggregated" ? "agg" : pool.role,
      cause,
      transitions: transitions.map(([w, transition]) => ({ worker_id: w, transition, at_ms: t })),
    });
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
    for (const pool of this.pools) pool.accrue(this.now);
    if (this.invariants !== null) {
      const table = this.table;
      const maxModelLen = this.maxModelLen;
      this.invariants.atEnd(this.now, this.finished, this.lifecycle, (row) =>
        cappedOutputTokens(table.inputLength[row], table.outputLength[row], maxModelLen),
      );
    }
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
      lifecycleOperations: this.lifecycle,
      timeline: this.timeline.finish(this.now),
      stalled: this.stall,
    };
  }
}

interface MutableTraffic {
  durationS: number;
  numReq: number;
  shapeCount: number;
  sumIsl: number;
  sumOsl: number;
  hitRateCount: number;
  sumKvHitRate: number;
}

function emptyTraffic(): MutableTraffic {
  return {
    durationS: 0,
    numReq: 0,
    shapeCount: 0,
    sumIsl: 0,
    sumOsl: 0,
    hitRateCount: 0,
    sumKvHitRate: 0,
  };
}

function topologyOf(pool: WorkerPool): PoolTopology {
  return {
    active: pool.idsIn(WorkerState.Ready),
    starting: pool.idsIn(WorkerState.Starting),
    draining: pool.idsIn(WorkerState.Draining),
  };
}

/** The latest forward pass of every rank of every ready worker (an idle heartbeat if none yet). */
function fpmOf(pool: WorkerPool): ForwardPassMetrics[] {
  const out: ForwardPassMetrics[] = [];
  const D = pool.ranksPerWorker;
  for (let w = 0; w < pool.workerCount; w++) {
    if (pool.state[w] !== WorkerState.Ready) continue;
    for (let r = 0; r < D; r++) {
      const s = pool.engines[w * D + r].stats;
      out.push({
        workerId: w,
        dpRank: r,
        wallTimeS: s.wallTimeS,
        numPrefillRequests: s.numPrefillRequests,
        sumPrefillTokens: s.sumPrefillTokens,
        varPrefillLength: varianceOf(s.numPrefillRequests, s.sumPrefillTokens, s.sumPrefillTokensSq),
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
