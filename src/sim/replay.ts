import type { Cluster } from "../cluster/cluster.js";
import { createCluster, deploymentRoles } from "../cluster/create.js";
import { type ClusterHost, POOL_ID_SPAN } from "../cluster/host.js";
import { poolName } from "../cluster/lifecycle.js";
import { DEFAULT_CLIENT, type RunSpec, type WorkerRoleSpec } from "../config/runSpec.js";
import { clampOutputToCache } from "../engine/capacityPolicy.js";
import { cappedOutputTokens, type RunWindow, type WorkerEngine } from "../engine/workerEngine.js";
import { Collector, Terminal } from "../metrics/collector.js";
import { RequestCapture } from "../metrics/requestCapture.js";
import { type LogColumn, RequestLog, type RequestLogOptions } from "../metrics/requestLog.js";
import { TimelineSampler } from "../metrics/timeline.js";
import type { RoleTimings } from "../timing/index.js";
import type { RequestSource, WorkloadInfo } from "../traffic/requestSource.js";
import type { RequestTable } from "../traffic/requests.js";
import { asRequestSource } from "../traffic/tableSource.js";
import type { RowWindow } from "../util/rowWindow.js";
import { type Arrivals, StreamArrivals } from "./arrivals.js";
import { EventHeap, eventOrder, Phase } from "./eventHeap.js";
import { InvariantChecker, InvariantViolation, invariantsEnabledByEnv } from "./invariants.js";
import type { ReplayResult, ReplayStall } from "./result.js";
import { RowQueue } from "./rowQueue.js";
import type { ScalingPolicy } from "./scaling.js";
import { tableArrivals } from "./tableArrivals.js";
import { TickObserver } from "./tickObserver.js";

export type { ReplayResult, ReplayStall } from "./result.js";

export interface ReplayOptions {
  readonly capturePerRequest: boolean;
  /** Drives scaling ticks (the Planner); null for a fixed deployment. */
  readonly scaling?: ScalingPolicy | null;
  /** Check bookkeeping invariants while running (sim/invariants.ts); default: FLEETSIM_CHECK_INVARIANTS. */
  readonly checkInvariants?: boolean;
  /**
   * Step every pass through the event queue (the reference stepper) instead of merging runs of
   * plain decode passes (docs/architecture.md "Decode-run merging"); the results are identical.
   * Default: FLEETSIM_REFERENCE_STEPPER.
   */
  readonly referenceStepper?: boolean;
  /** Where the request log keeps its rows (tests: a small resident size to exercise the spill file). */
  readonly requestLog?: RequestLogOptions;
}

/** Whether replays use the pass-by-pass reference stepper by default (FLEETSIM_REFERENCE_STEPPER=1). */
export function referenceStepperByEnv(): boolean {
  const v = process.env.FLEETSIM_REFERENCE_STEPPER;
  return v !== undefined && v !== "" && v !== "0";
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

/** Whether some request's full context (prompt + output − 1 computed tokens) exceeds a role's KV cache. */
function contextMayOutgrowCache(info: WorkloadInfo, role: WorkerRoleSpec): boolean {
  let longest = Math.max(0, info.longestContext);
  if (role.maxModelLen !== null && longest > role.maxModelLen) longest = role.maxModelLen;
  return Math.ceil(longest / role.blockSize) > role.numGpuBlocks;
}

/**
 * The discrete-event replay (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`, `ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`): the clock, the event heap,
 * the client side (request and response overhead, timeouts, arrivals of later turns) and the
 * scaling ticks, driving a cluster (cluster/: an aggregated pool, or a prefill pool handing
 * requests to a decode pool).
 *
 * At each timestamp, in this fixed order: pass completions (tokens, terminals, prefill hand-offs;
 * a terminal may make the next session turn ready), worker startups, transfer completions (the
 * decode side gets the KV, the prefill side frees it), arrivals (routed into a worker's waiting
 * queue), timeouts, then every idle worker with work starts a pass — front pool first, workers
 * in id order — and last the scaling tick. Passes execute eagerly at their start; their signals
 * are delivered at their end. Ties at one timestamp break by phase and a stable id (pool and
 * worker, request row, session), never by insertion order.
 *
 * Memory (docs/performance.md "Memory"): per-request state lives in the workload's row window
 * (`RowWindow`) and is released in row order once a request is terminal: its columns go to the
 * request log (`RequestLog`), from which the summary is computed at the end. A streamed workload
 * is read as the clock approaches its next unread arrival (`RequestSource.readyUntilMs`): `step`
 * returns to `run`, which awaits `fill` and goes on, so the clock never passes a request that has
 * not been read.
 */
export class Replay implements ClusterHost {
  /** Every event but pass completions. */
  private readonly heap = new EventHeap(4096);
  /**
   * Pass completions, one queue per pool: a run of decode passes may look past the pass ends of
   * pools that cannot change its worker's batch (`runWindow`). Pass completions are the first
   * phase of a timestamp and pool 0's come before pool 1's, as one queue would order them.
   */
  private readonly passHeaps: EventHeap[];
  /** Decode-run merging is on (not the reference stepper). */
  readonly runsEnabled: boolean;
  /**
   * Whether one worker's pass end can only change another worker's batch through events in the
   * queue (no request is made ready by another's end: no sessions' later turns, no closed loop),
   * so that several workers may run ahead of each other (cluster/cluster.ts `drive`).
   */
  readonly runsIndependent: boolean;
  /** The window handed to each run (one object, refilled). */
  private readonly window: RunWindow;
  /** The latest pass end delivered within a run (the run's end time counts it). */
  private runEndMs = 0;
  private readonly cluster: Cluster;
  private readonly plan: Arrivals;
  private readonly source: RequestSource;
  private readonly rows: RowWindow;
  readonly collector: Collector;
  /** Released requests' columns, in row order: what the summary is computed from. */
  readonly requests: RequestLog;
  /** What `--capture-per-request` keeps beyond the log; null without it. */
  private readonly capture: RequestCapture | null;
  private readonly maxModelLen: number | null;
  /** The KV tokens of a worker that clamp every request's output (TRT-LLM no-evict), or null. */
  private readonly outputCacheTokens: number | null;
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
  private readonly deadlineRows = new RowQueue();
  private readonly scaling: ScalingPolicy | null;
  /** Traffic windows and forward-pass snapshots for the scaling policy; null without one. */
  private readonly ticks: TickObserver | null;
  private tickDue = false;
  /** Work the last tick's policy started (a retune sweep): the clock waits for it (`run`). */
  private work: Promise<void> | null = null;
  /** Arrival events in the heap, and arrived requests without a terminal state. */
  private queuedArrivalEvents = 0;
  private openRequests = 0;
  private now = 0;
  private aborted = false;
  /** `step` stopped because rows up to this time must be read first (`run` fills the source); NaN when not. */
  private fillUntilMs = Number.NaN;
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
    workload: RequestTable | RequestSource,
    timings: RoleTimings,
    opts: ReplayOptions,
  ) {
    const source = asRequestSource(workload);
    this.source = source;
    this.rows = source.window;
    const engine = spec.engine;
    const roles = deploymentRoles(engine);
    for (const role of roles) {
      if (source.engineBlockSize !== role.blockSize) {
        throw new Error(
          `internal: request hashes use block size ${source.engineBlockSize}, engine ${role.blockSize}`,
        );
      }
    }
    this.maxTimeMs = spec.stop.maxVirtualTimeMs;
    const client = spec.client ?? DEFAULT_CLIENT;
    this.requestMs = client.requestMs;
    this.responseMs = client.responseMs;
    this.timeoutMs = client.timeoutMs;
    this.maxModelLen = roles[0].maxModelLen;
    // TRT-LLM no-evict engines clamp outputs to their cache when queued (aggregated only).
    const front = roles[0];
    this.outputCacheTokens =
      front.capacityPolicy === "guaranteed_no_evict" ? front.numGpuBlocks * front.blockSize : null;
    this.collector = new Collector(source.window, {
      // Only completed requests may contribute token gaps. Gaps can stream straight into the
      // sketches unless some admitted request may end without completing: cut off by the
      // virtual-time cap, or rejected after its context outgrew the whole KV cache.
      holdGapsUntilTerminal:
        this.maxTimeMs !== null ||
        client.timeoutMs !== null ||
        roles.some((r) => contextMayOutgrowCache(source.info, r)),
      captureHistory: opts.capturePerRequest,
      disaggregated: roles.length > 1,
    });
    this.requests = new RequestLog(opts.requestLog);
    this.capture = opts.capturePerRequest ? new RequestCapture(roles.length > 1) : null;
    this.scaling = opts.scaling ?? null;
    this.ticks = this.scaling === null ? null : new TickObserver();
    const cluster = createCluster(
      { source, collector: this.collector, host: this, recordLifecycle: this.scaling !== null },
      engine,
      timings,
      spec.router,
    );
    this.cluster = cluster;
    this.passHeaps = cluster.pools.map(() => new EventHeap(64));
    this.plan =
      source.table !== null ? tableArrivals(source.table, spec.load) : new StreamArrivals(source.info);
    this.runsEnabled = !(opts.referenceStepper ?? referenceStepperByEnv());
    this.runsIndependent = !this.plan.hasDependentArrivals;
    this.window = {
      limitMs: Number.NEGATIVE_INFINITY,
      capMs: this.maxTimeMs ?? Number.POSITIVE_INFINITY,
      deadlineMs: Number.POSITIVE_INFINITY,
      responseMs: this.responseMs,
    };
    this.scheduleArrival = (row, time) => {
      this.queuedArrivalEvents++;
      this.heap.push(time, eventOrder(Phase.Arrival, source.session(row)), row);
    };
    // The latest open-loop arrival sets the time series' interval (closed loop: 0, coarsened later).
    let horizonMs = 0;
    this.plan.seed((row, time) => {
      if (time > horizonMs) horizonMs = time;
      this.scheduleArrival(row, time);
    });
    if (source.table === null) {
      // A stream schedules each row as it is read; the whole trace's last arrival is known already.
      const speedup = spec.load.type === "trace_timestamps" ? spec.load.speedup : 1;
      const last = source.info.lastFirstTurnMs / speedup;
      if (last > horizonMs) horizonMs = last;
      source.onRead = this.scheduleArrival;
    }
    if (this.maxTimeMs !== null) horizonMs = Math.min(horizonMs, this.maxTimeMs);
    this.timeline = new TimelineSampler(this.cluster.timelineSources(), horizonMs);
    const first = this.scaling?.initialTickMs() ?? null;
    if (first !== null && Number.isFinite(first)) this.heap.push(first, eventOrder(Phase.Scaling, 0), 0);
    this.invariants =
      (opts.checkInvariants ?? invariantsEnabledByEnv())
        ? new InvariantChecker({
            pools: cluster.pools,
            collector: this.collector,
            holdsNothing: (pool, w) => cluster.holdsNothing(pool, w),
            reservedBySlot: (pool) => cluster.reservedBySlot(pool),
            gpuBudget: spec.planner?.maxGpuBudget ?? null,
          })
        : null;
  }

  /** Requests a stop at the next yield point (Ctrl-C). */
  abort(): void {
    this.aborted = true;
    // A retune sweep in flight is stopped too, so the abort lands now, not after the sweep.
    this.scaling?.abort?.();
  }

  /** Runs to the end, yielding to the Node event loop about every 50 ms of host time. */
  async run(): Promise<ReplayResult> {
    try {
      return await this.runSteps();
    } catch (err) {
      // No result will close the log's spill file: close it here.
      this.requests.close();
      throw err;
    } finally {
      this.source.close();
    }
  }

  private async runSteps(): Promise<ReplayResult> {
    const start = performance.now();
    let sliceEnd = start + 50;
    if (this.aborted) throw new ReplayAborted();
    while (this.step(4096)) {
      if (!Number.isNaN(this.fillUntilMs)) {
        // Rows up to the clock's next timestamp must be read before it is processed.
        const until = this.fillUntilMs;
        this.fillUntilMs = Number.NaN;
        await this.source.fill(until);
        if (this.aborted) throw new ReplayAborted();
        continue;
      }
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
      if (!Number.isNaN(this.fillUntilMs)) {
        throw new Error(
          "internal: a streamed workload is read asynchronously; use Replay.run(), not runSync()",
        );
      }
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
  get workers(): readonly WorkerEngine[] {
    return this.cluster.engines;
  }

  /**
   * A request's column as it stands now: from the request log once the row is released, else
   * from the live collector (tests and diagnostics).
   */
  requestValue(column: LogColumn, row: number): number {
    if (row < this.rows.freed) return this.requests.get(column, row);
    if (column === "inputLength") return this.source.inputLength(row);
    const c = this.collector;
    return c[column][row & c.mask];
  }

  /** Virtual time reached so far (progress reporting). */
  get virtualTimeMs(): number {
    return this.now;
  }

  /** Processes up to `maxTimestamps` distinct timestamps; false when the run is over. */
  step(maxTimestamps: number): boolean {
    const heap = this.heap;
    const passHeaps = this.passHeaps;
    const cluster = this.cluster;
    const transferOrder = eventOrder(Phase.TransferComplete, 0);
    const arrivalOrder = eventOrder(Phase.Arrival, 0);
    const scalingOrder = eventOrder(Phase.Scaling, 0);
    for (let k = 0; k < maxTimestamps; k++) {
      // Scaling starved a pool for good (checkStall): the waiting requests stay unfinished.
      if (this.stall !== null) return false;
      const t = Math.min(this.nextEventTime(), this.nextDeadline());
      // An unread row may arrive before t (and is needed only up to the cap): read first.
      const ready = this.source.readyUntilMs;
      if (
        ready <= t &&
        ready <= (this.maxTimeMs ?? Number.POSITIVE_INFINITY) &&
        ready !== Number.POSITIVE_INFINITY
      ) {
        // Only past the arrivals known: a chunk of the trace at a time, not up to t (which may be
        // far ahead, or +∞ with nothing queued), so the rows read ahead stay few.
        this.fillUntilMs = ready;
        return true;
      }
      // With scaling, only ticks and startups may remain once all traffic is served: done then.
      const finished =
        this.scaling !== null &&
        this.openRequests === 0 &&
        this.queuedArrivalEvents === 0 &&
        !cluster.cancelsPending &&
        ready === Number.POSITIVE_INFINITY;
      if (t === Number.POSITIVE_INFINITY || finished) {
        this.checkDrained();
        this.finished = true;
        return false;
      }
      // Soft cap: events at the cap are processed, later ones are not (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`).
      if (this.maxTimeMs !== null && t > this.maxTimeMs) return false;
      if (t < this.now) throw new InvariantViolation("INV-3", `time went backwards (${t} < ${this.now})`);
      // Boundaries up to t see the state before the events at t.
      if (t >= this.timeline.nextBoundaryMs) this.timeline.sampleUntil(t);
      this.now = t;
      do {
        // Pass completions first (their phase is the first), pool by pool; only `drive` adds more.
        for (let q = 0; q < passHeaps.length; q++) {
          const passes = passHeaps[q];
          while (passes.peekTime() === t) {
            const payload = passes.peekPayload();
            passes.pop();
            cluster.completePass(payload, t);
          }
        }
        while (heap.peekTime() === t) {
          const order = heap.peekOrder();
          const payload = heap.peekPayload();
          heap.pop();
          if (order < transferOrder) cluster.workerReady(payload, t);
          else if (order < arrivalOrder) {
            if (payload < 0) cluster.completeHostLoad(-payload - 1, t);
            else cluster.completeTransfer(payload, t);
          } else if (order < scalingOrder) {
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
        cluster.drive(t);
        // Scaling ticks run last, so the policy sees a settled timestamp (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`).
        if (this.tickDue && this.nextEventTime() !== t) {
          this.tickDue = false;
          this.tick(t);
          cluster.drive(t);
          this.invariants?.afterTick(t);
          // The tick started asynchronous work: return so that `run` awaits it before going on.
          if (this.work !== null) return true;
        }
      } while (this.nextEventTime() === t || this.tickDue || this.nextDeadline() === t);
      this.invariants?.afterTimestamp(t);
    }
    return true;
  }

  /** The time of the next queued event (+∞ when none). */
  private nextEventTime(): number {
    let t = this.heap.peekTime();
    const passHeaps = this.passHeaps;
    for (let q = 0; q < passHeaps.length; q++) {
      const p = passHeaps[q].peekTime();
      if (p < t) t = p;
    }
    return t;
  }

  /** Events queued, pass completions included. */
  private get queuedEvents(): number {
    let n = this.heap.size;
    for (const p of this.passHeaps) n += p.size;
    return n;
  }

  // ClusterHost: the cluster's events go into the heap in their phase; its outputs reach the client.

  schedulePassEnd(atMs: number, payload: number): void {
    const pool = payload >= POOL_ID_SPAN ? 1 : 0;
    this.passHeaps[pool].push(atMs, eventOrder(Phase.PassCompletion, payload), payload);
  }

  /**
   * Where a run of plain decode passes of a worker may go (docs/architecture.md "Decode-run
   * merging"): pass ends strictly before the next event that could change the worker's batch —
   * any queued event but the pass completions of pools outside `passPoolMask` (with independent
   * runs; otherwise every pass completion), the next time-series boundary (it samples the state
   * before its events) and the next client deadline — and never when a scaling tick is due at this
   * timestamp (it observes the state first).
   */
  runWindow(passPoolMask: number): RunWindow {
    const w = this.window;
    if (this.tickDue || !this.runsEnabled) {
      w.limitMs = Number.NEGATIVE_INFINITY;
      return w;
    }
    const deadline = this.nextDeadline();
    let limit = Math.min(this.heap.peekTime(), this.timeline.nextBoundaryMs, deadline);
    const passHeaps = this.passHeaps;
    for (let q = 0; q < passHeaps.length; q++) {
      if (this.runsIndependent && (passPoolMask & (1 << q)) === 0) continue;
      const p = passHeaps[q].peekTime();
      if (p < limit) limit = p;
    }
    w.limitMs = limit;
    w.deadlineMs = deadline;
    return w;
  }

  noteRunEnd(t: number): void {
    if (t > this.runEndMs) this.runEndMs = t;
  }

  scheduleWorkerReady(atMs: number, payload: number): void {
    this.heap.push(atMs, eventOrder(Phase.WorkerReady, payload), payload);
  }

  scheduleTransferEnd(atMs: number, row: number): void {
    this.heap.push(atMs, eventOrder(Phase.TransferComplete, row), row);
  }

  /** A host-tier load shares the transfer phase; its payload is −(row + 1) (a row has one at a time). */
  scheduleHostLoadEnd(atMs: number, row: number): void {
    this.heap.push(atMs, eventOrder(Phase.TransferComplete, row), -row - 1);
  }

  onToken(row: number, t: number): void {
    // A token the client would see after its deadline is never seen: the request times out first.
    if (t + this.responseMs <= this.deadlineOf(row)) this.collector.onToken(row, t + this.responseMs);
  }

  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void {
    if (this.timeoutMs === null) this.collector.onTokenRange(rows, from, to, t + this.responseMs);
    else for (let i = from; i < to; i++) this.onToken(rows[i], t);
  }

  onRunTokens(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void {
    // `runWindow` keeps the pass end + response time within every open deadline.
    this.collector.onTokenRun(rows, count, endsMs, passes, this.responseMs);
  }

  onLastToken(row: number, t: number): void {
    this.collector.onToken(row, t + this.responseMs);
    this.onEnded(row, t, Terminal.Completed);
  }

  /** The engine side ended a request at `t`: the client learns it `responseMs` later. */
  onEnded(row: number, t: number, status: number): void {
    const seen = t + this.responseMs;
    const deadline = this.deadlineOf(row);
    // The engine finished, but the answer reaches the client after it gave up.
    if (seen > deadline) this.terminate(row, deadline, Terminal.TimedOut);
    else this.terminate(row, seen, status);
  }

  /** The client sends a request: it reaches the router `requestMs` later (docs/client.md). */
  private arrive(row: number, t: number): void {
    this.collector.onArrival(row, t);
    this.openRequests++;
    this.ticks?.onArrival();
    if (this.timeoutMs !== null) this.deadlineRows.push(row);
    if (this.requestMs === 0) {
      this.reachRouter(row, t);
      return;
    }
    // Same phase and order as its arrival; a negative payload tells it from a client send.
    this.heap.push(t + this.requestMs, eventOrder(Phase.Arrival, this.source.session(row)), -row - 1);
  }

  /** The request reaches the router: it is dispatched, or waits for a ready worker. */
  private reachRouter(row: number, t: number): void {
    // Abandoned before it got there (a timeout shorter than request_ms).
    if (this.collector.isEnded(row)) return;
    this.cluster.route(row, t);
  }

  /** When the client abandons `row` (+∞ without a timeout). */
  private deadlineOf(row: number): number {
    return this.timeoutMs === null
      ? Number.POSITIVE_INFINITY
      : this.collector.arrivalOf(row) + this.timeoutMs;
  }

  /** The earliest deadline of a request still open (+∞ when none); drops ended requests from the head. */
  private nextDeadline(): number {
    if (this.timeoutMs === null) return Number.POSITIVE_INFINITY;
    const rows = this.deadlineRows;
    const c = this.collector;
    while (rows.length > 0 && c.isEnded(rows.front())) rows.shift();
    return rows.length > 0 ? c.arrivalOf(rows.front()) + this.timeoutMs : Number.POSITIVE_INFINITY;
  }

  /**
   * Abandons every open request whose deadline is `t` (docs/client.md): the cluster cancels it
   * wherever it is, and it ends `TimedOut` (a closed-loop or session's next turn follows as
   * after any other end).
   */
  private expire(t: number): void {
    while (this.nextDeadline() === t) {
      const row = this.deadlineRows.front();
      this.cluster.cancel(row, t);
      this.terminate(row, t, Terminal.TimedOut);
    }
  }

  /** A request reached a terminal state (client time `t`): bookkeeping shared by every path. */
  private terminate(row: number, t: number, status: number): void {
    const c = this.collector;
    // A second terminal state is a simulator bug (cheap enough to check on every run).
    if (c.isEnded(row))
      throw new InvariantViolation("INV-1", `request ${row} reached a second terminal state`);
    c.onTerminal(row, t, status);
    this.openRequests--;
    if (status === Terminal.Completed && this.ticks !== null) {
      this.ticks.onCompleted(this.source.inputLength(row), c.tokensOf(row), c.reusedMaxOf(row));
    }
    this.plan.onTerminal(row, t, this.scheduleArrival);
    this.releaseEnded();
  }

  /** Releases the oldest rows while they are terminal: in row order, so the log stays in row order. */
  private releaseEnded(): void {
    const rows = this.rows;
    const c = this.collector;
    while (rows.freed < rows.read && c.status[rows.freed & c.mask] !== Terminal.None)
      this.release(rows.freed);
  }

  /**
   * Copies `row` (the oldest live row) to the request log (and the capture) and frees its state
   * in the collector, the cluster's stores and the workload.
   */
  private release(row: number): void {
    const c = this.collector;
    const source = this.source;
    if (this.invariants !== null && c.statusOf(row) !== Terminal.None) {
      this.invariants.ended(row, this.expectedOutput(row));
    }
    this.requests.append(c, row, source.inputLength(row));
    this.capture?.append(c, row, source);
    c.release(row);
    source.release(row);
    this.rows.freed = row + 1;
  }

  /** Runs one scaling tick and applies its targets (`ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`). */
  private tick(t: number): void {
    const policy = this.scaling!;
    const cluster = this.cluster;
    const action = policy.onTick(this.ticks!.snapshot(cluster, t));
    const params = action.routerParameters ?? null;
    if (params !== null) cluster.setRouterParameters(params);
    this.work = policy.pendingWork?.() ?? null;
    cluster.applyTargets(action.targetPrefill, action.targetDecode, t);
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
      this.queuedEvents === 0 && this.work === null && this.nextDeadline() === Number.POSITIVE_INFINITY
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

  /** With no event left, every arrived request must have ended: anything else is a simulator bug. */
  private checkDrained(): void {
    const open = this.openRequests;
    if (open > 0) throw new Error(`internal: the replay reached a dead end with ${open} requests unfinished`);
  }

  /** The output tokens a completed request must have got (invariant INV-7). */
  private expectedOutput(row: number): number {
    const source = this.source;
    const isl = source.inputLength(row);
    const out = cappedOutputTokens(isl, source.outputLength(row), this.maxModelLen);
    const cache = this.outputCacheTokens;
    return cache === null ? out : clampOutputToCache(out, isl, cache, 1);
  }

  private result(wallTimeMs: number): ReplayResult {
    const cluster = this.cluster;
    // Pass ends delivered within runs are timestamps the replay processed, as in pass-by-pass stepping.
    if (this.runEndMs > this.now) this.now = this.runEndMs;
    cluster.accrue(this.now);
    const lifecycle = cluster.lifecycle.operations;
    if (this.invariants !== null) {
      this.invariants.atEnd(this.now, this.finished, lifecycle, (row) => this.expectedOutput(row));
    }
    // Rows still live (never arrived, or cut off by the time cap) go to the log too, in row order.
    const rows = this.rows;
    while (rows.freed < rows.read) this.release(rows.freed);
    let preemptions = 0;
    for (const e of cluster.engines) preemptions += e.preemptions;
    const prefill = cluster.prefillPool;
    const decode = cluster.decodePool;
    return {
      collector: this.collector,
      requests: this.requests,
      capture: this.capture,
      workload: this.source.info,
      peakLiveRequests: rows.peakLive,
      endTimeMs: this.now,
      prefillWorkerSeconds: prefill === null ? 0 : prefill.workerSeconds,
      decodeWorkerSeconds: decode.workerSeconds,
      prefillGpusPerWorker: prefill === null ? 0 : prefill.spec.gpusPerWorker,
      decodeGpusPerWorker: decode.spec.gpusPerWorker,
      wallTimeMs,
      preemptions,
      committedPrefillTokens: cluster.prefillTokensComputed,
      passes: cluster.passes,
      passesInRuns: cluster.passesInRuns,
      speculation: (decode.spec.speculation ?? null) === null ? null : { ...cluster.speculation },
      disaggregated: prefill !== null,
      lifecycleOperations: lifecycle,
      timeline: this.timeline.finish(this.now),
      stalled: this.stall,
      kvOffload: cluster.front.hostOffloadReport(),
      g3Offload: cluster.front.diskOffloadReport(this.now),
    };
  }
}
