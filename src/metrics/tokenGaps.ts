import { type RowStore, type RowWindow, relayoutF64, relayoutI32 } from "../util/rowWindow.js";
import { DDSketch } from "./ddsketch.js";
import { ExactMoments, MAX_BATCH } from "./exactSum.js";

/**
 * Token gaps into the ITL and per-user output throughput distributions, one weighted insert per
 * pass and gap: the tokens of one pass share their gap, so a pass's gaps go into each sketch with
 * one `DDSketch.addCountAtKey` and into each moment sum with one weighted exact add.
 *
 * Bin counts, min and max do not depend on the order of the samples, and neither do the moments:
 * they are exact sums (metrics/exactSum.ts), rounded once when read, so the mean and std are the
 * correctly rounded ones of the samples whatever order the replay delivers them in
 * (test/metrics/collector.gaps.property.test.ts keeps a token-by-token reference).
 *
 * When a request may be cut off (`HeldGaps`), its gaps are still folded at once, and taken back
 * out (a negative count to `foldManyAtKeys`) if it ends without completing; min and max then come
 * from completed requests only (`GapExtremes.applyTo`).
 */
/** The two distributions a token gap feeds: ITL, and per-user output throughput. */
export type GapDistribution = "itl" | "throughput";

export class GapRuns {
  private readonly itlSketch = new DDSketch();
  private readonly throughputSketch = new DDSketch();
  private readonly itlSums = new ExactMoments();
  private readonly throughputSums = new ExactMoments();
  /** Keys of the latest gap `keysOf` was asked for (a pass's gaps share them), and `1000 / gap`. */
  private keyedGap = Number.NaN;
  private keyedRate = 0;
  itlKey = 0;
  throughputKey = 0;
  /**
   * Folds not yet applied: gap, `1000 / gap` (0 for a gap ≤ 0), their sketch keys and the count
   * (negative to take them out). Applied in one loop (`apply`) that reads them from these arrays,
   * so no double crosses a call that is not inlined (each such crossing was a heap number).
   */
  private pending = 0;
  private readonly pendingGap = new Float64Array(PENDING);
  private readonly pendingRate = new Float64Array(PENDING);
  private readonly pendingItlKey = new Int32Array(PENDING);
  private readonly pendingThroughputKey = new Int32Array(PENDING);
  private readonly pendingCount = new Float64Array(PENDING);

  /**
   * The ITL sketch (ms) or the per-user output throughput sketch (tokens/s, 1000 / gap for gaps > 0),
   * every gap folded so far included; its own moments are not kept (`moments`).
   */
  sketch(of: GapDistribution): DDSketch {
    this.apply();
    return of === "itl" ? this.itlSketch : this.throughputSketch;
  }

  /** Exact count, mean and variance of the ITL gaps or of the per-user throughputs folded so far. */
  moments(of: GapDistribution): ExactMoments {
    this.apply();
    return of === "itl" ? this.itlSums : this.throughputSums;
  }

  /** An independent copy (a view that takes live requests' gaps out without touching this one). */
  snapshot(): GapRuns {
    this.apply();
    const copy = new GapRuns();
    copy.itlSketch.copyFrom(this.itlSketch);
    copy.throughputSketch.copyFrom(this.throughputSketch);
    copy.itlSums.copyFrom(this.itlSums);
    copy.throughputSums.copyFrom(this.throughputSums);
    return copy;
  }

  /** Folds one gap. */
  fold(gap: number): void {
    this.foldMany(gap, 1);
  }

  /** Folds `count` equal gaps (the tokens of one pass): exactly `count` × `fold`. */
  foldMany(gap: number, count: number): void {
    this.keysOf(gap);
    this.foldManyAtKeys(gap, this.itlKey, this.throughputKey, count);
  }

  /**
   * Sets `itlKey` and `throughputKey` to the sketch keys of `gap` (and of `1000 / gap`): nothing
   * computed for a gap equal to the last, and a logarithm each only when the gap leaves the last
   * one's bucket (`DDSketch.keyNear`).
   */
  keysOf(gap: number): void {
    if (gap === this.keyedGap) return;
    this.keyedGap = gap;
    this.keyedRate = gap > 0 ? 1000 / gap : 0;
    this.itlKey = this.itlSketch.keyNear(gap);
    this.throughputKey = gap > 0 ? this.throughputSketch.keyNear(this.keyedRate) : 0;
  }

  /** `count` × `fold(gap)` with its keys from `keysOf(gap)`; a negative count takes them back out. */
  foldManyAtKeys(gap: number, itlKey: number, throughputKey: number, count: number): void {
    if (!Number.isFinite(gap) || count === 0) return;
    const i = this.pending;
    this.pendingGap[i] = gap;
    this.pendingRate[i] = gap > 0 ? (gap === this.keyedGap ? this.keyedRate : 1000 / gap) : 0;
    this.pendingItlKey[i] = itlKey;
    this.pendingThroughputKey[i] = throughputKey;
    this.pendingCount[i] = count;
    if (++this.pending === PENDING) this.apply();
  }

  /** Applies the pending folds to the sketches and the exact sums, in order. */
  private apply(): void {
    const n = this.pending;
    if (n === 0) return;
    this.pending = 0;
    const gaps = this.pendingGap;
    const rates = this.pendingRate;
    const counts = this.pendingCount;
    this.itlSketch.foldCountsAtKeys(gaps, this.pendingItlKey, counts, n, false);
    // A gap ≤ 0 has no throughput (its rate is 0 here).
    this.throughputSketch.foldCountsAtKeys(rates, this.pendingThroughputKey, counts, n, true);
    this.itlSums.addMany(gaps, counts, n, false);
    // The rate of a gap ≤ 0 is 0 here: not a sample.
    this.throughputSums.addMany(rates, counts, n, true);
  }
}

/** Folds held before they are applied (`GapRuns.apply`). */
const PENDING = MAX_BATCH;

/**
 * The smallest and largest gaps of a set of requests, and the smallest positive one (the per-user
 * throughput's extremes are `1000 /` the largest and the smallest positive gap).
 */
export class GapExtremes {
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  minPositive = Number.POSITIVE_INFINITY;

  reset(): void {
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
    this.minPositive = Number.POSITIVE_INFINITY;
  }

  note(gap: number): void {
    if (gap < this.min) this.min = gap;
    if (gap > this.max) this.max = gap;
    if (gap > 0 && gap < this.minPositive) this.minPositive = gap;
  }

  /** Sets the sketches' min and max to these (NaN-free only where a sample exists). */
  applyTo(itl: DDSketch, throughput: DDSketch): void {
    itl.setExtremes(this.min, this.max);
    throughput.setExtremes(
      this.max > 0 ? 1000 / this.max : Number.POSITIVE_INFINITY,
      1000 / this.minPositive,
    );
  }
}

/** Gaps per chunk of the arena. */
const CHUNK = 32;
const INITIAL_CHUNKS = 64;

/**
 * Token gaps of live requests, kept (when a request may be cut off) so that a request that ends
 * without completing can take them back out of the folds (`GapRuns`), in one chunked
 * `Float64Array` arena instead of an array per request: each request's gaps are a linked list of
 * chunks of `CHUNK`, handed back to a free list in one step when it completes, so memory follows
 * the gaps in flight and holding a gap allocates nothing (the arena grows by doubling). Each
 * request's smallest, largest and smallest positive gap are kept beside them: a completed
 * request's go into the run's extremes.
 *
 * **Runs held once.** A run of plain decode passes gives every request of its batch the same
 * gaps, so they are held once, as a *held run* (a chain of chunks of the same arena, counted by
 * the requests that refer to it), and each request keeps only the run's id in a second chain of
 * its own (`refHead`), not a copy of its gaps: a run of P passes over B requests holds P gaps, not
 * B × P. A held run's chunks are freed with its last reference. Taking a request's gaps back out
 * reads its runs' gaps as it reads its own; the folds are order-free sums and counts, so the
 * result is exactly what copies would give.
 */
export class HeldGaps {
  private gaps = new Float64Array(INITIAL_CHUNKS * CHUNK);
  /** Each gap's ITL and throughput sketch keys (`GapRuns.keysOf`), taken when it is held. */
  private itlKeys = new Int32Array(INITIAL_CHUNKS * CHUNK);
  private throughputKeys = new Int32Array(INITIAL_CHUNKS * CHUNK);
  /** Next chunk of the same request; -1 at its tail. Free chunks link the free list. */
  private next = new Int32Array(INITIAL_CHUNKS);
  /** Chunks ever handed out (the arena's high-water mark); `freeHead` heads the recycled ones. */
  private used = 0;
  private freeHead = -1;
  /** Per live request (slot `req & mask` of the run's row window): its first and last chunk, -1 when none. */
  private head: Int32Array;
  private tail: Int32Array;
  /** Gaps in the tail chunk of each request. */
  private fill: Int32Array;
  /**
   * Per live request: the chain of chunks listing the held runs it refers to (their ids in the
   * chunks' `itlKeys` slots), -1 when none, and the ids in its tail chunk.
   */
  private refHead: Int32Array;
  private refTail: Int32Array;
  private refFill: Int32Array;
  /**
   * Per chunk that starts a held run (its id): the run's last chunk, the gaps in it, and the
   * requests referring to the run.
   */
  private runTail = new Int32Array(INITIAL_CHUNKS);
  private runTailFill = new Int32Array(INITIAL_CHUNKS);
  private runRefs = new Int32Array(INITIAL_CHUNKS);
  /** Per live request: its smallest, largest and smallest positive gap so far. */
  private minGap: Float64Array;
  private maxGap: Float64Array;
  private minPositiveGap: Float64Array;
  private mask: number;
  /** The extremes of the gaps of every completed request. */
  readonly completed = new GapExtremes();

  constructor(window: RowWindow) {
    const n = window.capacity;
    this.mask = window.mask;
    this.head = new Int32Array(n).fill(-1);
    this.tail = new Int32Array(n).fill(-1);
    this.fill = new Int32Array(n);
    this.refHead = new Int32Array(n).fill(-1);
    this.refTail = new Int32Array(n).fill(-1);
    this.refFill = new Int32Array(n);
    this.minGap = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    this.maxGap = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
    this.minPositiveGap = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    const inf = Number.POSITIVE_INFINITY;
    const store: RowStore = {
      relayout: (first, end, oldMask, capacity) => {
        this.head = relayoutI32(this.head, first, end, oldMask, capacity, -1);
        this.tail = relayoutI32(this.tail, first, end, oldMask, capacity, -1);
        this.fill = relayoutI32(this.fill, first, end, oldMask, capacity, 0);
        this.refHead = relayoutI32(this.refHead, first, end, oldMask, capacity, -1);
        this.refTail = relayoutI32(this.refTail, first, end, oldMask, capacity, -1);
        this.refFill = relayoutI32(this.refFill, first, end, oldMask, capacity, 0);
        this.minGap = relayoutF64(this.minGap, first, end, oldMask, capacity, inf);
        this.maxGap = relayoutF64(this.maxGap, first, end, oldMask, capacity, -inf);
        this.minPositiveGap = relayoutF64(this.minPositiveGap, first, end, oldMask, capacity, inf);
        this.mask = capacity - 1;
      },
    };
    window.register(store);
  }

  /** Holds `gap` of `req` with its keys (`itlKey = itl.key(gap)`, `throughputKey` that of `1000 / gap`). */
  push(req: number, gap: number, itlKey: number, throughputKey: number): void {
    const i = req & this.mask;
    const at = this.nextPosition(i);
    this.gaps[at] = gap;
    this.itlKeys[at] = itlKey;
    this.throughputKeys[at] = throughputKey;
    this.fill[i]++;
    if (gap < this.minGap[i]) this.minGap[i] = gap;
    if (gap > this.maxGap[i]) this.maxGap[i] = gap;
    if (gap > 0 && gap < this.minPositiveGap[i]) this.minPositiveGap[i] = gap;
  }

  /**
   * Holds the gaps `gaps[from .. to)` of a run of passes with their keys, once, for the requests
   * that `pushRunRef` it next; returns the held run's id. Holding a run no request refers to is a
   * bug (it would never be freed).
   */
  holdRun(
    gaps: Float64Array,
    itlKeys: Int32Array,
    throughputKeys: Int32Array,
    from: number,
    to: number,
  ): number {
    const run = this.allocate();
    let c = run;
    let j = from;
    for (;;) {
      const take = Math.min(CHUNK, to - j);
      const at = c * CHUNK;
      // A loop, not `set(subarray(…))`: no view object per chunk.
      const heldGaps = this.gaps;
      const heldItl = this.itlKeys;
      const heldThroughput = this.throughputKeys;
      for (let k = 0; k < take; k++) {
        heldGaps[at + k] = gaps[j + k];
        heldItl[at + k] = itlKeys[j + k];
        heldThroughput[at + k] = throughputKeys[j + k];
      }
      j += take;
      if (j >= to) {
        this.runTailFill[run] = take;
        break;
      }
      const n = this.allocate();
      this.next[c] = n;
      c = n;
    }
    this.runTail[run] = c;
    this.runRefs[run] = 0;
    return run;
  }

  /**
   * Holds the gaps of the held run `run` (from `holdRun`) for `req` as well, whose extremes are
   * `extremes`: exactly `push` of each of them in order.
   */
  pushRunRef(req: number, run: number, extremes: GapExtremes): void {
    const i = req & this.mask;
    let c = this.refTail[i];
    if (c < 0 || this.refFill[i] === CHUNK) {
      const n = this.allocate();
      if (c < 0) this.refHead[i] = n;
      else this.next[c] = n;
      this.refTail[i] = n;
      this.refFill[i] = 0;
      c = n;
    }
    this.itlKeys[c * CHUNK + this.refFill[i]++] = run;
    this.runRefs[run]++;
    if (extremes.min < this.minGap[i]) this.minGap[i] = extremes.min;
    if (extremes.max > this.maxGap[i]) this.maxGap[i] = extremes.max;
    if (extremes.minPositive < this.minPositiveGap[i]) this.minPositiveGap[i] = extremes.minPositive;
  }

  /**
   * `req` reached its terminal state: a completed request's gaps stay folded (its extremes join
   * `completed`); any other's are taken back out of `runs`. Either way they are freed.
   */
  release(req: number, runs: GapRuns, isCompleted: boolean): void {
    const slot = req & this.mask;
    const c = this.head[slot];
    const r = this.refHead[slot];
    if (c < 0 && r < 0) return;
    if (isCompleted) {
      const done = this.completed;
      if (this.minGap[slot] < done.min) done.min = this.minGap[slot];
      if (this.maxGap[slot] > done.max) done.max = this.maxGap[slot];
      if (this.minPositiveGap[slot] < done.minPositive) done.minPositive = this.minPositiveGap[slot];
    } else {
      this.unfold(slot, runs);
    }
    // The request's chunks join the free list in one step.
    if (c >= 0) this.freeChain(c, this.tail[slot]);
    if (r >= 0) {
      this.dropRunRefs(slot);
      this.freeChain(r, this.refTail[slot]);
    }
    this.head[slot] = -1;
    this.tail[slot] = -1;
    this.fill[slot] = 0;
    this.refHead[slot] = -1;
    this.refTail[slot] = -1;
    this.refFill[slot] = 0;
    this.minGap[slot] = Number.POSITIVE_INFINITY;
    this.maxGap[slot] = Number.NEGATIVE_INFINITY;
    this.minPositiveGap[slot] = Number.POSITIVE_INFINITY;
  }

  /** The chunks `first … last` (linked by `next`) join the free list. */
  private freeChain(first: number, last: number): void {
    this.next[last] = this.freeHead;
    this.freeHead = first;
  }

  /** The request at `slot` lets go of its held runs; a run no request refers to any more is freed. */
  private dropRunRefs(slot: number): void {
    let c = this.refHead[slot];
    const last = this.refTail[slot];
    for (;;) {
      const n = c === last ? this.refFill[slot] : CHUNK;
      for (let k = c * CHUNK, end = k + n; k < end; k++) {
        const run = this.itlKeys[k];
        if (--this.runRefs[run] === 0) this.freeChain(run, this.runTail[run]);
      }
      if (c === last) break;
      c = this.next[c];
    }
  }

  /** Takes the gaps of every live request out of `runs` (a snapshot: what completed requests alone give). */
  unfoldLive(runs: GapRuns): void {
    for (let slot = 0; slot < this.head.length; slot++)
      if (this.head[slot] >= 0 || this.refHead[slot] >= 0) this.unfold(slot, runs);
  }

  /** Takes the held gaps of the request at `slot` back out of `runs`: its own, then its runs'. */
  private unfold(slot: number, runs: GapRuns): void {
    if (this.head[slot] >= 0) this.unfoldChain(this.head[slot], this.tail[slot], this.fill[slot], runs);
    let c = this.refHead[slot];
    if (c < 0) return;
    const last = this.refTail[slot];
    for (;;) {
      const n = c === last ? this.refFill[slot] : CHUNK;
      for (let k = c * CHUNK, end = k + n; k < end; k++) {
        const run = this.itlKeys[k];
        this.unfoldChain(run, this.runTail[run], this.runTailFill[run], runs);
      }
      if (c === last) break;
      c = this.next[c];
    }
  }

  /** Takes the gaps of the chain of chunks `first … last` (`lastFill` in the last) back out of `runs`. */
  private unfoldChain(first: number, last: number, lastFill: number, runs: GapRuns): void {
    let c = first;
    const gaps = this.gaps;
    const itlKeys = this.itlKeys;
    const throughputKeys = this.throughputKeys;
    for (;;) {
      const n = c === last ? lastFill : CHUNK;
      for (let i = c * CHUNK, end = i + n; i < end; i++)
        runs.foldManyAtKeys(gaps[i], itlKeys[i], throughputKeys[i], -1);
      if (c === last) break;
      c = this.next[c];
    }
  }

  /**
   * Where the next gap of the request at slot `i` goes: the free place in its tail chunk, or the
   * start of a new tail chunk (its `fill` is then 0).
   */
  private nextPosition(i: number): number {
    const c = this.tail[i];
    if (c >= 0 && this.fill[i] < CHUNK) return c * CHUNK + this.fill[i];
    const n = this.allocate();
    if (c < 0) this.head[i] = n;
    else this.next[c] = n;
    this.tail[i] = n;
    this.fill[i] = 0;
    return n * CHUNK;
  }

  private allocate(): number {
    let c = this.freeHead;
    if (c >= 0) {
      this.freeHead = this.next[c];
    } else {
      c = this.used++;
      if (c === this.next.length) {
        const next = new Int32Array(2 * c);
        next.set(this.next);
        this.next = next;
        const runTail = new Int32Array(2 * c);
        runTail.set(this.runTail);
        this.runTail = runTail;
        const runTailFill = new Int32Array(2 * c);
        runTailFill.set(this.runTailFill);
        this.runTailFill = runTailFill;
        const runRefs = new Int32Array(2 * c);
        runRefs.set(this.runRefs);
        this.runRefs = runRefs;
        const gaps = new Float64Array(2 * c * CHUNK);
        gaps.set(this.gaps);
        this.gaps = gaps;
        const itlKeys = new Int32Array(2 * c * CHUNK);
        itlKeys.set(this.itlKeys);
        this.itlKeys = itlKeys;
        const throughputKeys = new Int32Array(2 * c * CHUNK);
        throughputKeys.set(this.throughputKeys);
        this.throughputKeys = throughputKeys;
      }
    }
    this.next[c] = -1;
    return c;
  }
}
