/**
 * Sample bookkeeping of the legacy perf-model regressions (`ai-dynamo/dynamo@439d645:components/src/dynamo/planner/core/perf_model/base.py`): a fixed-window moving
 * average that ignores the idle period before traffic, and bucketed sample retirement that keeps the
 * retained samples spread over the observed operating range instead of letting one sustained operating
 * point push everything else out (as a plain FIFO would).
 */

/** Fixed-window mean that skips leading exact zeros (pre-traffic idle) until the first non-zero value. */
export class MovingAverage {
  private readonly values: number[] = [];
  private sum = 0;
  private seenNonzero = false;

  constructor(private readonly window: number) {}

  add(value: number): void {
    if (value === 0 && !this.seenNonzero) return;
    if (value !== 0) this.seenNonzero = true;
    if (this.values.length >= this.window) this.sum -= this.values.shift() ?? 0;
    this.values.push(value);
    this.sum += value;
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
 * Equal-width buckets per feature axis over the observed [min, max]. When the total exceeds the cap,
 * the oldest sample of the most populated bucket is retired (ties: first bucket in insertion order, as
 * a Python dict iterates). Bounds changes re-bucket every sample in current bucket order, which is why
 * "oldest" means "first in its bucket", not globally oldest.
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
      const idx = Math.trunc(((x[i] - lo) / (hi - lo)) * this.bucketsPerAxis);
      parts.push(Math.max(0, Math.min(idx, this.bucketsPerAxis - 1)));
    }
    return parts.join(",");
  }

  private widenBounds(x: readonly number[]): boolean {
    let changed = false;
    for (let i = 0; i < x.length; i++) {
      if (x[i] < this.lo[i]) {
        this.lo[i] = x[i];
        changed = true;
      }
      if (x[i] > this.hi[i]) {
        this.hi[i] = x[i];
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
