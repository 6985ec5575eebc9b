/**
 * DDSketch: a relative-accuracy quantile sketch (Masson, Rim & Lee, VLDB 2019), hand-written to
 * reproduce the semantics of the Rust `sketches-ddsketch` crate that the aisimulate collector uses
 * for its streaming distributions (ITL gaps and per-user output throughput; `ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`,
 * `ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`).
 *
 * Mapping: `gamma = (1 + α)/(1 − α)`, `key(v) = ceil(ln v / ln gamma) + offset` for `v > minValue`,
 * where `offset = 1 − trunc(ln(minValue)/ln gamma)` keeps every positive key ≥ 1. Bucket `k` holds
 * `(gamma^(k−offset−1), gamma^(k−offset)]` and is represented by `2·gamma^(k−offset)/(1 + gamma)`,
 * which is within relative error α of every value in the bucket.
 *
 * Values `≤ minValue` (including any negative value) go to a separate zero bucket represented by 0;
 * the sketch is meant for non-negative samples. Non-finite samples are dropped entirely.
 *
 * Bins live in a dense `Float64Array` window that grows by doubling up to `maxBins`. When the keys
 * would span more than `maxBins` bins, the lowest bins are collapsed into the lowest kept bin, so
 * the upper quantiles stay accurate and the lowest ones degrade (the crate's behaviour, without its
 * 128-bin growth-step quirks).
 *
 * `count`, `min`, `max` and `sum` are exact; `mean` and (population) `variance` use Welford's
 * update, stepped once per sample (also within `addMany`), so `addMany(v, c)` leaves exactly the
 * state of `c` × `add(v)`: bin counts are integers and order-free, the moments see the same
 * additions in the same order.
 */

export interface DDSketchOptions {
  /** Relative accuracy α; default 0.001. */
  readonly relativeAccuracy?: number;
  /** Bin limit; default 32,768. */
  readonly maxBins?: number;
  /** Values at or below this go to the zero bucket; default 1e-9 (the crate's default). */
  readonly minValue?: number;
}

export const DEFAULT_RELATIVE_ACCURACY = 0.001;
export const DEFAULT_MAX_BINS = 32_768;
export const DEFAULT_MIN_VALUE = 1e-9;
const INITIAL_BINS = 128;
/** How far inside its bucket's bounds `keyNear` trusts its last key (relative). */
const NEAR_MARGIN = 1e-9;

function checkCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
}

export class DDSketch {
  readonly relativeAccuracy: number;
  readonly maxBins: number;
  readonly minValue: number;
  readonly gamma: number;
  private readonly gammaLn: number;
  private readonly offset: number;
  /** `keyNear`'s last bucket and the open interval of values certain to map to it (empty at first). */
  private nearKey = 0;
  private nearLo = Number.POSITIVE_INFINITY;
  private nearHi = Number.NEGATIVE_INFINITY;

  /** Dense counts; `bins[i]` is the count of key `lo + i`. Empty until the first positive sample. */
  private bins: Float64Array = new Float64Array(0);
  private lo = 0;
  /** Lowest / highest non-empty key (valid while `storeCount > 0`). */
  private minKey = 0;
  private maxKey = 0;
  private storeCount = 0;
  private zeroCount = 0;

  private n = 0;
  private minV = Number.POSITIVE_INFINITY;
  private maxV = Number.NEGATIVE_INFINITY;
  private total = 0;
  private wMean = 0;
  private wM2 = 0;

  constructor(options: DDSketchOptions = {}) {
    const alpha = options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY;
    const maxBins = options.maxBins ?? DEFAULT_MAX_BINS;
    const minValue = options.minValue ?? DEFAULT_MIN_VALUE;
    if (!(alpha > 0 && alpha < 1)) throw new RangeError(`relativeAccuracy must be in (0, 1), got ${alpha}`);
    if (!Number.isInteger(maxBins) || maxBins < 1) throw new RangeError(`maxBins must be a positive integer`);
    if (!(minValue > 0 && Number.isFinite(minValue))) throw new RangeError(`minValue must be positive`);
    this.relativeAccuracy = alpha;
    this.maxBins = maxBins;
    this.minValue = minValue;
    const x = (2 * alpha) / (1 - alpha);
    this.gamma = 1 + x;
    this.gammaLn = Math.log1p(x);
    this.offset = 1 - Math.trunc(Math.log(minValue) / this.gammaLn);
    this.pinFieldStates();
  }

  /**
   * Puts the counters and sums in the states V8 would otherwise move them to during the replay:
   * stored a fractional double once, they hold doubles (weighted counts and sums do) and are
   * mutable from the first sketch on. A representation change later (an integer field taking its
   * first double) gives every later sketch a new hidden class, and the compiled code that read a
   * sketch's fields, or a field holding a sketch (`metrics/tokenGaps.ts` `GapRuns`), is thrown
   * away and compiled again (docs/performance.md "Field states"). Nothing reads the pinning value.
   */
  private pinFieldStates(): void {
    this.n = this.storeCount = this.zeroCount = this.total = this.wMean = this.wM2 = 0.5;
    this.n = this.storeCount = this.zeroCount = this.total = this.wMean = this.wM2 = 0;
  }

  /** Number of samples kept (non-finite samples are not counted). */
  get count(): number {
    return this.n;
  }
  /** Exact smallest sample; NaN when empty. */
  get min(): number {
    return this.n === 0 ? Number.NaN : this.minV;
  }
  /** Exact largest sample; NaN when empty. */
  get max(): number {
    return this.n === 0 ? Number.NaN : this.maxV;
  }
  /** Plain running sum of the samples; 0 when empty. */
  get sum(): number {
    return this.total;
  }
  /** Welford mean; 0 when empty. */
  get mean(): number {
    return this.wMean;
  }
  /** Welford population variance (÷n); 0 when empty. */
  get variance(): number {
    return this.n === 0 ? 0 : Math.max(0, this.wM2 / this.n);
  }
  /** Bins currently allocated (≤ maxBins); for tests and diagnostics. */
  get allocatedBins(): number {
    return this.bins.length;
  }

  /** Bucket key of a value (0 = zero bucket). */
  key(value: number): number {
    return value > this.minValue ? Math.ceil(Math.log(value) / this.gammaLn) + this.offset : 0;
  }

  /**
   * `key(value)`, with one logarithm per bucket that a series of nearby values passes through
   * instead of one per value: the token gaps of a decode run (metrics/tokenGaps.ts) grow by a few
   * microseconds a pass, so most fall in the bucket of the one before. The bucket last computed is
   * kept with an open interval of values certain to map to it — its bounds `e^((k − offset − 1) ·
   * ln gamma)` and `e^((k − offset) · ln gamma)` pulled inwards by a relative 10⁻⁹ — so that
   * inside it `ln v / ln gamma` lies at least ~5·10⁻⁷ from an integer, far beyond the rounding of
   * the logarithm and the division (about 10⁻¹¹ at the largest keys): `ceil` gives the same key.
   */
  keyNear(value: number): number {
    if (value > this.nearLo && value < this.nearHi) return this.nearKey;
    const k = this.key(value);
    if (k > 0) {
      const e = k - this.offset;
      this.nearKey = k;
      this.nearLo = Math.max(this.minValue, Math.exp((e - 1) * this.gammaLn) * (1 + NEAR_MARGIN));
      this.nearHi = Math.exp(e * this.gammaLn) * (1 - NEAR_MARGIN);
    }
    return k;
  }

  /** Representative value of a bucket key: `2·gamma^(k−offset)/(1+gamma)`, 0 for the zero bucket. */
  value(key: number): number {
    return key === 0 ? 0 : (2 * Math.exp((key - this.offset) * this.gammaLn)) / (1 + this.gamma);
  }

  add(value: number): void {
    this.addMany(value, 1);
  }

  /**
   * Adds `value` `count` times: bit-identical to `count` × `add(value)`, with one bin insert (no
   * logarithm per sample) and only the moments stepped per sample. `count` must be a non-negative
   * safe integer.
   */
  addMany(value: number, count: number): void {
    checkCount(count);
    if (count === 0 || !Number.isFinite(value)) return;
    this.insert(value, count);
    // Welford, one step per sample: the same additions in the same order as single adds.
    let n = this.n;
    let mean = this.wMean;
    let m2 = this.wM2;
    let total = this.total;
    for (let i = 0; i < count; i++) {
      n++;
      const delta = value - mean;
      mean += delta / n;
      m2 += delta * (value - mean);
      total += value;
    }
    this.setMoments(n, mean, m2, total);
  }

  /** Stores the Welford state after a batch of steps taken on local copies. */
  private setMoments(n: number, mean: number, m2: number, total: number): void {
    this.n = n;
    this.wMean = mean;
    this.wM2 = m2;
    this.total = total;
  }

  /**
   * `a.addMany(va, count)` and `b.addMany(vb, count)` (two distinct sketches), bit-identical to
   * them, with both moment chains stepped in one loop: each step waits on its division, so two
   * independent chains run in about the time of one.
   */
  static addManyPair(a: DDSketch, va: number, b: DDSketch, vb: number, count: number): void {
    DDSketch.addManyPairAtKeys(a, va, a.key(va), b, vb, b.key(vb), count);
  }

  /**
   * `addManyPair` with the bucket keys already known (`ka = a.key(va)`, `kb = b.key(vb)`; a key
   * depends only on the value and the sketch's options), so a caller that holds samples can take
   * their keys once per run of equal values.
   */
  static addManyPairAtKeys(
    a: DDSketch,
    va: number,
    ka: number,
    b: DDSketch,
    vb: number,
    kb: number,
    count: number,
  ): void {
    if (!Number.isFinite(va) || !Number.isFinite(vb) || a === b) {
      a.addMany(va, count);
      b.addMany(vb, count);
      return;
    }
    checkCount(count);
    if (count === 0) return;
    a.insertAt(va, ka, count);
    b.insertAt(vb, kb, count);
    let na = a.n;
    let meanA = a.wMean;
    let m2A = a.wM2;
    let totalA = a.total;
    let nb = b.n;
    let meanB = b.wMean;
    let m2B = b.wM2;
    let totalB = b.total;
    for (let i = 0; i < count; i++) {
      na++;
      nb++;
      const deltaA = va - meanA;
      const deltaB = vb - meanB;
      meanA += deltaA / na;
      meanB += deltaB / nb;
      m2A += deltaA * (va - meanA);
      m2B += deltaB * (vb - meanB);
      totalA += va;
      totalB += vb;
    }
    a.setMoments(na, meanA, m2A, totalA);
    b.setMoments(nb, meanB, m2B, totalB);
  }

  /**
   * The order-free part of `addMany(value, count)` alone — bins, count, min and max — with
   * `key = this.key(value)` given; mean, variance and sum are left as they are. For owners that
   * keep the moments of their samples themselves (metrics/tokenGaps.ts: per worker, so that they
   * do not depend on how workers' samples interleave).
   */
  addCountAtKey(value: number, key: number, count: number): void {
    checkCount(count);
    if (count === 0 || !Number.isFinite(value)) return;
    this.insertAt(value, key, count);
    this.n += count;
  }

  /**
   * For each i < n: `addCountAtKey(values[i], keys[i], counts[i])` when the count is positive,
   * `removeCountAtKey(values[i], keys[i], −counts[i])` when negative; with `positiveOnly`, values
   * ≤ 0 are left out (they stand for no sample). Values are read from the arrays, not passed one
   * call each (a double crossing a call that is not inlined is a heap number).
   */
  foldCountsAtKeys(
    values: Float64Array,
    keys: Int32Array,
    counts: Float64Array,
    n: number,
    positiveOnly: boolean,
  ): void {
    for (let i = 0; i < n; i++) {
      const value = values[i];
      const count = counts[i];
      if (!Number.isFinite(value) || (positiveOnly && !(value > 0))) continue;
      if (count > 0) {
        this.insertAt(value, keys[i], count);
        this.n += count;
      } else if (count < 0) {
        this.removeAt(value, keys[i], -count);
      }
    }
  }

  /**
   * Takes back `count` samples equal to `value` that `addCountAtKey(value, key, ·)` added: their
   * bin (or the zero bucket) and the count. Min and max are left as they are (an owner that takes
   * samples back keeps its own extremes: `setExtremes`).
   */
  removeCountAtKey(value: number, key: number, count: number): void {
    checkCount(count);
    if (count === 0 || !Number.isFinite(value)) return;
    this.removeAt(value, key, count);
  }

  private removeAt(value: number, key: number, count: number): void {
    if (value > this.minValue) {
      // A key below the window was folded into its lowest bin when the window moved.
      const k = Math.max(key, this.minKey);
      this.bins[k - this.lo] -= count;
      this.storeCount -= count;
    } else {
      this.zeroCount -= count;
    }
    this.n -= count;
  }

  /** Sets the exact smallest and largest sample (an owner that took samples back knows them). */
  setExtremes(min: number, max: number): void {
    this.minV = min;
    this.maxV = max;
  }

  /** An independent copy of this sketch. */
  clone(): DDSketch {
    return new DDSketch({
      relativeAccuracy: this.relativeAccuracy,
      maxBins: this.maxBins,
      minValue: this.minValue,
    }).copyFrom(this);
  }

  /**
   * Makes this sketch a copy of `other` (same accuracy, bins and minimum value); returns it. A
   * holder takes a snapshot's sketches this way rather than by replacing its own: a field holding
   * a sketch that is assigned again stops being a constant to V8, which throws away the code
   * compiled on it (docs/performance.md "Field states").
   */
  copyFrom(other: DDSketch): this {
    if (
      other.relativeAccuracy !== this.relativeAccuracy ||
      other.maxBins !== this.maxBins ||
      other.minValue !== this.minValue
    ) {
      throw new Error("internal: DDSketch.copyFrom between sketches of different parameters");
    }
    this.nearKey = other.nearKey;
    this.nearLo = other.nearLo;
    this.nearHi = other.nearHi;
    this.bins = other.bins.slice();
    this.lo = other.lo;
    this.minKey = other.minKey;
    this.maxKey = other.maxKey;
    this.storeCount = other.storeCount;
    this.zeroCount = other.zeroCount;
    this.n = other.n;
    this.minV = other.minV;
    this.maxV = other.maxV;
    this.total = other.total;
    this.wMean = other.wMean;
    this.wM2 = other.wM2;
    return this;
  }

  /** The order-free part of adding a finite `value` `count` times: its bin (or the zero bucket), min and max. */
  private insert(value: number, count: number): void {
    this.insertAt(value, value > this.minValue ? this.key(value) : 0, count);
  }

  /** `insert` with `key = this.key(value)` given. */
  private insertAt(value: number, key: number, count: number): void {
    if (value > this.minValue) this.addKey(key, count);
    else this.zeroCount += count;
    if (value < this.minV) this.minV = value;
    if (value > this.maxV) this.maxV = value;
  }

  /**
   * Value at quantile `q`: `q ≤ 0` → exact min, `q ≥ 1` → exact max; otherwise the representative
   * value of the bucket holding 0-based rank `floor(q·(count−1))`, clamped to [min, max]
   * (the crate's `key_at_rank(floor(q·(n−1)) + 1)` with a 1-based rank). NaN when empty.
   */
  quantile(q: number): number {
    if (Number.isNaN(q)) throw new RangeError("quantile must be a number");
    if (this.n === 0) return Number.NaN;
    if (q <= 0) return this.minV;
    if (q >= 1) return this.maxV;
    const rank = Math.floor(q * (this.n - 1));
    const v = rank < this.zeroCount ? 0 : this.value(this.keyAtRank(rank - this.zeroCount));
    return Math.min(Math.max(v, this.minV), this.maxV);
  }

  /** Key of the bucket holding 0-based rank `rank` among the positive samples. */
  private keyAtRank(rank: number): number {
    const bins = this.bins;
    const end = this.maxKey - this.lo;
    let acc = 0;
    for (let i = this.minKey - this.lo; i <= end; i++) {
      acc += bins[i];
      if (acc > rank) return this.lo + i;
    }
    return this.maxKey;
  }

  private addKey(key: number, count: number): void {
    if (this.storeCount === 0) {
      if (this.bins.length === 0) this.bins = new Float64Array(Math.min(INITIAL_BINS, this.maxBins));
      this.lo = key - (this.bins.length >> 1);
      this.minKey = key;
      this.maxKey = key;
    } else {
      let k = key;
      if (k > this.maxKey && k - this.minKey >= this.maxBins) {
        // New top key: keep the window [k − maxBins + 1, k] and fold everything below it.
        this.relayout(k - this.maxBins + 1, this.maxBins);
      } else if (k < this.maxKey - this.maxBins + 1) {
        // Too far below the top: collapse into the lowest bin of the full window.
        k = this.maxKey - this.maxBins + 1;
      }
      if (k < this.lo || k >= this.lo + this.bins.length) this.grow(k);
      if (k < this.minKey) this.minKey = k;
      if (k > this.maxKey) this.maxKey = k;
      this.bins[k - this.lo] += count;
      this.storeCount += count;
      return;
    }
    this.bins[key - this.lo] += count;
    this.storeCount += count;
  }

  /** Resizes / recentres the window so it covers [min(minKey,k), max(maxKey,k)] (span ≤ maxBins). */
  private grow(k: number): void {
    const newMin = Math.min(this.minKey, k);
    const newMax = Math.max(this.maxKey, k);
    const span = newMax - newMin + 1;
    let cap = Math.max(this.bins.length, 1);
    while (cap < 2 * span && cap < this.maxBins) cap *= 2;
    cap = Math.min(cap, this.maxBins);
    const slack = cap - span;
    // Leave most of the slack on the side the keys are moving towards.
    const newLo = k > this.maxKey ? newMin - (slack >> 2) : newMax - cap + 1 + (slack >> 2);
    this.relayout(newLo, cap);
  }

  /**
   * Moves the counts into a window starting at `newLo` with `newCap` bins (reusing the buffer when
   * the size is unchanged); counts of keys below `newLo` are folded into key `newLo`.
   * Precondition: `maxKey < newLo + newCap` or every key is below `newLo`.
   */
  private relayout(newLo: number, newCap: number): void {
    const old = this.bins;
    const oldLo = this.lo;
    let folded = 0;
    const foldEnd = Math.min(newLo, this.maxKey + 1);
    for (let key = this.minKey; key < foldEnd; key++) folded += old[key - oldLo];
    const keepFrom = Math.max(this.minKey, newLo);
    const target = newCap === old.length ? old : new Float64Array(newCap);
    if (keepFrom <= this.maxKey) {
      const src = keepFrom - oldLo;
      const srcEnd = this.maxKey - oldLo + 1;
      const dst = keepFrom - newLo;
      const dstEnd = dst + (srcEnd - src);
      if (target === old) {
        old.copyWithin(dst, src, srcEnd);
        old.fill(0, 0, dst);
        old.fill(0, dstEnd);
      } else {
        target.set(old.subarray(src, srcEnd), dst);
      }
    } else if (target === old) {
      old.fill(0);
    }
    if (folded > 0) target[0] += folded;
    this.bins = target;
    this.lo = newLo;
    this.minKey = keepFrom;
    if (folded > 0) this.minKey = newLo;
  }
}
