import { type RowStore, type RowWindow, relayoutI32 } from "../util/rowWindow.js";
import { DDSketch } from "./ddsketch.js";
import { PartitionedMoments } from "./moments.js";

/**
 * Token gaps into the ITL and per-user output throughput distributions.
 *
 * Bins: one weighted insert per run of equal gaps instead of two inserts per token — the tokens of
 * one pass share their gap, so consecutive equal gaps are only counted, and the run goes into each
 * sketch with one `DDSketch.addCountAtKey` when the gap changes or a sketch is read. Bin counts,
 * min and max do not depend on the order of the samples.
 *
 * Moments (mean, std): Welford per *partition* — the worker whose pass delivered the token — and
 * combined in partition order when read (metrics/moments.ts), so they do not depend on how the
 * replay interleaves workers either (test/metrics/collector.gaps.property.test.ts keeps the
 * token-by-token reference).
 */
export class GapRuns {
  private readonly itlSketch = new DDSketch();
  private readonly throughputSketch = new DDSketch();
  readonly itlMoments = new PartitionedMoments();
  readonly throughputMoments = new PartitionedMoments();
  /** The run of equal gaps folded but not yet in the sketches (`runCount` × `runGap`, its two keys). */
  private runGap = Number.NaN;
  private runCount = 0;
  private runItlKey = 0;
  private runThroughputKey = 0;
  /** Keys of the latest gap `keysOf` was asked for (a pass's held gaps share them), and `1000 / gap`. */
  private keyedGap = Number.NaN;
  private keyedRate = 0;
  itlKey = 0;
  throughputKey = 0;

  /** ITL sketch (ms), every gap folded so far included; its own moments are not kept (`itlMoments`). */
  get itl(): DDSketch {
    this.flush();
    return this.itlSketch;
  }

  /**
   * Per-user output throughput sketch (tokens/s, 1000 / gap for gaps > 0), every gap so far
   * included; its own moments are not kept (`throughputMoments`).
   */
  get perUserThroughput(): DDSketch {
    this.flush();
    return this.throughputSketch;
  }

  /** Folds one gap delivered by partition `partition`. */
  fold(gap: number, partition: number): void {
    this.foldMany(gap, partition, 1);
  }

  /** Folds `count` equal gaps delivered by `partition` (the tokens of one pass): exactly `count` × `fold`. */
  foldMany(gap: number, partition: number, count: number): void {
    this.keysOf(gap);
    this.foldManyAtKeys(gap, this.itlKey, this.throughputKey, partition, count);
  }

  /**
   * Sets `itlKey` and `throughputKey` to the sketch keys of `gap` (and of `1000 / gap`), with one
   * logarithm each per run of equal gaps asked for.
   */
  keysOf(gap: number): void {
    if (gap === this.keyedGap) return;
    this.keyedGap = gap;
    this.keyedRate = gap > 0 ? 1000 / gap : 0;
    this.itlKey = this.itlSketch.key(gap);
    this.throughputKey = gap > 0 ? this.throughputSketch.key(this.keyedRate) : 0;
  }

  /** `fold(gap, partition)` with its keys from `keysOf(gap)` (held gaps keep them). */
  foldAtKeys(gap: number, itlKey: number, throughputKey: number, partition: number): void {
    this.foldManyAtKeys(gap, itlKey, throughputKey, partition, 1);
  }

  private foldManyAtKeys(
    gap: number,
    itlKey: number,
    throughputKey: number,
    partition: number,
    count: number,
  ): void {
    if (Number.isFinite(gap)) {
      this.itlMoments.addMany(partition, gap, count);
      if (gap > 0)
        this.throughputMoments.addMany(partition, gap === this.keyedGap ? this.keyedRate : 1000 / gap, count);
    }
    if (gap === this.runGap) {
      this.runCount += count;
      return;
    }
    this.flush();
    this.runGap = gap;
    this.runCount = count;
    this.runItlKey = itlKey;
    this.runThroughputKey = throughputKey;
  }

  /** Puts the pending run into the sketches: one weighted insert each. */
  private flush(): void {
    const count = this.runCount;
    if (count === 0) return;
    const gap = this.runGap;
    // A key is ignored for values in the zero bucket (gap ≤ minValue).
    this.itlSketch.addCountAtKey(gap, this.runItlKey, count);
    if (gap > 0) this.throughputSketch.addCountAtKey(1000 / gap, this.runThroughputKey, count);
    this.runCount = 0;
    this.runGap = Number.NaN;
  }
}

/** Gaps per chunk of the arena. */
const CHUNK = 32;
const INITIAL_CHUNKS = 64;

/**
 * Token gaps held per request until its terminal state (when a request may be cut off), in one
 * chunked `Float64Array` arena instead of an array per request: each request's gaps are a linked
 * list of chunks of `CHUNK`, recycled through a free list at its terminal state, so memory follows
 * the gaps in flight and holding a gap allocates nothing (the arena grows by doubling).
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
  private mask: number;

  constructor(window: RowWindow) {
    const n = window.capacity;
    this.mask = window.mask;
    this.head = new Int32Array(n).fill(-1);
    this.tail = new Int32Array(n).fill(-1);
    this.fill = new Int32Array(n);
    const store: RowStore = {
      relayout: (first, end, oldMask, capacity) => {
        this.head = relayoutI32(this.head, first, end, oldMask, capacity, -1);
        this.tail = relayoutI32(this.tail, first, end, oldMask, capacity, -1);
        this.fill = relayoutI32(this.fill, first, end, oldMask, capacity, 0);
        this.mask = capacity - 1;
      },
    };
    window.register(store);
  }

  /** Holds `gap` of `req` with its keys (`itlKey = itl.key(gap)`, `throughputKey` that of `1000 / gap`). */
  push(req: number, gap: number, itlKey: number, throughputKey: number): void {
    const i = req & this.mask;
    let c = this.tail[i];
    let f = this.fill[i];
    if (c < 0) {
      c = this.allocate();
      this.head[i] = c;
      this.tail[i] = c;
      f = 0;
    } else if (f === CHUNK) {
      const n = this.allocate();
      this.next[c] = n;
      this.tail[i] = n;
      c = n;
      f = 0;
    }
    const at = c * CHUNK + f;
    this.gaps[at] = gap;
    this.itlKeys[at] = itlKey;
    this.throughputKeys[at] = throughputKey;
    this.fill[i] = f + 1;
  }

  /**
   * Folds `req`'s held gaps into `runs` in token order, as delivered by `partition` (none when
   * `runs` is null), and frees them.
   */
  release(req: number, runs: GapRuns | null, partition: number): void {
    const slot = req & this.mask;
    let c = this.head[slot];
    if (c < 0) return;
    const last = this.tail[slot];
    const gaps = this.gaps;
    const itlKeys = this.itlKeys;
    const throughputKeys = this.throughputKeys;
    const next = this.next;
    for (;;) {
      const n = c === last ? this.fill[slot] : CHUNK;
      if (runs !== null)
        for (let i = c * CHUNK, end = i + n; i < end; i++)
          runs.foldAtKeys(gaps[i], itlKeys[i], throughputKeys[i], partition);
      const following = next[c];
      next[c] = this.freeHead;
      this.freeHead = c;
      if (c === last) break;
      c = following;
    }
    this.head[slot] = -1;
    this.tail[slot] = -1;
    this.fill[slot] = 0;
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
