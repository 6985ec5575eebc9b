import { IDLE_HEARTBEAT, PassStats } from "./passStats.js";

/**
 * A worker that has published no forward pass for this long publishes an idle heartbeat
 * (`IDLE_FPM_INTERVAL_MS` of the Dynamo mocker's planner hook,
 * `ai-dynamo/dynamo:lib/mocker/src/replay/offline/planner_hook.rs` `LatestFpmBuffer`).
 */
export const IDLE_FPM_INTERVAL_MS = 1000;

/**
 * Signals an engine of at most `maxSequences` running requests makes room for up front: two a
 * request (a token and a completion), which a pass exceeds only with speculative tokens.
 */
export function signalCapacity(maxSequences: number): number {
  return Math.max(64, 2 * maxSequences);
}

/**
 * A pass as the replay sees it between its start and its end, shared by the scheduler cores
 * (vllmEngine.ts, sglangEngine.ts extend this class): the signals it emits (`Signal` kinds by
 * request row, in emission order; two parallel typed arrays that grow by doubling and are reused
 * pass after pass) for the replay to take at its end, and what its batch and KV were while it ran.
 */
export abstract class PassSignals {
  /** Requests the last pass finished (they left the running set when it executed). */
  protected finishingInPass = 0;
  /** KV blocks the last pass's finishing requests free at its end (already freed: passes execute eagerly). */
  protected blocksFreedAtPassEnd = 0;
  /** When the latest pass ends (or ended). */
  protected lastPassEndMs = Number.NEGATIVE_INFINITY;
  /** The pass before the latest one, and when it ended: what was published while the latest runs. */
  private readonly priorStats = new PassStats();
  private priorPassEndMs = Number.NEGATIVE_INFINITY;
  abstract readonly runningCount: number;
  /** The latest pass's metrics (set as it executes, at its start). */
  abstract readonly stats: PassStats;
  abstract readonly pool: { readonly activeBlocks: number };

  private signalReqs: Int32Array;
  private signalKinds: Uint8Array;
  /** Signals of the last pass not yet handed over; a pass is in flight while it has some. */
  protected pendingSignals = 0;

  /**
   * `capacity`: signals a pass may leave before the arrays grow. An engine sizes it for its
   * largest batch, so that they never grow in practice: a growth first met late in a run
   * deoptimized the replay's token path, into which `signal` is inlined (docs/performance.md
   * "Deoptimizations").
   */
  constructor(capacity = 64) {
    this.signalReqs = new Int32Array(capacity);
    this.signalKinds = new Uint8Array(capacity);
  }

  /** Request rows signalled by the last pass, `[0 .. signalCount)` (valid until the next pass). */
  get signalReq(): Int32Array {
    return this.signalReqs;
  }

  /** The `Signal` kind of each entry of `signalReq`. */
  get signalKind(): Uint8Array {
    return this.signalKinds;
  }

  /** When the latest pass ends (or ended). */
  get lastPassEnd(): number {
    return this.lastPassEndMs;
  }

  /**
   * Called by a pass as it starts, before it resets `stats`: keeps the previous pass, which stays
   * the engine's published one until this pass ends.
   */
  protected beginPassStats(stats: PassStats): void {
    this.priorStats.copyFrom(stats);
    this.priorPassEndMs = this.lastPassEndMs;
  }

  /**
   * The forward-pass metrics a Planner tick at `now` sees from this engine, as the Dynamo mocker
   * publishes them (`planner_hook.rs` `LatestFpmBuffer`, and the replay adapter's last-seen cache,
   * `dynamo/planner/offline/replay_adapter.py` `_update_fpm_cache`): each pass's metrics at its
   * end, and an idle heartbeat once the engine has published nothing for `IDLE_FPM_INTERVAL_MS`
   * (counted from `readyAtMs` before its first pass). So a pass still running at `now` is not
   * seen: the tick sees the pass before it, or a heartbeat after a second without one. null: the
   * engine has published nothing yet.
   */
  publishedStats(now: number, readyAtMs: number): Readonly<PassStats> | null {
    const ended = this.lastPassEndMs <= now;
    const endMs = ended ? this.lastPassEndMs : this.priorPassEndMs;
    if (now - Math.max(readyAtMs, endMs) >= IDLE_FPM_INTERVAL_MS) return IDLE_HEARTBEAT;
    if (endMs === Number.NEGATIVE_INFINITY) return null;
    return ended ? this.stats : this.priorStats;
  }

  /** Checks a pass duration from the timing model, records it and when the pass ends; returns it. */
  protected endPass(now: number, ms: number, stats: PassStats): number {
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new Error(`timing model returned a non-finite or negative duration (${ms})`);
    }
    stats.wallTimeS = ms / 1000;
    this.lastPassEndMs = now + ms;
    return ms;
  }

  /**
   * Requests in the batch of the pass in flight, counting those it finishes: a pass executes
   * eagerly at its start, so they have already left the running set (time series sampling). A
   * pass is in flight while its signals are undelivered; every finishing request leaves a signal.
   */
  get inFlightBatchCount(): number {
    return this.pendingSignals > 0 ? this.runningCount + this.finishingInPass : this.runningCount;
  }

  /** KV blocks in use while the pass is in flight: the active ones plus those its finishing requests free at its end. */
  get inFlightActiveBlocks(): number {
    const active = this.pool.activeBlocks;
    return this.pendingSignals > 0 ? active + this.blocksFreedAtPassEnd : active;
  }

  get signalCount(): number {
    return this.pendingSignals;
  }

  /**
   * Hands the last pass's signals to the caller at the pass end: returns their count, in
   * `signalReq` / `signalKind`, and marks them delivered (the pass is no longer in flight).
   */
  takeSignals(): number {
    const n = this.pendingSignals;
    this.pendingSignals = 0;
    return n;
  }

  protected signal(req: number, kind: number): void {
    const n = this.pendingSignals;
    if (n === this.signalReqs.length) {
      const reqs = new Int32Array(n * 2);
      reqs.set(this.signalReqs);
      this.signalReqs = reqs;
      const kinds = new Uint8Array(n * 2);
      kinds.set(this.signalKinds);
      this.signalKinds = kinds;
    }
    this.signalReqs[n] = req;
    this.signalKinds[n] = kind;
    this.pendingSignals = n + 1;
  }
}
