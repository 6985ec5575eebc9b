/** Count, mean and M2 of one stream, merged by the same pairwise update. */
class Moments {
  n = 0;
  mean = 0;
  m2 = 0;

  /** Adds `k` samples equal to `value`. */
  addBatch(value: number, k: number): void {
    if (k === 0) return;
    if (this.n === 0) {
      this.n = k;
      this.mean = value;
      this.m2 = 0;
      return;
    }
    const total = this.n + k;
    const delta = value - this.mean;
    this.mean += (delta * k) / total;
    this.m2 += (delta * delta * this.n * k) / total;
    this.n = total;
  }

  /** Adds the samples `other` summarizes. */
  merge(other: Moments): void {
    if (other.n === 0) return;
    if (this.n === 0) {
      this.n = other.n;
      this.mean = other.mean;
      this.m2 = other.m2;
      return;
    }
    const total = this.n + other.n;
    const delta = other.mean - this.mean;
    this.mean += (delta * other.n) / total;
    this.m2 += other.m2 + (delta * delta * this.n * other.n) / total;
    this.n = total;
  }
}

/**
 * Mean and variance of a sample stream kept per partition and combined in partition order at read
 * time, with Chan, Golub & LeVeque's pairwise update throughout.
 *
 * Why partitions: a worker's tokens always reach the collector in the same order, but the order
 * *between* workers depends on how the replay steps them (pass by pass, or a worker advanced
 * through a run of plain decode passes at once: engine/vllmEngine.ts `runPlainDecodes`). Running
 * moments depend on the order of their samples, so one global stream would make the mean and std
 * ITL of a run depend on the stepping. Per worker they do not, and combining the partitions in
 * index order makes them a function of the run alone.
 *
 * Within a partition, consecutive equal samples are counted and go in as one batch of k equal
 * values when the value changes (the tokens of one pass share their gap): mean += δ·k/(n+k),
 * M2 += δ²·n·k/(n+k) with δ = value − mean — the exact moments of the batch, one update instead of
 * k Welford steps. A read (`combined`) folds the pending batches into a copy, so reading never
 * changes how later samples group.
 */
export class PartitionedMoments {
  private n = new Float64Array(8);
  private mean = new Float64Array(8);
  private m2 = new Float64Array(8);
  /** Per partition: the pending run of equal samples (value, count). */
  private runValue = new Float64Array(8).fill(Number.NaN);
  private runCount = new Float64Array(8);
  /** Partitions with an index below this may hold samples. */
  private used = 0;
  private readonly scratch = new Moments();

  /** Adds one sample to partition `p` (a non-negative integer). */
  add(p: number, value: number): void {
    this.addMany(p, value, 1);
  }

  /** Adds `k` samples equal to `value` to partition `p`: exactly `k` × `add(p, value)`. */
  addMany(p: number, value: number, k: number): void {
    if (p >= this.used) this.grow(p);
    if (value === this.runValue[p]) {
      this.runCount[p] += k;
      return;
    }
    this.flush(p);
    this.runValue[p] = value;
    this.runCount[p] = k;
  }

  /** Samples over all partitions. */
  get count(): number {
    let n = 0;
    for (let p = 0; p < this.used; p++) n += this.n[p] + this.runCount[p];
    return n;
  }

  /** Mean and population variance (÷ n) of all partitions together; 0 and 0 when empty. */
  combined(): { readonly mean: number; readonly variance: number } {
    const acc = new Moments();
    const part = new Moments();
    for (let p = 0; p < this.used; p++) {
      part.n = this.n[p];
      part.mean = this.mean[p];
      part.m2 = this.m2[p];
      part.addBatch(this.runValue[p], this.runCount[p]);
      acc.merge(part);
    }
    return { mean: acc.mean, variance: acc.n === 0 ? 0 : Math.max(0, acc.m2 / acc.n) };
  }

  /** Folds partition `p`'s pending run into its moments. */
  private flush(p: number): void {
    const k = this.runCount[p];
    if (k === 0) return;
    const m = this.scratch;
    m.n = this.n[p];
    m.mean = this.mean[p];
    m.m2 = this.m2[p];
    m.addBatch(this.runValue[p], k);
    this.n[p] = m.n;
    this.mean[p] = m.mean;
    this.m2[p] = m.m2;
  }

  private grow(p: number): void {
    this.used = p + 1;
    if (p < this.n.length) return;
    let size = this.n.length;
    while (size <= p) size *= 2;
    const widen = (a: Float64Array, fill: number): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(size).fill(fill);
      b.set(a);
      return b;
    };
    this.n = widen(this.n, 0);
    this.mean = widen(this.mean, 0);
    this.m2 = widen(this.m2, 0);
    this.runValue = widen(this.runValue, Number.NaN);
    this.runCount = widen(this.runCount, 0);
  }
}
