import type { Cluster } from "../cluster/cluster.js";
import { createCluster, deploymentRoles } from "../cluster/create.js";
import type { ClusterHost } from "../cluster/host.js";
import { DEFAULT_CLIENT, type RunSpec } from "../config/runSpec.js";
import { clampOutputToCache } from "../engine/capacityPolicy.js";
import { cappedOutputTokens, type RunWindow, type WorkerEngine } from "../engine/workerEngine.js";
import type { Collector } from "../metrics/collector.js";
import type { LogColumn, RequestLog } from "../metrics/requestLog.js";
import { TimelineSampler } from "../metrics/timeline.js";
import type { RoleTimings } from "../timing/index.js";
import type { RequestSource } from "../traffic/requestSource.js";
import type { RequestTable } from "../traffic/requests.js";
import { asRequestSource } from "../traffic/tableSource.js";
import { DecodeRunWindow } from "./decodeRunWindow.js";
import { EventQueue } from "./eventQueue.js";
import { decodeKind, decodePayload, EventKind } from "./events.js";
import { type InvariantChecker, InvariantViolation } from "./invariants.js";
import {
  type ReplayOptions,
  referenceStepperByEnv,
  type Stepper,
  stepToEnd,
  stepToEndSync,
} from "./replayRun.js";
import {
  arrivalsOf,
  checkBlockSizes,
  createCollector,
  createInvariantChecker,
  outputCacheTokens,
  seedArrivals,
} from "./replayWiring.js";
import { RequestLifecycle } from "./requestLifecycle.js";
import { type ReplayResult, replayResult } from "./result.js";
import { ScalingTicks } from "./scalingTicks.js";
import { TickObserver } from "./tickObserver.js";

export { ReplayAborted, type ReplayOptions, referenceStepperByEnv } from "./replayRun.js";
export type { ReplayResult, ReplayStall } from "./result.js";
export { STALL_TICKS } from "./scalingTicks.js";

/**
 * The discrete-event replay (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`, `ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`): the clock, the event heap,
 * the client side (request and response overhead, timeouts, arrivals of later turns:
 * sim/requestLifecycle.ts) and the scaling ticks (sim/scalingTicks.ts), driving a cluster
 * (cluster/: an aggregated pool, or a prefill pool handing requests to a decode pool).
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
  private readonly events: EventQueue;
  /** Decode-run merging is on (not the reference stepper). */
  readonly runsEnabled: boolean;
  /**
   * Whether one worker's pass end can only change another worker's batch through events in the
   * queue (no request is made ready by another's end: no sessions' later turns, no closed loop),
   * so that several workers may run ahead of each other (cluster/cluster.ts `drive`).
   */
  readonly runsIndependent: boolean;
  /** Where each run of decode passes may go. */
  private readonly runs: DecodeRunWindow;
  private readonly cluster: Cluster;
  private readonly source: RequestSource;
  readonly collector: Collector;
  /** Released requests' columns, in row order: what the summary is computed from. */
  readonly requests: RequestLog;
  /** Arrivals, client overhead, timeouts and the release of terminal requests. */
  private readonly lifecycle: RequestLifecycle;
  private readonly maxModelLen: number | null;
  /** The KV tokens of a worker that clamp every request's output (TRT-LLM no-evict), or null. */
  private readonly outputCacheTokens: number | null;
  private readonly maxTimeMs: number | null;
  /** The scaling policy's ticks; null for a fixed deployment. */
  private readonly scaling: ScalingTicks | null;
  /** A scaling tick is due once everything else of this timestamp has happened. */
  private tickDue = false;
  private now = 0;
  private aborted = false;
  /** `step` stopped because rows up to this time must be read first (`run` fills the source); NaN when not. */
  private fillUntilMs = Number.NaN;
  /** Samples worker state at bucket boundaries, lazily from `step` (no events of its own). */
  private readonly timeline: TimelineSampler;
  /** Bookkeeping checks (tests); null in production runs, so the hot loop pays one null test. */
  private readonly invariants: InvariantChecker | null;
  /** Whether the run ended by running out of work (not by the virtual-time cap). */
  private finished = false;

  constructor(
    spec: RunSpec,
    workload: RequestTable | RequestSource,
    timings: RoleTimings,
    opts: ReplayOptions,
  ) {
    const source = asRequestSource(workload);
    this.source = source;
    const roles = deploymentRoles(spec.engine);
    checkBlockSizes(source, roles);
    this.maxTimeMs = spec.stop.maxVirtualTimeMs;
    const client = spec.client ?? DEFAULT_CLIENT;
    this.maxModelLen = roles[0].maxModelLen;
    this.outputCacheTokens = outputCacheTokens(roles[0]);
    const collector = createCollector(source, roles, spec, client, opts.capturePerRequest);
    this.collector = collector;
    const policy = opts.scaling ?? null;
    const ticks = policy === null ? null : new TickObserver();
    const events = new EventQueue(roles.length);
    this.events = events;
    const cluster = createCluster(
      { source, collector, host: this, recordLifecycle: policy !== null },
      spec.engine,
      timings,
      spec.router,
    );
    this.cluster = cluster;
    const plan = arrivalsOf(source, spec);
    this.runsEnabled = !(opts.referenceStepper ?? referenceStepperByEnv());
    this.runsIndependent = !plan.hasDependentArrivals;
    const invariants = createInvariantChecker(cluster, collector, spec, opts.checkInvariants);
    this.invariants = invariants;
    const checkEnded =
      invariants === null ? null : (row: number) => invariants.ended(row, this.expectedOutput(row));
    const parts = { source, collector, plan, events, cluster, client, ticks };
    const lifecycle = new RequestLifecycle(parts, opts, checkEnded);
    this.lifecycle = lifecycle;
    this.requests = lifecycle.requests;
    const horizonMs = seedArrivals(plan, source, spec, lifecycle.scheduleArrival);
    this.timeline = new TimelineSampler(cluster.timelineSources(), horizonMs);
    const capMs = this.maxTimeMs ?? Number.POSITIVE_INFINITY;
    const { runsEnabled, runsIndependent } = this;
    this.runs = new DecodeRunWindow(events, lifecycle, this.timeline, runsEnabled, runsIndependent, capMs);
    this.scaling = policy === null ? null : new ScalingTicks(policy, ticks!, cluster, events, this.lifecycle);
    this.scaling?.scheduleFirst();
  }

  /** Requests a stop at the next yield point (Ctrl-C). */
  abort(): void {
    this.aborted = true;
    this.scaling?.abort();
  }

  /** Runs to the end, yielding to the Node event loop about every 50 ms of host time. */
  async run(): Promise<ReplayResult> {
    try {
      const start = performance.now();
      await stepToEnd(this.stepper(), this.source);
      return this.result(performance.now() - start);
    } catch (err) {
      // No result will close the log's spill file: close it here.
      this.requests.close();
      throw err;
    } finally {
      this.source.close();
    }
  }

  /** Synchronous run (tests, benchmarks). */
  runSync(): ReplayResult {
    const start = performance.now();
    stepToEndSync(this.stepper());
    return this.result(performance.now() - start);
  }

  /** What the run drivers (sim/replayRun.ts) see of the replay; one per run. */
  private stepper(): Stepper {
    return {
      step: (maxTimestamps) => this.step(maxTimestamps),
      takeFillUntil: () => {
        const until = this.fillUntilMs;
        this.fillUntilMs = Number.NaN;
        return until;
      },
      takeWork: () => (this.scaling === null ? null : this.scaling.takeWork()),
      aborted: () => this.aborted,
    };
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
    if (row < this.source.window.freed) return this.requests.get(column, row);
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
    const life = this.lifecycle;
    for (let k = 0; k < maxTimestamps; k++) {
      // Scaling starved a pool for good (ScalingTicks.checkStall): the waiting requests stay unfinished.
      if (this.scaling !== null && this.scaling.stall !== null) return false;
      const t = Math.min(this.events.nextTime(), life.nextDeadline());
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
        !life.hasTraffic() &&
        !this.cluster.cancelsPending &&
        ready === Number.POSITIVE_INFINITY;
      if (t === Number.POSITIVE_INFINITY || finished) {
        // With no event left, every arrived request must have ended: anything else is a simulator bug.
        const open = life.openRequests;
        if (open > 0)
          throw new Error(`internal: the replay reached a dead end with ${open} requests unfinished`);
        this.finished = true;
        return false;
      }
      // Soft cap: events at the cap are processed, later ones are not (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`).
      if (this.maxTimeMs !== null && t > this.maxTimeMs) return false;
      if (t < this.now) throw new InvariantViolation("INV-3", `time went backwards (${t} < ${this.now})`);
      // Boundaries up to t see the state before the events at t.
      if (t >= this.timeline.nextBoundaryMs) this.timeline.sampleUntil(t);
      this.now = t;
      // The tick started asynchronous work: return so that `run` awaits it before going on.
      if (this.processTimestamp(t)) return true;
      this.invariants?.afterTimestamp(t);
    }
    return true;
  }

  /** Every effect at timestamp `t`, in phase order; true when a scaling tick started asynchronous work. */
  private processTimestamp(t: number): boolean {
    const cluster = this.cluster;
    const life = this.lifecycle;
    const events = this.events;
    const passHeaps = events.passHeaps;
    do {
      // Pass completions first (their phase is the first), pool by pool; only `drive` adds more.
      for (let q = 0; q < passHeaps.length; q++) {
        const passes = passHeaps[q];
        while (passes.peekTime() === t) {
          const workerKey = decodePayload(EventKind.PassEnd, passes.peekPayload());
          passes.pop();
          cluster.completePass(workerKey, t);
        }
      }
      if (events.heap.peekTime() === t) this.deliverEvents(t);
      // Timeouts after everything else of their timestamp: a request finished at its deadline is finished.
      if (life.nextDeadline() === t) life.expire(t);
      const tickNow = this.tickDue && events.nextTime() !== t;
      if (!tickNow) life.routeArrived(t);
      cluster.drive(t);
      // Scaling ticks run last, so the policy sees a settled timestamp (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`).
      if (tickNow) {
        this.tickDue = false;
        const scaling = this.scaling!;
        scaling.tick(t);
        life.routeArrived(t);
        cluster.drive(t);
        this.invariants?.afterTick(t);
        if (scaling.work !== null) return true;
      }
    } while (events.nextTime() === t || this.tickDue || life.nextDeadline() === t);
    return false;
  }

  /** Delivers the events at `t` other than pass completions, in phase order, each to what it concerns. */
  private deliverEvents(t: number): void {
    const cluster = this.cluster;
    const heap = this.events.heap;
    while (heap.peekTime() === t) {
      const kind = decodeKind(heap.peekOrder(), heap.peekPayload());
      const id = decodePayload(kind, heap.peekPayload());
      heap.pop();
      switch (kind) {
        case EventKind.WorkerReady:
          cluster.workerReady(id, t);
          break;
        case EventKind.TransferEnd:
          cluster.completeTransfer(id, t);
          break;
        case EventKind.HostLoadEnd:
          cluster.completeHostLoad(id, t);
          break;
        case EventKind.ClientSend:
          this.lifecycle.send(id, t);
          break;
        case EventKind.RouterReach:
          this.lifecycle.reachRouter(id, t);
          break;
        case EventKind.ScalingTick:
          this.tickDue = true;
      }
    }
  }

  // ClusterHost: the cluster's events go into the queue in their phase; its outputs reach the client.

  schedulePassEnd(atMs: number, workerKey: number): void {
    this.events.pushPassEnd(atMs, workerKey);
  }

  /** Where a run of plain decode passes may go now (sim/decodeRunWindow.ts). */
  runWindow(passPoolMask: number): RunWindow {
    return this.runs.next(passPoolMask, this.tickDue);
  }

  noteRunEnd(t: number): void {
    this.runs.noteEnd(t);
  }

  scheduleWorkerReady(atMs: number, workerKey: number): void {
    this.events.pushWorkerReady(atMs, workerKey);
  }

  scheduleTransferEnd(atMs: number, row: number): void {
    this.events.pushTransferEnd(atMs, row);
  }

  scheduleHostLoadEnd(atMs: number, row: number): void {
    this.events.pushHostLoadEnd(atMs, row);
  }

  onToken(row: number, t: number): void {
    this.lifecycle.onToken(row, t);
  }

  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void {
    this.lifecycle.onTokenRange(rows, from, to, t);
  }

  onRunTokens(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void {
    this.lifecycle.onRunTokens(rows, count, endsMs, passes);
  }

  onLastToken(row: number, t: number): void {
    this.lifecycle.onLastToken(row, t);
  }

  onEnded(row: number, t: number, status: number): void {
    this.lifecycle.onEnded(row, t, status);
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
    if (this.runs.endMs > this.now) this.now = this.runs.endMs;
    cluster.accrue(this.now);
    if (this.invariants !== null) {
      const lifecycle = cluster.lifecycle.operations;
      this.invariants.atEnd(this.now, this.finished, lifecycle, (row) => this.expectedOutput(row));
    }
    // Rows still live (never arrived, or cut off by the time cap) go to the log too, in row order.
    this.lifecycle.releaseAll();
    return replayResult(cluster, {
      collector: this.collector,
      requests: this.requests,
      capture: this.lifecycle.capture,
      workload: this.source.info,
      peakLiveRequests: this.source.window.peakLive,
      endTimeMs: this.now,
      wallTimeMs,
      timeline: this.timeline.finish(this.now),
      stalled: this.scaling === null ? null : this.scaling.stall,
    });
  }
}
