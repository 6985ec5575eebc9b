import {
  type RowStore,
  RowWindow,
  relayoutArray,
  relayoutF64,
  relayoutI32,
  relayoutU8,
} from "../util/rowWindow.js";
import type { DDSketch } from "./ddsketch.js";
import { type DistStats, sketchStats } from "./distribution.js";
import { type GapDistribution, GapExtremes, GapRuns, HeldGaps } from "./tokenGaps.js";

/** Terminal status of a request (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs` `terminal_status`). */
export const Terminal = {
  None: 0,
  Completed: 1,
  Rejected: 2,
  /**
   * Abandoned by the client (`client.timeout_seconds`, docs/client.md): not finished that long
   * after it was sent. Written `canceled` in requests.jsonl, the reference's status for a request
   * whose client went away.
   */
  TimedOut: 3,
} as const;

export const TERMINAL_NAMES = ["", "completed", "rejected", "canceled"] as const;

/** Per-request hand-off timeline of a disaggregated deployment, at slot `req & mask` of the run's row window. */
export class HandoffColumns {
  decodeWorker: Int32Array;
  decodeDpRank: Int32Array;
  /** When the decode router chose the worker: the prefill end (source first) or before the prefill (destination first). */
  decodeRouted: Float64Array;
  sourceHeld: Float64Array;
  destinationReserved: Float64Array;
  destinationActivated: Float64Array;
  decodeAdmit: Float64Array;
  sourceReleased: Float64Array;
  decodeReusedTokens: Int32Array;
  decodeRouteOverlapTokens: Int32Array;
  transferredTokens: Int32Array;
  mask: number;

  constructor(window: RowWindow) {
    const count = window.capacity;
    this.mask = window.mask;
    this.decodeWorker = new Int32Array(count).fill(-1);
    this.decodeDpRank = new Int32Array(count);
    this.decodeRouted = new Float64Array(count).fill(Number.NaN);
    this.sourceHeld = new Float64Array(count).fill(Number.NaN);
    this.destinationReserved = new Float64Array(count).fill(Number.NaN);
    this.destinationActivated = new Float64Array(count).fill(Number.NaN);
    this.decodeAdmit = new Float64Array(count).fill(Number.NaN);
    this.sourceReleased = new Float64Array(count).fill(Number.NaN);
    this.decodeReusedTokens = new Int32Array(count);
    this.decodeRouteOverlapTokens = new Int32Array(count);
    this.transferredTokens = new Int32Array(count);
    window.register(this);
  }

  relayout(first: number, end: number, oldMask: number, capacity: number): void {
    const nan = Number.NaN;
    this.decodeWorker = relayoutI32(this.decodeWorker, first, end, oldMask, capacity, -1);
    this.decodeDpRank = relayoutI32(this.decodeDpRank, first, end, oldMask, capacity, 0);
    this.decodeRouted = relayoutF64(this.decodeRouted, first, end, oldMask, capacity, nan);
    this.sourceHeld = relayoutF64(this.sourceHeld, first, end, oldMask, capacity, nan);
    this.destinationReserved = relayoutF64(this.destinationReserved, first, end, oldMask, capacity, nan);
    this.destinationActivated = relayoutF64(this.destinationActivated, first, end, oldMask, capacity, nan);
    this.decodeAdmit = relayoutF64(this.decodeAdmit, first, end, oldMask, capacity, nan);
    this.sourceReleased = relayoutF64(this.sourceReleased, first, end, oldMask, capacity, nan);
    this.decodeReusedTokens = relayoutI32(this.decodeReusedTokens, first, end, oldMask, capacity, 0);
    this.decodeRouteOverlapTokens = relayoutI32(
      this.decodeRouteOverlapTokens,
      first,
      end,
      oldMask,
      capacity,
      0,
    );
    this.transferredTokens = relayoutI32(this.transferredTokens, first, end, oldMask, capacity, 0);
    this.mask = capacity - 1;
  }

  /** Empties the slot of a released row. */
  reset(req: number): void {
    const i = req & this.mask;
    this.decodeWorker[i] = -1;
    this.decodeDpRank[i] = 0;
    this.decodeRouted[i] = Number.NaN;
    this.sourceHeld[i] = Number.NaN;
    this.destinationReserved[i] = Number.NaN;
    this.destinationActivated[i] = Number.NaN;
    this.decodeAdmit[i] = Number.NaN;
    this.sourceReleased[i] = Number.NaN;
    this.decodeReusedTokens[i] = 0;
    this.decodeRouteOverlapTokens[i] = 0;
    this.transferredTokens[i] = 0;
  }

  /** Prefill finished at `t`: the KV is held on the prefill worker until its transfer. */
  onSourceHeld(req: number, t: number): void {
    this.sourceHeld[req & this.mask] = t;
  }

  /** At `t` the decode router chose `worker`'s rank `dpRank`, which held `overlapTokens` of the prompt per its index. */
  onDecodeRouted(req: number, t: number, worker: number, dpRank: number, overlapTokens: number): void {
    const i = req & this.mask;
    this.decodeRouted[i] = t;
    this.decodeWorker[i] = worker;
    this.decodeDpRank[i] = dpRank;
    this.decodeRouteOverlapTokens[i] = overlapTokens;
  }

  /** Decode KV reserved at `t`, `reusedTokens` already resident; the transfer moves `transferredTokens`. */
  onReserved(req: number, t: number, reusedTokens: number, transferredTokens: number): void {
    const i = req & this.mask;
    this.destinationReserved[i] = t;
    this.decodeReusedTokens[i] = reusedTokens;
    this.transferredTokens[i] = transferredTokens;
  }

  /** The transfer landed at `t`: the decode engine may admit the request. */
  onActivated(req: number, t: number): void {
    this.destinationActivated[req & this.mask] = t;
  }

  /** The decode engine admitted the request at `t` (the first admission counts). */
  onDecodeAdmit(req: number, t: number): void {
    const i = req & this.mask;
    if (Number.isNaN(this.decodeAdmit[i])) this.decodeAdmit[i] = t;
  }

  /** The prefill worker freed its copy at `t`. */
  onSourceReleased(req: number, t: number): void {
    this.sourceReleased[req & this.mask] = t;
  }

  /** Whether prefill finished (the KV is held on, or was moved from, the prefill worker). */
  hasSourceHeld(req: number): boolean {
    return !Number.isNaN(this.sourceHeld[req & this.mask]);
  }

  hasReservation(req: number): boolean {
    return !Number.isNaN(this.destinationReserved[req & this.mask]);
  }

  isActivated(req: number): boolean {
    return !Number.isNaN(this.destinationActivated[req & this.mask]);
  }
}

/** One admission of a request (kept only when per-request records are captured). */
export interface AdmissionRecord {
  readonly ordinal: number;
  readonly at: number;
  readonly reused: number;
}

const NO_ADMISSIONS: AdmissionRecord[] = [];

/**
 * Records what happens to each live request, as columns at slot `req & mask` of the run's row
 * window (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`): a request's row is copied to the run's
 * `RequestLog` when the replay releases it (sim/requestLifecycle.ts), and latency distributions are derived
 * once at the end from that log (`summary.ts`).
 *
 * Token gaps go into the streaming ITL and per-user sketches and their exact moment sums once per
 * pass and gap (`tokenGaps.ts`: exactly what token-by-token folding gives, in any order). Only
 * completed requests count (as the reference folds gaps at terminal time): when a virtual-time cap
 * or a client timeout can cut requests off, each request's gaps are also held (`HeldGaps`, a
 * chunked arena) and taken back out if it ends without completing, and reads leave out the
 * requests still live.
 */
export class Collector implements RowStore {
  arrival: Float64Array;
  dispatched: Float64Array;
  firstAdmit: Float64Array;
  firstToken: Float64Array;
  secondToken: Float64Array;
  lastToken: Float64Array;
  terminal: Float64Array;
  tokens: Int32Array;
  reusedMax: Int32Array;
  reusedFirst: Int32Array;
  admissions: Int32Array;
  worker: Int32Array;
  /** Attention-DP rank within the worker. */
  dpRank: Int32Array;
  /** Prompt blocks the routed-to worker already held, per the router's index, × block size. */
  routeOverlapTokens: Int32Array;
  /** Disaggregated hand-off (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`); NaN / -1 when not applicable. */
  readonly handoff: HandoffColumns | null;
  status: Uint8Array;
  /** Per-admission history (only kept when per-request records are captured). */
  admissionLog: AdmissionRecord[][] | null;
  /** Slot of row `req`: `req & mask`. */
  mask: number;
  readonly window: RowWindow;
  arrived = 0;
  /** Requests that reached a terminal state, and of them those rejected. */
  terminated = 0;
  rejected = 0;
  /** Admissions over the run (1-based ordinal of the latest). */
  admissionCount = 0;
  private readonly gaps = new GapRuns();
  /** Gaps held per request until its terminal state; null when they stream straight in. */
  private readonly heldGaps: HeldGaps | null;

  /**
   * `rows`: the run's row window, or a row count (a window holding rows 0 .. count − 1, for
   * tests that drive a collector by hand).
   */
  constructor(
    rows: RowWindow | number,
    opts: { holdGapsUntilTerminal: boolean; captureHistory: boolean; disaggregated?: boolean },
  ) {
    const window = typeof rows === "number" ? windowOf(rows) : rows;
    this.window = window;
    const count = window.capacity;
    this.mask = window.mask;
    this.arrival = new Float64Array(count).fill(Number.NaN);
    this.dispatched = new Float64Array(count).fill(Number.NaN);
    this.firstAdmit = new Float64Array(count).fill(Number.NaN);
    this.firstToken = new Float64Array(count).fill(Number.NaN);
    this.secondToken = new Float64Array(count).fill(Number.NaN);
    this.lastToken = new Float64Array(count).fill(Number.NaN);
    this.terminal = new Float64Array(count).fill(Number.NaN);
    this.tokens = new Int32Array(count);
    this.reusedMax = new Int32Array(count);
    this.reusedFirst = new Int32Array(count);
    this.admissions = new Int32Array(count);
    this.worker = new Int32Array(count).fill(-1);
    this.dpRank = new Int32Array(count);
    this.routeOverlapTokens = new Int32Array(count);
    this.status = new Uint8Array(count);
    this.admissionLog = opts.captureHistory ? Array.from({ length: count }, () => NO_ADMISSIONS) : null;
    window.register(this);
    this.handoff = opts.disaggregated ? new HandoffColumns(window) : null;
    this.heldGaps = opts.holdGapsUntilTerminal ? new HeldGaps(window) : null;
  }

  relayout(first: number, end: number, oldMask: number, capacity: number): void {
    const nan = Number.NaN;
    this.arrival = relayoutF64(this.arrival, first, end, oldMask, capacity, nan);
    this.dispatched = relayoutF64(this.dispatched, first, end, oldMask, capacity, nan);
    this.firstAdmit = relayoutF64(this.firstAdmit, first, end, oldMask, capacity, nan);
    this.firstToken = relayoutF64(this.firstToken, first, end, oldMask, capacity, nan);
    this.secondToken = relayoutF64(this.secondToken, first, end, oldMask, capacity, nan);
    this.lastToken = relayoutF64(this.lastToken, first, end, oldMask, capacity, nan);
    this.terminal = relayoutF64(this.terminal, first, end, oldMask, capacity, nan);
    this.tokens = relayoutI32(this.tokens, first, end, oldMask, capacity, 0);
    this.reusedMax = relayoutI32(this.reusedMax, first, end, oldMask, capacity, 0);
    this.reusedFirst = relayoutI32(this.reusedFirst, first, end, oldMask, capacity, 0);
    this.admissions = relayoutI32(this.admissions, first, end, oldMask, capacity, 0);
    this.worker = relayoutI32(this.worker, first, end, oldMask, capacity, -1);
    this.dpRank = relayoutI32(this.dpRank, first, end, oldMask, capacity, 0);
    this.routeOverlapTokens = relayoutI32(this.routeOverlapTokens, first, end, oldMask, capacity, 0);
    this.status = relayoutU8(this.status, first, end, oldMask, capacity);
    if (this.admissionLog !== null)
      this.admissionLog = relayoutArray(this.admissionLog, first, end, oldMask, capacity, NO_ADMISSIONS);
    this.mask = capacity - 1;
  }

  /** Empties the slot of a released row (its state was copied to the request log). */
  release(req: number): void {
    const i = req & this.mask;
    this.arrival[i] = Number.NaN;
    this.dispatched[i] = Number.NaN;
    this.firstAdmit[i] = Number.NaN;
    this.firstToken[i] = Number.NaN;
    this.secondToken[i] = Number.NaN;
    this.lastToken[i] = Number.NaN;
    this.terminal[i] = Number.NaN;
    this.tokens[i] = 0;
    this.reusedMax[i] = 0;
    this.reusedFirst[i] = 0;
    this.admissions[i] = 0;
    this.worker[i] = -1;
    this.dpRank[i] = 0;
    this.routeOverlapTokens[i] = 0;
    this.status[i] = Terminal.None;
    if (this.admissionLog !== null) this.admissionLog[i] = NO_ADMISSIONS;
    this.handoff?.reset(req);
  }

  /** Whether `req` reached a terminal state (a released row did). */
  isEnded(req: number): boolean {
    return req < this.window.freed || this.status[req & this.mask] !== Terminal.None;
  }

  statusOf(req: number): number {
    return this.status[req & this.mask];
  }

  arrivalOf(req: number): number {
    return this.arrival[req & this.mask];
  }

  tokensOf(req: number): number {
    return this.tokens[req & this.mask];
  }

  /** Whether `req` was routed to a front-pool worker. */
  isDispatched(req: number): boolean {
    return !Number.isNaN(this.dispatched[req & this.mask]);
  }

  /** The front-pool engine slot (worker × ranks + rank) `req` was routed to. */
  engineSlotOf(req: number, ranksPerWorker: number): number {
    const i = req & this.mask;
    return this.worker[i] * ranksPerWorker + this.dpRank[i];
  }

  /**
   * The token-gap folds as the summary reads them: every gap folded so far, less those of requests
   * still live when gaps are held (only completed requests count), with the completed requests'
   * extremes. A copy when gaps are held, so reading never changes what later folds give.
   */
  private gapView(): GapRuns {
    const held = this.heldGaps;
    if (held === null) return this.gaps;
    const view = this.gaps.snapshot();
    held.unfoldLive(view);
    held.completed.applyTo(view.sketch("itl"), view.sketch("throughput"));
    return view;
  }

  /** ITL sketch (ms) of the gaps folded so far: bins, count, min, max (`itlStats` has the moments). */
  get itl(): DDSketch {
    return this.gapView().sketch("itl");
  }

  /** Per-user output throughput sketch (tokens/s), as `itl`. */
  get perUserThroughput(): DDSketch {
    return this.gapView().sketch("throughput");
  }

  /** ITL statistics (ms): percentiles from the sketch, mean and std from the exact moments. */
  itlStats(): DistStats {
    return this.gapStats("itl");
  }

  /** Per-user output throughput statistics (tokens/s), as `itlStats`. */
  perUserThroughputStats(): DistStats {
    return this.gapStats("throughput");
  }

  private gapStats(of: GapDistribution): DistStats {
    const view = this.gapView();
    return sketchStats(view.sketch(of), view.moments(of));
  }

  onArrival(req: number, t: number): void {
    this.arrival[req & this.mask] = t;
    this.arrived++;
  }

  /** Routed at `t` to `worker`'s rank `dpRank`, which held `overlapTokens` of its prompt per the router. */
  onDispatch(req: number, t: number, worker: number, dpRank: number, overlapTokens: number): void {
    const i = req & this.mask;
    this.dispatched[i] = t;
    this.worker[i] = worker;
    this.dpRank[i] = dpRank;
    this.routeOverlapTokens[i] = overlapTokens;
  }

  onAdmit(req: number, t: number, reusedTokens: number): void {
    const i = req & this.mask;
    this.admissionCount++;
    if (this.admissions[i]++ === 0) {
      this.firstAdmit[i] = t;
      this.reusedFirst[i] = reusedTokens;
    }
    if (reusedTokens > this.reusedMax[i]) this.reusedMax[i] = reusedTokens;
    const log = this.admissionLog;
    if (log !== null) {
      if (log[i] === NO_ADMISSIONS) log[i] = [];
      log[i].push({ ordinal: this.admissionCount, at: t, reused: reusedTokens });
    }
  }

  /** A token of `req` at `t`. */
  onToken(req: number, t: number): void {
    const i = req & this.mask;
    const n = this.tokens[i]++;
    if (n === 0) {
      this.firstToken[i] = t;
    } else {
      // Written on every token (the same value past the second): a store only under `n === 1` first
      // ran late in a run, when most tokens come in runs (`onTokenRun`), and deoptimized the
      // replay's signal delivery, into which this is inlined (docs/performance.md "Deoptimizations").
      const second = this.secondToken;
      second[i] = n === 1 ? t : second[i];
      const gap = t - this.lastToken[i];
      this.foldGaps(gap, 1);
      this.heldGaps?.push(req, gap, this.gaps.itlKey, this.gaps.throughputKey);
    }
    this.lastToken[i] = t;
  }

  /** Folds `count` equal gaps, leaving their sketch keys in `gaps.itlKey` / `gaps.throughputKey`. */
  private foldGaps(gap: number, count: number): void {
    const runs = this.gaps;
    runs.keysOf(gap);
    runs.foldManyAtKeys(gap, runs.itlKey, runs.throughputKey, count);
  }

  /**
   * `onToken(rows[i], t)` for each of `rows[from .. to)`, tokens of one pass of one worker, none
   * of an ended request. When the requests are distinct and every one that already has a token
   * had it at the same time (the previous pass), their gaps are one gap, folded at once: exactly
   * what token by token would fold, since a first token folds nothing.
   */
  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void {
    if (to <= from) return;
    const tokens = this.tokens;
    const lastToken = this.lastToken;
    const mask = this.mask;
    let previous = Number.NaN;
    let gaps = 0;
    for (let i = from; i < to; i++) {
      // A speculative burst signals one request's tokens back to back: its later gaps are 0.
      if (i > from && rows[i] === rows[i - 1]) {
        for (let j = from; j < to; j++) this.onToken(rows[j], t);
        return;
      }
      const slot = rows[i] & mask;
      if (tokens[slot] === 0) continue;
      if (gaps === 0) previous = lastToken[slot];
      else if (lastToken[slot] !== previous) {
        for (let j = from; j < to; j++) this.onToken(rows[j], t);
        return;
      }
      gaps++;
    }
    const gap = t - previous;
    if (gaps > 0) this.foldGaps(gap, gaps);
    const held = this.heldGaps;
    const itlKey = this.gaps.itlKey;
    const throughputKey = this.gaps.throughputKey;
    const secondToken = this.secondToken;
    const firstToken = this.firstToken;
    for (let i = from; i < to; i++) {
      const slot = rows[i] & mask;
      const n = tokens[slot]++;
      if (n === 0) firstToken[slot] = t;
      else {
        if (n === 1) secondToken[slot] = t;
        if (held !== null) held.push(rows[i], gap, itlKey, throughputKey);
      }
      lastToken[slot] = t;
    }
  }

  /**
   * The tokens of a run of `passes` plain decode passes of one worker: pass `j` gave a token to
   * each of the distinct rows `rows[0 .. count)`, none ended, seen at `endsMs[j] + offsetMs`.
   * Exactly `onTokenRange(rows, 0, count, endsMs[j] + offsetMs)` pass by pass: after the first
   * pass every row's latest token is that pass's, so each later pass is one shared gap of `count`
   * tokens, folded once, and each row's counters move once.
   */
  onTokenRun(rows: Int32Array, count: number, endsMs: Float64Array, passes: number, offsetMs: number): void {
    if (passes === 0 || count === 0) return;
    const first = endsMs[0] + offsetMs;
    this.onTokenRange(rows, 0, count, first);
    if (passes === 1) return;
    const held = this.heldGaps;
    if (held !== null) this.reserveRunGaps(passes);
    const extremes = this.runExtremes;
    extremes.reset();
    let previous = first;
    for (let j = 1; j < passes; j++) {
      const t = endsMs[j] + offsetMs;
      const gap = t - previous;
      this.foldGaps(gap, count);
      if (held !== null) {
        this.runGaps[j] = gap;
        this.runItlKeys[j] = this.gaps.itlKey;
        this.runThroughputKeys[j] = this.gaps.throughputKey;
        extremes.note(gap);
      }
      previous = t;
    }
    if (held !== null) {
      // The run's gaps are held once; each row refers to them.
      const run = held.holdRun(this.runGaps, this.runItlKeys, this.runThroughputKeys, 1, passes);
      for (let i = 0; i < count; i++) held.pushRunRef(rows[i], run, extremes);
    }
    const second = endsMs[1] + offsetMs;
    const tokens = this.tokens;
    const secondToken = this.secondToken;
    const lastToken = this.lastToken;
    const mask = this.mask;
    const more = passes - 1;
    for (let i = 0; i < count; i++) {
      const slot = rows[i] & mask;
      const n = tokens[slot];
      if (n === 1) secondToken[slot] = second;
      tokens[slot] = n + more;
      lastToken[slot] = previous;
    }
  }

  /** A run's gaps, their keys and extremes (`onTokenRun` with held gaps), grown to the longest run. */
  private readonly runExtremes = new GapExtremes();
  private runGaps = new Float64Array(0);
  private runItlKeys = new Int32Array(0);
  private runThroughputKeys = new Int32Array(0);

  private reserveRunGaps(passes: number): void {
    if (this.runGaps.length >= passes) return;
    const size = Math.max(passes, 2 * this.runGaps.length, 64);
    this.runGaps = new Float64Array(size);
    this.runItlKeys = new Int32Array(size);
    this.runThroughputKeys = new Int32Array(size);
  }

  onTerminal(req: number, t: number, status: number): void {
    const i = req & this.mask;
    this.terminal[i] = t;
    this.status[i] = status;
    this.terminated++;
    if (status === Terminal.Rejected) this.rejected++;
    this.heldGaps?.release(req, this.gaps, status === Terminal.Completed);
  }
}

/** A window holding rows 0 .. count − 1 (a collector driven by hand). */
function windowOf(count: number): RowWindow {
  const w = new RowWindow(count);
  w.reserve(count);
  w.read = count;
  return w;
}
