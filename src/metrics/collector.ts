import type { DDSketch } from "./ddsketch.js";
import { type DistStats, sketchStats } from "./distribution.js";
import { GapRuns, HeldGaps } from "./tokenGaps.js";

/** Terminal status of a request (aisimulate.md §6.3 `terminal_status`). */
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

/** Per-request hand-off timeline of a disaggregated deployment. */
export class HandoffColumns {
  readonly decodeWorker: Int32Array;
  readonly decodeDpRank: Int32Array;
  readonly sourceHeld: Float64Array;
  readonly destinationReserved: Float64Array;
  readonly destinationActivated: Float64Array;
  readonly decodeAdmit: Float64Array;
  readonly sourceReleased: Float64Array;
  readonly decodeReusedTokens: Int32Array;
  readonly decodeRouteOverlapTokens: Int32Array;
  readonly transferredTokens: Int32Array;

  constructor(count: number) {
    this.decodeWorker = new Int32Array(count).fill(-1);
    this.decodeDpRank = new Int32Array(count);
    this.sourceHeld = new Float64Array(count).fill(Number.NaN);
    this.destinationReserved = new Float64Array(count).fill(Number.NaN);
    this.destinationActivated = new Float64Array(count).fill(Number.NaN);
    this.decodeAdmit = new Float64Array(count).fill(Number.NaN);
    this.sourceReleased = new Float64Array(count).fill(Number.NaN);
    this.decodeReusedTokens = new Int32Array(count);
    this.decodeRouteOverlapTokens = new Int32Array(count);
    this.transferredTokens = new Int32Array(count);
  }

  /** Prefill finished at `t`: the KV is held on the prefill worker until its transfer. */
  onSourceHeld(req: number, t: number): void {
    this.sourceHeld[req] = t;
  }

  /** The decode router chose `worker`'s rank `dpRank`, which held `overlapTokens` of the prompt per its index. */
  onDecodeRouted(req: number, worker: number, dpRank: number, overlapTokens: number): void {
    this.decodeWorker[req] = worker;
    this.decodeDpRank[req] = dpRank;
    this.decodeRouteOverlapTokens[req] = overlapTokens;
  }

  /** Decode KV reserved at `t`, `reusedTokens` already resident; the transfer moves `transferredTokens`. */
  onReserved(req: number, t: number, reusedTokens: number, transferredTokens: number): void {
    this.destinationReserved[req] = t;
    this.decodeReusedTokens[req] = reusedTokens;
    this.transferredTokens[req] = transferredTokens;
  }

  /** The transfer landed at `t`: the decode engine may admit the request. */
  onActivated(req: number, t: number): void {
    this.destinationActivated[req] = t;
  }

  /** The decode engine admitted the request at `t` (the first admission counts). */
  onDecodeAdmit(req: number, t: number): void {
    if (Number.isNaN(this.decodeAdmit[req])) this.decodeAdmit[req] = t;
  }

  /** The prefill worker freed its copy at `t`. */
  onSourceReleased(req: number, t: number): void {
    this.sourceReleased[req] = t;
  }
}

/**
 * Records what happens to each request, as columns indexed by request row (mocker.md §4.4,
 * aisimulate.md §5.5). Latency distributions are derived once at the end (`summary.ts`).
 *
 * Token gaps go straight into the streaming ITL and per-user sketches when every arrived
 * admitted request is bound to complete; when a virtual-time cap can cut requests off, gaps are
 * held per request and folded in at completion, so only completed requests contribute (as the
 * reference folds gaps at terminal time). Gaps go into the bins per run of equal gaps
 * (`tokenGaps.ts`: one weighted insert per pass and gap, exactly the sketches of token-by-token
 * folding) and into the moments per worker (`partitionOf`), so that mean and std do not depend on
 * how the replay interleaves workers; held gaps live in a chunked arena (`HeldGaps`).
 */
export class Collector {
  readonly arrival: Float64Array;
  readonly dispatched: Float64Array;
  readonly firstAdmit: Float64Array;
  readonly firstToken: Float64Array;
  readonly secondToken: Float64Array;
  readonly lastToken: Float64Array;
  readonly terminal: Float64Array;
  readonly tokens: Int32Array;
  readonly reusedMax: Int32Array;
  readonly reusedFirst: Int32Array;
  readonly admissions: Int32Array;
  readonly worker: Int32Array;
  /** Attention-DP rank within the worker. */
  readonly dpRank: Int32Array;
  /** Prompt blocks the routed-to worker already held, per the router's index, × block size. */
  readonly routeOverlapTokens: Int32Array;
  /** Disaggregated hand-off (aisimulate.md §6.3); NaN / -1 when not applicable. */
  readonly handoff: HandoffColumns | null;
  readonly status: Uint8Array;
  /** Per-admission history (only kept when per-request records are captured). */
  readonly admissionLog: { ordinal: number; at: number; reused: number }[][] | null;
  arrived = 0;
  /** Admissions over the run (1-based ordinal of the latest). */
  admissionCount = 0;
  private readonly gaps = new GapRuns();
  /** Gaps held per request until its terminal state; null when they stream straight in. */
  private readonly heldGaps: HeldGaps | null;

  constructor(
    count: number,
    opts: { holdGapsUntilTerminal: boolean; captureHistory: boolean; disaggregated?: boolean },
  ) {
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
    this.handoff = opts.disaggregated ? new HandoffColumns(count) : null;
    this.status = new Uint8Array(count);
    this.heldGaps = opts.holdGapsUntilTerminal ? new HeldGaps(count) : null;
    this.admissionLog = opts.captureHistory ? Array.from({ length: count }, () => []) : null;
  }

  /** Streaming ITL sketch (ms), every gap folded so far included: bins, count, min, max (`itlStats` has the moments). */
  get itl(): DDSketch {
    return this.gaps.itl;
  }

  /** Streaming per-user output throughput sketch (tokens/s), as `itl`. */
  get perUserThroughput(): DDSketch {
    return this.gaps.perUserThroughput;
  }

  /** ITL statistics (ms): percentiles from the sketch, mean and std from the per-worker moments. */
  itlStats(): DistStats {
    return sketchStats(this.gaps.itl, this.gaps.itlMoments.combined());
  }

  /** Per-user output throughput statistics (tokens/s), as `itlStats`. */
  perUserThroughputStats(): DistStats {
    return sketchStats(this.gaps.perUserThroughput, this.gaps.throughputMoments.combined());
  }

  /**
   * The moments partition of `req`'s gaps: the worker that delivers its tokens (the decode worker
   * of a hand-off), + 1 so that a request never dispatched (unit tests) has partition 0. A worker's
   * tokens arrive in one order however the replay steps the fleet (metrics/moments.ts).
   */
  private partitionOf(req: number): number {
    const h = this.handoff;
    return (h !== null && h.decodeWorker[req] >= 0 ? h.decodeWorker[req] : this.worker[req]) + 1;
  }

  onArrival(req: number, t: number): void {
    this.arrival[req] = t;
    this.arrived++;
  }

  /** Routed at `t` to `worker`'s rank `dpRank`, which held `overlapTokens` of its prompt per the router. */
  onDispatch(req: number, t: number, worker: number, dpRank: number, overlapTokens: number): void {
    this.dispatched[req] = t;
    this.worker[req] = worker;
    this.dpRank[req] = dpRank;
    this.routeOverlapTokens[req] = overlapTokens;
  }

  onAdmit(req: number, t: number, reusedTokens: number): void {
    this.admissionCount++;
    if (this.admissions[req]++ === 0) {
      this.firstAdmit[req] = t;
      this.reusedFirst[req] = reusedTokens;
    }
    if (reusedTokens > this.reusedMax[req]) this.reusedMax[req] = reusedTokens;
    if (this.admissionLog !== null)
      this.admissionLog[req].push({ ordinal: this.admissionCount, at: t, reused: reusedTokens });
  }

  onToken(req: number, t: number): void {
    this.tokenAt(req, t, this.partitionOf(req));
  }

  /** A token of `req` at `t`, delivered by the worker of moments partition `partition`. */
  private tokenAt(req: number, t: number, partition: number): void {
    const n = this.tokens[req]++;
    if (n === 0) {
      this.firstToken[req] = t;
    } else {
      if (n === 1) this.secondToken[req] = t;
      const gap = t - this.lastToken[req];
      if (this.heldGaps === null) {
        this.gaps.fold(gap, partition);
      } else {
        // Keys now, once per pass and gap; the gap waits for the request's terminal state.
        const runs = this.gaps;
        runs.keysOf(gap);
        this.heldGaps.push(req, gap, runs.itlKey, runs.throughputKey);
      }
    }
    this.lastToken[req] = t;
  }

  /** `onToken(rows[i], t)` for each of `rows[0 .. count)`: the tokens of one pass of one worker. */
  onTokens(rows: Int32Array, count: number, t: number): void {
    if (count === 0) return;
    // One worker's pass: one moments partition.
    const partition = this.partitionOf(rows[0]);
    const tokens = this.tokens;
    const lastToken = this.lastToken;
    if (this.heldGaps === null) {
      // Every request's previous token came at the same time (the previous pass of a run): one
      // gap for all, folded at once — exactly what token by token would fold.
      const previous = lastToken[rows[0]];
      let shared = true;
      for (let i = 0; i < count && shared; i++)
        shared = tokens[rows[i]] > 0 && lastToken[rows[i]] === previous;
      if (shared) {
        this.gaps.foldMany(t - previous, partition, count);
        for (let i = 0; i < count; i++) {
          const req = rows[i];
          if (tokens[req]++ === 1) this.secondToken[req] = t;
          lastToken[req] = t;
        }
        return;
      }
    }
    for (let i = 0; i < count; i++) this.tokenAt(rows[i], t, partition);
  }

  onTerminal(req: number, t: number, status: number): void {
    this.terminal[req] = t;
    this.status[req] = status;
    this.heldGaps?.release(req, status === Terminal.Completed ? this.gaps : null, this.partitionOf(req));
  }
}
