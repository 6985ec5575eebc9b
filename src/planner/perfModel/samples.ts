/**
 * Sample bookkeeping of the Planner's perf model: a fixed-window moving average that ignores the
 * idle period before traffic (`_MovingAverage` of Dynamo 1.6's `planner/core/perf_model/ais_adapter.py`
 * and `engine_query.py`), and the regression stores' spatially balanced retention, which keeps the
 * retained samples spread over the observed operating range instead of letting one sustained
 * operating point push everything else out, as a FIFO would (`ai-dynamo/aisimulate@070638b:docs/fpm-recursive-regression.md`
 * "Sample retention and total tuning cost").
 */

/** Fixed-window mean that skips values until the first positive one (pre-traffic idle); negatives count as 0. */
export class MovingAverage {
  private readonly values: number[] = [];
  private sum = 0;
  private seenNonzero = false;

  constructor(private readonly window: number) {}

  add(value: number): void {
    if (value > 0) this.seenNonzero = true;
    if (!this.seenNonzero) return;
    const v = Math.max(0, value);
    this.values.push(v);
    this.sum += v;
    if (this.values.length > this.window) this.sum -= this.values.shift() ?? 0;
  }

  get value(): number {
    return this.values.length === 0 ? 0 : this.sum / this.values.length;
  }

  get length(): number {
    return this.values.length;
  }
}

export interface Sample {
  readonly x: readonly number[];
  readonly y: number;
}

/**
 * Equal-width cells per feature axis over the observed range of log(1 + x) (the fit itself uses the
 * raw x). When the total exceeds the cap, the oldest sample of the most populated cell is retired.
 * Bounds only widen; a change re-buckets every sample in current bucket order, which is why "oldest"
 * means "first in its cell", not globally oldest. The reference keeps its cells in a Rust `HashMap`,
 * so which of two equally full cells loses a sample is arbitrary there; here it is the cell created
 * first, a fixed order.
 */
export class BucketedSamples {
  private readonly buckets = new Map<string, Sample[]>();
  private readonly lo: number[];
  private readonly hi: number[];
  private total = 0;

  constructor(
    dims: number,
    private readonly bucketsPerAxis: number,
    private readonly maxSamples: number,
  ) {
    this.lo = new Array<number>(dims).fill(Number.POSITIVE_INFINITY);
    this.hi = new Array<number>(dims).fill(Number.NEGATIVE_INFINITY);
  }

  get size(): number {
    return this.total;
  }

  /** Retained samples in bucket order (the order the regression sees them). */
  all(): Sample[] {
    const out: Sample[] = [];
    for (const bucket of this.buckets.values()) out.push(...bucket);
    return out;
  }

  /**
   * Writes the retained samples in bucket order (`all()`'s order) as rows of `x` (`dims` features
   * each) and targets of `y`, both long enough; returns how many.
   */
  writeRows(x: Float64Array, y: Float64Array): number {
    const dims = this.lo.length;
    let n = 0;
    for (const bucket of this.buckets.values()) {
      for (const s of bucket) {
        for (let k = 0; k < dims; k++) x[n * dims + k] = s.x[k];
        y[n++] = s.y;
      }
    }
    return n;
  }

  add(x: readonly number[], y: number): void {
    if (this.widenBounds(x) && this.total > 0) this.rebuild();
    this.push({ x: [...x], y });
    this.total += 1;
    if (this.total <= this.maxSamples) return;
    let fattest: string | null = null;
    let most = -1;
    for (const [key, bucket] of this.buckets) {
      if (bucket.length > most) {
        most = bucket.length;
        fattest = key;
      }
    }
    if (fattest === null) return;
    const bucket = this.buckets.get(fattest) ?? [];
    bucket.shift();
    this.total -= 1;
    if (bucket.length === 0) this.buckets.delete(fattest);
  }

  private key(x: readonly number[]): string {
    const parts: number[] = [];
    for (let i = 0; i < x.length; i++) {
      const lo = this.lo[i];
      const hi = this.hi[i];
      if (hi <= lo) {
        parts.push(0);
        continue;
      }
      const idx = Math.trunc(((Math.log1p(x[i]) - lo) / (hi - lo)) * this.bucketsPerAxis);
      parts.push(Math.max(0, Math.min(idx, this.bucketsPerAxis - 1)));
    }
    return parts.join(",");
  }

  private widenBounds(x: readonly number[]): boolean {
    let changed = false;
    for (let i = 0; i < x.length; i++) {
      const v = Math.log1p(x[i]);
      if (v < this.lo[i]) {
        this.lo[i] = v;
        changed = true;
      }
      if (v > this.hi[i]) {
        this.hi[i] = v;
        changed = true;
      }
    }
    return changed;
  }

  private rebuild(): void {
    const all = this.all();
    this.buckets.clear();
    for (const s of all) this.push(s);
  }

  private push(s: Sample): void {
    const key = this.key(s.x);
    const bucket = this.buckets.get(key);
    if (bucket === undefined) this.buckets.set(key, [s]);
    else bucket.push(s);
  }
}
