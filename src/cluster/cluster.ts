import type { PassStats } from "../engine/passStats.js";
import type { Sequence } from "../engine/sequence.js";
import { makeSequence, type PlainPassSink, Signal, type WorkerEngine } from "../engine/workerEngine.js";
import { type Collector, Terminal } from "../metrics/collector.js";
import type { SampledPoolSource } from "../metrics/timeline.js";
import type { RouterCostParameters } from "../router/placement.js";
import type { RequestSource } from "../traffic/requestSource.js";
import { type ClusterHost, poolOfWorkerKey, workerKey, workerOfWorkerKey } from "./host.js";
import { type DrainRule, LifecycleLog, scaleDown, scaleUp } from "./lifecycle.js";
import { type WorkerPool, WorkerState } from "./workerPool.js";

/** What every topology is built from. */
export interface ClusterContext {
  readonly source: RequestSource;
  readonly collector: Collector;
  readonly host: ClusterHost;
  /** Keep lifecycle records (a scaling policy drives the run). */
  readonly recordLifecycle: boolean;
}

/**
 * The workers of a deployment and what happens between them (`ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`, `ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs`): the pools,
 * routing into them, passes, the worker lifecycle, and cancellation. A topology (aggregated,
 * or prefill handing off to decode: `AggregatedCluster`, `DisaggregatedCluster`) is one
 * subclass; the shared path calls its hooks instead of asking which mode it runs in.
 *
 * Requests reach the *front* pool (aggregated or prefill). Workers start passes in pool order,
 * then worker-id order. Events the cluster needs (pass ends, worker startups, KV transfers) go
 * through the host, which owns the clock and orders them.
 */
export abstract class Cluster implements DrainRule, PlainPassSink {
  /** The pool requests arrive at: aggregated, or prefill. */
  readonly front: WorkerPool;
  /** Every pool, front first; a pool's index is its id. */
  readonly pools: readonly WorkerPool[];
  /** The pool the Planner's prefill target scales; null without a prefill stage. */
  abstract readonly prefillPool: WorkerPool | null;
  /** The pool the Planner's decode target scales (the aggregated pool when there is one). */
  abstract readonly decodePool: WorkerPool;
  readonly lifecycle: LifecycleLog;
  /** Worker passes started over the run. */
  passes = 0;
  /**
   * Prompt (and recompute) tokens the passes computed, counted as each pass starts: what the
   * reference reports as `committed_prefill_tokens` (input less the prefix-cache hits, plus what
   * preemption makes it compute again).
   */
  prefillTokensComputed = 0;
  /** Of `passes`, those whose ends were delivered within runs (`runDecodes`). */
  passesInRuns = 0;
  /**
   * Speculative decoding over the run (docs/speculation.md), counted at pass ends: sequence
   * passes that verified drafts, the drafts they verified, and the tokens they emitted.
   */
  readonly speculation = { drafts: 0, draftTokens: 0, tokens: 0 };
  /** `speculation.drafts` and `.tokens` since the Planner's last traffic window (`takeAcceptSample`). */
  private windowDrafts = 0;
  private windowTokens = 0;
  /**
   * The front router's prefix overlap since the Planner's last traffic window
   * (`takeRouterHitSample`): the sum of each KV-routed admission's `overlap / prompt blocks`, and
   * their count.
   */
  private windowHitRateSum = 0;
  private windowHitRateCount = 0;
  protected readonly source: RequestSource;
  protected readonly collector: Collector;
  protected readonly host: ClusterHost;
  protected readonly maxModelLen: number | null;
  /** Requests that found no ready worker in the front pool, FIFO (the router's pending queue). */
  protected readonly pendingArrivals: number[] = [];
  /**
   * Output tokens a front-pool engine produces at most: all of them, or the one token a prefill
   * worker computes before its hand-off (the decode worker does the rest).
   */
  private readonly frontOutputCap: number;
  /**
   * Per pool, per worker: requests abandoned while the worker's pass was in flight, cancelled at
   * its end, as (row, engine slot) pairs — the slot is kept because the request's own state may be
   * released before the pass ends.
   */
  private readonly cancelAtPassEnd: number[][][];
  /** Cancellations waiting in `cancelAtPassEnd`: the run is not over while an engine still holds one. */
  private deferredCancels = 0;
  /**
   * Workers (their keys, `workerKey(pool id, worker)`) whose next pass is a plain decode pass: `drive`
   * gives them their runs after every other worker started its pass.
   */
  private readonly runCandidates: number[] = [];

  protected constructor(ctx: ClusterContext, pools: readonly WorkerPool[], frontOutputCap: number) {
    this.source = ctx.source;
    this.collector = ctx.collector;
    this.host = ctx.host;
    this.lifecycle = new LifecycleLog(ctx.recordLifecycle);
    this.pools = pools;
    this.front = pools[0];
    this.maxModelLen = this.front.spec.maxModelLen;
    this.frontOutputCap = frontOutputCap;
    this.cancelAtPassEnd = pools.map(() => []);
  }

  /**
   * Pools whose pass ends can change the batch of a worker of `pool` (bit per pool id): a run of
   * its decode passes stops before the next of them (disaggregated: prefill ends reserve KV on
   * decode workers). None by default.
   */
  protected runBlockingPools(_pool: WorkerPool): number {
    return 0;
  }

  /** Whether worker `w` of `pool` may advance through a run now (disaggregated: no hand-off waits for its capacity). */
  protected runAllowed(_pool: WorkerPool, _w: number): boolean {
    return true;
  }

  /** A pass on a slot of `pool` ended or a request left it: capacity there may have freed. */
  protected abstract slotFreed(pool: WorkerPool, slot: number, t: number): void;

  /** An engine of the front pool finished the prefill of `row` on `slot` (disaggregated only). */
  protected abstract prefillDone(row: number, slot: number, t: number): void;

  /** The KV transfer of `row` landed (disaggregated only). */
  abstract completeTransfer(row: number, t: number): void;

  /**
   * The host-tier KV load of `row` landed (docs/offload.md; front pool only: the aggregated or
   * prefill workers admit from their queue). A load cancelled meanwhile is ignored.
   */
  completeHostLoad(row: number, _t: number): void {
    this.front.completeHostLoad(row);
  }

  /**
   * Cancels `row` if it is past its front engine (held for, during or after its hand-off);
   * false when it is still in its front engine.
   */
  protected abstract cancelPastFront(row: number, t: number): boolean;

  /** Applies the scaling policy's targets (null = unchanged), prefill before decode. */
  abstract applyTargets(targetPrefill: number | null, targetDecode: number | null, t: number): void;

  /** Per slot of `pool`: the hand-offs reserved there whose KV transfer is in flight (invariant checks). */
  reservedBySlot(_pool: WorkerPool): Sequence[][] {
    return [];
  }

  /** What the time series samples: every pool, with requests waiting for a slot outside its engines. */
  timelineSources(): SampledPoolSource[] {
    return this.pools.map((pool) => ({ pool, extraWaiting: null }));
  }

  /**
   * A pool without any worker (ready, starting or draining) while requests wait for it, front
   * pool first; null when none is starved.
   */
  starvedPool(): WorkerPool | null {
    return this.front.provisioned === 0 && this.pendingArrivals.length > 0 ? this.front : null;
  }

  /** Requests waiting for a ready worker of `pool` outside its engines. */
  waitingFor(pool: WorkerPool): number {
    return pool === this.front ? this.pendingArrivals.length : 0;
  }

  /** Whether a cancellation still waits for a pass in flight. */
  get cancelsPending(): boolean {
    return this.deferredCancels > 0;
  }

  /** Every attention-DP rank's engine of every pool (read-only use: invariant checks and diagnostics). */
  get engines(): readonly WorkerEngine[] {
    return this.pools.length === 1 ? this.front.engines : this.pools.flatMap((p) => p.engines);
  }

  /** Patches the cost parameters of every pool's router (retune's decision tick). */
  setRouterParameters(params: RouterCostParameters): void {
    for (const pool of this.pools) pool.kvRouting?.setCostParameters(params);
  }

  /** Adds every pool's worker-seconds up to `nowMs` (the end of the run). */
  accrue(nowMs: number): void {
    for (const pool of this.pools) pool.accrue(nowMs);
  }

  /**
   * Whether the requests that reach the router at a timestamp are routed after that timestamp's
   * scaling tick (a worker the tick adds with no start-up time then takes its share of them);
   * otherwise as they arrive, before the tick.
   */
  get routesAfterTick(): boolean {
    return false;
  }

  /** The request reaches the router: it is dispatched, or waits for a ready worker. */
  route(row: number, t: number): void {
    if (this.front.readyCount === 0) {
      // No ready worker (all starting or draining): wait in the router's queue.
      this.pendingArrivals.push(row);
      return;
    }
    this.dispatch(row, t);
  }

  /** Routes an arrived request to a ready worker of the front pool. */
  private dispatch(row: number, t: number): void {
    const source = this.source;
    const pool = this.front;
    const slot = pool.chooseSlot(source, row, t);
    const overlapTokens = pool.lastOverlapTokens();
    const w = pool.workerOf(slot);
    this.collector.onDispatch(row, t, w, pool.rankOf(slot), overlapTokens);
    const isl = source.inputLength(row);
    const routing = pool.kvRouting;
    if (routing !== null) {
      this.noteRouterHit(pool.lastOverlapBlocks(), Math.ceil(isl / pool.spec.blockSize));
      const predicted = routing.wantsPrefillPrediction
        ? pool.timing.prefillMs(1, isl, Math.min(overlapTokens, isl))
        : Number.NaN;
      pool.noteDispatched(source, row, slot, t, predicted);
    }
    const output = Math.min(this.frontOutputCap, source.outputLength(row));
    const hashes = source.hashes(row);
    const sequence = makeSequence(
      row,
      isl,
      output,
      hashes,
      source.hashStart(row),
      source.hashCount(row),
      this.maxModelLen,
      source.ownerOnlyFrom(row),
      source.hashedCount(row),
      source.hashCompleter,
    );
    pool.engines[slot].enqueue(sequence);
    pool.dirty[w] = 1;
  }

  /** Builds the engine-side state of request `row` with its full output (decode side). */
  protected sequenceOf(row: number): Sequence {
    const source = this.source;
    return makeSequence(
      row,
      source.inputLength(row),
      source.outputLength(row),
      source.hashes(row),
      source.hashStart(row),
      source.hashCount(row),
      this.maxModelLen,
      source.ownerOnlyFrom(row),
      source.hashedCount(row),
      source.hashCompleter,
    );
  }

  /**
   * Starts a pass on every idle worker with work, pool by pool, in worker-id order. With
   * attention DP every rank with work forms its own batch at the same time and the worker's pass
   * ends when the slowest rank does (ranks without work wait at the barrier; `ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`
   * step 5).
   */
  drive(t: number): void {
    const pools = this.pools;
    for (let p = 0; p < pools.length; p++) this.driveWorkers(pools[p], t);
    const candidates = this.runCandidates;
    for (let i = 0; i < candidates.length; i++) this.runDecodes(candidates[i], t);
    // Most timestamps have none: skip the length setter's builtin call then.
    if (candidates.length !== 0) candidates.length = 0;
  }

  /**
   * Decode-run merging (docs/architecture.md "Decode-run merging"): worker `payload`'s next pass
   * is a plain decode pass, which touches nothing but its own engine and its requests' columns;
   * it runs through the plain passes that end inside the host's window — each pass end is what
   * `completePass` would do for it (its tokens) followed by the next pass — then starts the next
   * pass through `startPass` and queues its end as usual.
   */
  private runDecodes(payload: number, t: number): void {
    const pool = this.poolOf(payload);
    const w = workerOfWorkerKey(payload);
    const engine = pool.engines[w];
    const window = this.host.runWindow(this.runBlockingPools(pool));
    let start = t;
    if (window.limitMs > t) {
      const n = engine.runPlainDecodes(t, window, this);
      if (n > 0) {
        this.passes += n;
        this.passesInRuns += n;
        start = engine.lastPassEnd;
        this.host.noteRunEnd(start);
      }
    }
    const duration = engine.startPass(start);
    if (!engine.lastPassProgressed) throw new Error("internal: a plain decode pass made no progress");
    pool.busy[w] = 1;
    pool.passEndMs[w] = start + duration;
    this.passes++;
    this.host.schedulePassEnd(start + duration, payload);
  }

  /** A run's passes ended at `endsMs`: their tokens, as `deliverSignals` hands them over. */
  onPlainRun(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void {
    this.host.onRunTokens(rows, count, endsMs, passes);
  }

  private driveWorkers(pool: WorkerPool, t: number): void {
    const engines = pool.engines;
    const D = pool.ranksPerWorker;
    const dirty = pool.dirty;
    const busy = pool.busy;
    const runs = D === 1 && this.host.runsEnabled;
    for (let w = 0; w < pool.workerCount; w++) {
      if (dirty[w] === 0 || busy[w] === 1) continue;
      dirty[w] = 0;
      if (
        runs &&
        pool.state[w] === WorkerState.Ready &&
        engines[w].canRunPlainDecodes() &&
        this.runAllowed(pool, w)
      ) {
        // Unless runs are independent, only the last such worker runs ahead: the others' plain
        // passes go into the queue, where its window sees them.
        const candidates = this.runCandidates;
        if (!this.host.runsIndependent && candidates.length > 0)
          this.startQueuedPlainPass(candidates.pop()!, t);
        candidates.push(workerKey(pool.id, w));
        continue;
      }
      let progressed = false;
      let prefilled = false;
      let duration = 0;
      const deferInterval = pool.spec.prefillDecodeInterval ?? 0;
      const admits = deferInterval > 0 ? this.prefillNotDeferred(pool, w) : this.admitsWaiting(pool, w);
      for (let r = 0; r < D; r++) {
        const engine = engines[w * D + r];
        if (!engine.hasWork()) continue;
        engine.admitsWaiting = admits;
        const d = engine.startPass(t);
        if (!engine.lastPassProgressed) continue;
        progressed = true;
        this.prefillTokensComputed += engine.stats.sumPrefillTokens;
        if (deferInterval > 0 && engine.stats.numPrefillRequests > 0) prefilled = true;
        if (d > duration) duration = d;
      }
      // Nothing could run (e.g. the waiting heads do not fit yet): stay idle until new work.
      if (!progressed) continue;
      // SGLang's `_arm_prefill_decode_interval`: any rank's prefill (the flag is synchronized
      // across attention-DP ranks) arms the next N passes of the whole worker.
      if (prefilled) pool.prefillDeferrals[w] = deferInterval;
      busy[w] = 1;
      pool.passEndMs[w] = t + duration;
      pool.passesRun[w]++;
      this.passes++;
      this.host.schedulePassEnd(t + duration, workerKey(pool.id, w));
    }
  }

  /**
   * `prefill_schedule_interval` N under attention DP (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`: "vLLM attn-DP only: admit
   * prefill every N-th pass"): the worker's ranks admit waiting requests together on every N-th
   * pass, so one rank's new prefill does not hold every other rank's decode at the barrier pass
   * after pass. A worker with nothing running admits at once: there is no decode to protect, and
   * waiting for a pass that never comes would stall it.
   */
  private admitsWaiting(pool: WorkerPool, w: number): boolean {
    const interval = pool.spec.prefillScheduleInterval ?? 1;
    const D = pool.ranksPerWorker;
    if (interval <= 1 || D === 1 || pool.passesRun[w] % interval === 0) return true;
    const engines = pool.engines;
    for (let r = 0; r < D; r++) if (engines[w * D + r].runningCount > 0) return false;
    return true;
  }

  /**
   * `prefill_decode_interval` N (SGLang's `--prefill-decode-interval`, `_should_defer_prefill`):
   * after a pass that prefilled, the worker's next N passes form no prefill batch — the queue
   * waits, partial chunks included, and the running requests decode — one pass counted off each
   * time. A worker with nothing running prefills at once: SGLang's idle scheduler loop counts the
   * passes off in no time, and waiting here for a pass that never comes would stall the worker.
   */
  private prefillNotDeferred(pool: WorkerPool, w: number): boolean {
    const left = pool.prefillDeferrals[w];
    if (left === 0) return true;
    const D = pool.ranksPerWorker;
    const engines = pool.engines;
    let running = false;
    for (let r = 0; r < D; r++) if (engines[w * D + r].runningCount > 0) running = true;
    if (!running) {
      pool.prefillDeferrals[w] = 0;
      return true;
    }
    pool.prefillDeferrals[w] = left - 1;
    return false;
  }

  /** A run candidate's plain pass, started and queued like any other (it commutes with every other start at `t`). */
  private startQueuedPlainPass(payload: number, t: number): void {
    const pool = this.poolOf(payload);
    const w = workerOfWorkerKey(payload);
    const duration = pool.engines[w].startPass(t);
    pool.busy[w] = 1;
    pool.passEndMs[w] = t + duration;
    this.passes++;
    this.host.schedulePassEnd(t + duration, payload);
  }

  private poolOf(payload: number): WorkerPool {
    return poolOfWorkerKey(payload) === 0 ? this.front : this.pools[1];
  }

  completePass(payload: number, t: number): void {
    const pool = this.poolOf(payload);
    const w = workerOfWorkerKey(payload);
    pool.busy[w] = 0;
    pool.dirty[w] = 1;
    const D = pool.ranksPerWorker;
    for (let r = 0; r < D; r++) {
      const slot = w * D + r;
      const stats = pool.engines[slot].stats;
      if (stats.specDrafts > 0) this.countSpeculation(stats);
      this.deliverSignals(pool, slot, t);
      if (r === D - 1) this.cancelDeferred(pool, w, t);
      this.slotFreed(pool, slot, t);
    }
    this.removeIfDrained(pool, w, t);
  }

  private countSpeculation(stats: PassStats): void {
    const s = this.speculation;
    s.drafts += stats.specDrafts;
    s.draftTokens += stats.specDraftTokens;
    s.tokens += stats.specTokens;
    this.windowDrafts += stats.specDrafts;
    this.windowTokens += stats.specTokens;
  }

  /**
   * The accept-length sample since the previous call (a traffic window of the Planner): tokens
   * emitted by the sequence passes that verified drafts, and those passes; then starts a new one.
   */
  takeAcceptSample(): { readonly tokens: number; readonly forwards: number } {
    const sample = { tokens: this.windowTokens, forwards: this.windowDrafts };
    this.windowDrafts = 0;
    this.windowTokens = 0;
    return sample;
  }

  /**
   * A KV-routed admission to the front pool: one `overlap / prompt blocks` sample, the chosen
   * worker's cached leading blocks over the prompt's blocks, a partial last block counted
   * (`ai-dynamo/dynamo@fe06e46:lib/mocker/src/replay/offline/agg.rs` `record_placement`,
   * `disagg.rs` `record_prefill_placement`; `components/types.rs` `on_admission`). Round robin
   * keeps no index and records none; a disaggregated decode router records none.
   */
  private noteRouterHit(overlapBlocks: number, islBlocks: number): void {
    if (islBlocks === 0) return;
    this.windowHitRateSum += overlapBlocks / islBlocks;
    this.windowHitRateCount++;
  }

  /** The front router's hit-rate sample since the previous call (a Planner traffic window); then starts a new one. */
  takeRouterHitSample(): { readonly sum: number; readonly count: number } {
    const sample = { sum: this.windowHitRateSum, count: this.windowHitRateCount };
    this.windowHitRateSum = 0;
    this.windowHitRateCount = 0;
    return sample;
  }

  private deliverSignals(pool: WorkerPool, slot: number, t: number): void {
    const engine = pool.engines[slot];
    // Delivered once: a later pass overwrites the buffers.
    const n = engine.takeSignals();
    const reqs = engine.signalReq;
    const kinds = engine.signalKind;
    const collector = this.collector;
    const host = this.host;
    const routing = pool.kvRouting;
    for (let i = 0; i < n; i++) {
      const row = reqs[i];
      const kind = kinds[i];
      if (routing === null && kind === Signal.Token && !collector.isEnded(row)) {
        // A run of plain tokens goes over in one call (most of a pass's signals).
        let end = i + 1;
        while (end < n && kinds[end] === Signal.Token && !collector.isEnded(reqs[end])) end++;
        host.onTokenRange(reqs, i, end, t);
        i = end - 1;
        continue;
      }
      if (collector.isEnded(row)) {
        // Abandoned while this pass ran: its KV is freed at the pass end (`cancelDeferred`), unless
        // the pass itself ended it here; the client sees nothing of it any more.
        if (
          routing !== null &&
          (kind === Signal.TokenAndComplete || kind === Signal.Complete || kind === Signal.Rejected)
        ) {
          routing.onFreed(slot, row, t);
        }
        continue;
      }
      if (kind === Signal.Token) {
        host.onToken(row, t);
        if (routing !== null && collector.tokensOf(row) === 1) routing.onPrefillCompleted(slot, row, t);
        continue;
      }
      if (kind === Signal.PrefillDone) {
        if (routing !== null) routing.onPrefillCompleted(slot, row, t);
        this.prefillDone(row, slot, t);
        continue;
      }
      // Before the terminal, which may release the request's state.
      if (pool === this.front) this.frontEnded(row, t);
      if (kind === Signal.TokenAndComplete) host.onLastToken(row, t);
      else if (kind === Signal.Complete) host.onEnded(row, t, Terminal.Completed);
      else host.onEnded(row, t, Terminal.Rejected);
      if (routing !== null) routing.onFreed(slot, row, t);
    }
  }

  /** `row` ended in its front engine (completed or rejected there). Nothing by default. */
  protected frontEnded(_row: number, _t: number): void {}

  /**
   * A draining worker is removed as soon as it holds nothing: no pass in flight, no queued,
   * running, held (prefill KV awaiting its transfer) or reserved request, and no hand-off
   * waiting for its KV. Called wherever a worker can lose its last piece of work: a pass
   * completion, a cancellation, and the release of a prefill copy after its transfer.
   */
  protected removeIfDrained(pool: WorkerPool, w: number, t: number): void {
    if (pool.state[w] !== WorkerState.Draining || !this.holdsNothing(pool, w)) return;
    pool.remove(w, t);
    this.lifecycle.record(pool, t, "drain_complete", [[w, "worker_removed"]]);
  }

  /** Whether worker `w` of `pool` holds nothing at all (the removal rule of a draining worker). */
  holdsNothing(pool: WorkerPool, w: number): boolean {
    return pool.isDrained(w);
  }

  /** A started worker finished its startup delay. */
  workerReady(payload: number, t: number): void {
    const pool = this.poolOf(payload);
    const w = workerOfWorkerKey(payload);
    if (pool.state[w] !== WorkerState.Starting) return; // cancelled meanwhile
    pool.markReady(w, t);
    this.lifecycle.record(pool, t, "startup_complete", [[w, "worker_ready"]]);
    this.releasePending(pool, t);
  }

  /** Requests that waited for a ready worker of `pool` go now. */
  protected releasePending(pool: WorkerPool, t: number): void {
    if (pool !== this.front) return;
    while (this.pendingArrivals.length > 0 && pool.readyCount > 0)
      this.dispatch(this.pendingArrivals.shift()!, t);
  }

  /** Brings a pool's non-draining count (ready + starting) to `target` (lifecycle.ts: the order). */
  protected scaleTo(pool: WorkerPool, target: number, t: number): void {
    const current = pool.nonDraining;
    if (target === current) return;
    if (target > current) {
      const host = this.host;
      const id = pool.id;
      const transitions = scaleUp(pool, target, t, (w, readyAtMs) =>
        host.scheduleWorkerReady(readyAtMs, workerKey(id, w)),
      );
      this.lifecycle.record(pool, t, "scale_up", transitions);
      this.releasePending(pool, t);
      return;
    }
    this.lifecycle.record(pool, t, "scale_down", scaleDown(pool, target, t, this));
  }

  /**
   * The client gave up on `row` at `t` (docs/client.md): the request is cancelled wherever it is —
   * waiting for a worker, queued or running in an engine, held for or during its KV transfer,
   * waiting for decode capacity — and its KV and sequence slot are freed. The caller records its
   * terminal state.
   */
  cancel(row: number, t: number): void {
    const c = this.collector;
    if (!c.isDispatched(row)) {
      this.cancelUndispatched(row, t);
    } else if (!this.cancelPastFront(row, t)) {
      const pool = this.front;
      this.cancelInEngine(pool, c.engineSlotOf(row, pool.ranksPerWorker), row, t);
    }
  }

  /**
   * Cancels `row` before its front pool got it: on its way to the router (its event is ignored),
   * or waiting for a ready worker.
   */
  protected cancelUndispatched(row: number, _t: number): void {
    const i = this.pendingArrivals.indexOf(row);
    if (i >= 0) this.pendingArrivals.splice(i, 1);
  }

  /** Cancels `row` in the engine at `slot` now, or at the end of the worker's pass in flight. */
  protected cancelInEngine(pool: WorkerPool, slot: number, row: number, t: number): void {
    const w = pool.workerOf(slot);
    if (pool.busy[w] === 1) {
      const lists = this.cancelAtPassEnd[pool.id];
      while (lists.length <= w) lists.push([]);
      lists[w].push(row, slot);
      this.deferredCancels++;
      return;
    }
    this.cancelNow(pool, slot, row, t);
  }

  private cancelNow(pool: WorkerPool, slot: number, row: number, t: number): void {
    if (!pool.engines[slot].cancel(row)) return; // its pass ended it meanwhile
    const w = pool.workerOf(slot);
    pool.dirty[w] = 1;
    pool.kvRouting?.onFreed(slot, row, t);
    this.slotFreed(pool, slot, t);
    this.removeIfDrained(pool, w, t);
  }

  /** At the end of worker `w`'s pass: the cancellations that waited for it. */
  private cancelDeferred(pool: WorkerPool, w: number, t: number): void {
    const lists = this.cancelAtPassEnd[pool.id];
    if (w >= lists.length || lists[w].length === 0) return;
    const pairs = lists[w];
    lists[w] = [];
    this.deferredCancels -= pairs.length / 2;
    for (let i = 0; i < pairs.length; i += 2) this.cancelNow(pool, pairs[i + 1], pairs[i], t);
  }
}
