/**
 * `exactStats` (distribution.ts) of a distribution fed value by value over repeated passes, in
 * bounded memory: the summary's exact distributions (TTFT, TTST, TPOT, E2E) of a run whose
 * request log does not fit in memory (metrics/requestLog.ts).
 *
 * Each pass feeds every value again, in the same order. The first pass counts and sums the finite
 * values and keeps them while there are at most `collectLimit`: then the result is
 * `exactStats` of them, the same computation as for a whole-run array. Past that, the order
 * statistics are found by radix selection on the values' 64-bit order-preserving keys, 16 bits a
 * pass (a histogram of the next 16 bits of the keys sharing a target's prefix), collecting and
 * sorting a target's group as soon as it holds at most `collectLimit / 8` values; the second pass
 * also sums the squared deviations from the mean in input order, as `exactStats` does. Every
 * statistic is the exact one `exactStats` gives (test/metrics/exactStatsBuilder.test.ts).
 */
import { type DistStats, emptyStats, exactStats, nearestRank } from "./distribution.js";

/** Values kept in memory at most (8 MiB of doubles). */
export const DEFAULT_COLLECT_LIMIT = 1 << 20;

const PERCENTILES = [50, 75, 90, 95, 99] as const;

/** The float's bits as one shared scratch (little-endian: [lo, hi]). */
const scratch = new Float64Array(1);
const words = new Uint32Array(scratch.buffer);

/** Order-preserving key of a double, as [hi, lo] 32-bit words (negatives flipped, positives sign-set). */
function keyWords(v: number): void {
  scratch[0] = v;
  const hi = words[1];
  if ((hi & 0x80000000) !== 0) {
    words[1] = ~hi >>> 0;
    words[0] = ~words[0] >>> 0;
  } else {
    words[1] = (hi | 0x80000000) >>> 0;
  }
}

/** The double whose key is [hi, lo]. */
function fromKey(hi: number, lo: number): number {
  if ((hi & 0x80000000) !== 0) {
    words[1] = (hi & 0x7fffffff) >>> 0;
    words[0] = lo >>> 0;
  } else {
    words[1] = ~hi >>> 0;
    words[0] = ~lo >>> 0;
  }
  return scratch[0];
}

/** Keys sharing the top `16 × level` bits: `hi`, and `lo` for levels 3–4 (the unused bits zero). */
interface Group {
  readonly level: number;
  readonly hi: number;
  readonly lo: number;
  /** Values in the group (from the histogram that formed it). */
  readonly count: number;
  /** The targets inside: index into `targets`, rank within the group. */
  readonly members: { readonly target: number; readonly rank: number }[];
  /** This pass: a histogram of the next 16 bits, or the group's values. */
  hist: Uint32Array | null;
  values: Float64Array | null;
  filled: number;
}

export class ExactStatsBuilder {
  private readonly collectLimit: number;
  private pass = 0;
  private m = 0;
  private sum = 0;
  private ss = 0;
  private mean = 0;
  private collected: Float64Array | null = new Float64Array(1024);
  /** The first pass's histogram of the keys' top 16 bits. */
  private top: Uint32Array | null = new Uint32Array(65536);
  /** Ranks wanted: min, max, then PERCENTILES; their values once found. */
  private ranks: number[] = [];
  private found: number[] = [];
  private groups: Group[] = [];
  private stats: DistStats | null = null;

  constructor(collectLimit = DEFAULT_COLLECT_LIMIT) {
    this.collectLimit = Math.max(1, Math.floor(collectLimit));
  }

  /** Whether the statistics are known (no more passes needed). */
  get done(): boolean {
    return this.stats !== null;
  }

  /** Feeds one value of the current pass (non-finite values are dropped, as `exactStats` does). */
  add(v: number): void {
    if (this.stats !== null || !Number.isFinite(v)) return;
    if (this.pass === 0) {
      this.addFirst(v);
      return;
    }
    if (this.pass === 1) {
      const d = v - this.mean;
      this.ss += d * d;
    }
    keyWords(v);
    const hi = words[1];
    const lo = words[0];
    const groups = this.groups;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g];
      if (!matches(group, hi, lo)) continue;
      if (group.hist !== null) group.hist[nextBits(group.level, hi, lo)]++;
      else group.values![group.filled++] = v;
    }
  }

  private addFirst(v: number): void {
    this.sum += v;
    const c = this.collected;
    if (c !== null) {
      if (this.m < this.collectLimit) {
        if (this.m === c.length) {
          const grown = new Float64Array(Math.min(this.collectLimit, c.length * 2));
          grown.set(c);
          this.collected = grown;
        }
        this.collected![this.m] = v;
      } else {
        // Too many: radix selection from the second pass on, its histogram from what was kept.
        const top = this.top!;
        for (let i = 0; i < this.m; i++) {
          keyWords(c[i]);
          top[words[1] >>> 16]++;
        }
        this.collected = null;
      }
    }
    this.m++;
    // The top-digit histogram matters only once the values outgrow `collected`: it is built from
    // them then (`overflow`), not value by value while they fit.
    if (this.collected === null) {
      keyWords(v);
      this.top![words[1] >>> 16]++;
    }
  }

  /** Ends the current pass; `done` says whether another is needed. */
  endPass(): void {
    if (this.stats !== null) return;
    if (this.pass === 0) this.endFirst();
    else this.endRefinement();
    this.pass++;
  }

  private endFirst(): void {
    const m = this.m;
    if (this.collected !== null) {
      // Every value fits: the whole-array computation, on the same values in the same order.
      this.stats = m === 0 ? emptyStats() : exactStats(this.collected, m);
      this.collected = null;
      this.top = null;
      return;
    }
    this.mean = this.sum / m;
    this.ranks = [0, m - 1, ...PERCENTILES.map((p) => nearestRank(m, p))];
    this.found = this.ranks.map(() => Number.NaN);
    const top = this.top!;
    this.top = null;
    this.groups = [];
    this.formGroups(
      top,
      1,
      0,
      0,
      this.ranks.map((rank, target) => ({ target, rank })),
    );
  }

  /** Turns a histogram of 16-bit digits (below a prefix) into the groups holding `members`. */
  private formGroups(
    hist: Uint32Array,
    level: number,
    hiPrefix: number,
    loPrefix: number,
    members: readonly { readonly target: number; readonly rank: number }[],
  ): void {
    const byDigit = new Map<number, { target: number; rank: number }[]>();
    for (const m of members) {
      let below = 0;
      let digit = 0;
      while (below + hist[digit] <= m.rank) below += hist[digit++];
      const list = byDigit.get(digit) ?? [];
      list.push({ target: m.target, rank: m.rank - below });
      byDigit.set(digit, list);
    }
    for (const [digit, list] of byDigit) {
      let hi = hiPrefix;
      let lo = loPrefix;
      if (level === 1) hi = digit << 16;
      else if (level === 2) hi = (hiPrefix | digit) >>> 0;
      else if (level === 3) lo = digit << 16;
      else lo = (loPrefix | digit) >>> 0;
      if (level === 4) {
        // Every bit of the key is known: all the group's values are this one.
        const value = fromKey(hi >>> 0, lo >>> 0);
        for (const m of list) this.found[m.target] = value;
        continue;
      }
      this.groups.push({
        level,
        hi: hi >>> 0,
        lo: lo >>> 0,
        count: hist[digit],
        members: list,
        hist: null,
        values: null,
        filled: 0,
      });
    }
    this.prepareGroups();
  }

  /** Each pending group either collects its values (few enough) or histograms its next digit. */
  private prepareGroups(): void {
    const limit = Math.max(1, Math.floor(this.collectLimit / 8));
    for (const g of this.groups) {
      if (g.hist !== null || g.values !== null) continue;
      if (g.count <= limit) g.values = new Float64Array(g.count);
      else g.hist = new Uint32Array(65536);
    }
  }

  private endRefinement(): void {
    const groups = this.groups;
    this.groups = [];
    for (const g of groups) {
      if (g.values !== null) {
        const sorted = g.values.subarray(0, g.filled).sort();
        for (const m of g.members) this.found[m.target] = sorted[m.rank];
      } else {
        this.formGroups(g.hist!, g.level + 1, g.hi, g.lo, g.members);
      }
    }
    if (this.groups.length > 0) return;
    const f = this.found;
    this.stats = {
      mean: this.mean,
      min: f[0],
      max: f[1],
      median: f[2],
      p75: f[3],
      p90: f[4],
      p95: f[5],
      p99: f[6],
      std: Math.sqrt(this.ss / this.m),
    };
  }

  /** The statistics (once `done`). */
  result(): DistStats {
    if (this.stats === null) throw new Error("internal: exact statistics read before their last pass");
    return this.stats;
  }
}

function matches(g: Group, hi: number, lo: number): boolean {
  switch (g.level) {
    case 1:
      return hi >>> 16 === g.hi >>> 16;
    case 2:
      return hi === g.hi;
    case 3:
      return hi === g.hi && lo >>> 16 === g.lo >>> 16;
    default:
      return hi === g.hi && lo === g.lo;
  }
}

/** The 16 bits after a level's prefix. */
function nextBits(level: number, hi: number, lo: number): number {
  if (level === 1) return hi & 0xffff;
  if (level === 2) return lo >>> 16;
  return lo & 0xffff;
}

/**
 * Runs `feed` (one pass: every value, in order) as many times as the builders need, each value
 * going to the builder it names; returns when all are done.
 */
export function buildExactStats(builders: readonly ExactStatsBuilder[], feed: (pass: number) => void): void {
  for (let pass = 0; builders.some((b) => !b.done); pass++) {
    feed(pass);
    for (const b of builders) b.endPass();
  }
}
