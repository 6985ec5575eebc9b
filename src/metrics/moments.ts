/**
 * Mean and variance of a sample stream kept per partition (Welford, stepped once per sample) and
 * combined in partition order at read time (Chan, Golub & LeVeque's pairwise update).
 *
 * Why partitions: a worker's tokens always reach the collector in the same order, but the order
 * *between* workers depends on how the replay steps them (pass by pass, or a worker advanced
 * through a run of plain decode passes at once: engine/vllmEngine.ts `runPlainDecodes`). Welford's
 * running moments depend on the order of their samples, so one global stream would make the mean
 * and std ITL of a run depend on the stepping. Per worker they do not, and combining the
 * partitions in index order makes them a function of the run alone (a single partition reads back
 * exactly its own Welford moments).
 */
export class PartitionedMoments {
  private n = new Float64Array(8);
  private mean = new Float64Array(8);
  private m2 = new Float64Array(8);
  /** Partitions with an index below this may hold samples. */
  private used = 0;

  /** Adds one sample to partition `p` (a non-negative integer). */
  add(p: number, value: number): void {
    if (p >= this.n.length) this.grow(p);
    if (p >= this.used) this.used = p + 1;
    const n = this.n[p] + 1;
    const mean = this.mean[p];
    const delta = value - mean;
    const next = mean + delta / n;
    this.n[p] = n;
    this.mean[p] = next;
    this.m2[p] += delta * (value - next);
  }

  /** Samples over all partitions. */
  get count(): number {
    let n = 0;
    for (let p = 0; p < this.used; p++) n += this.n[p];
    return n;
  }

  /** Mean and population variance (÷ n) of all partitions together; 0 and 0 when empty. */
  combined(): { readonly mean: number; readonly variance: number } {
    let n = 0;
    let mean = 0;
    let m2 = 0;
    for (let p = 0; p < this.used; p++) {
      const nb = this.n[p];
      if (nb === 0) continue;
      if (n === 0) {
        n = nb;
        mean = this.mean[p];
        m2 = this.m2[p];
        continue;
      }
      const total = n + nb;
      const delta = this.mean[p] - mean;
      mean += (delta * nb) / total;
      m2 += this.m2[p] + (delta * delta * n * nb) / total;
      n = total;
    }
    return { mean, variance: n === 0 ? 0 : Math.max(0, m2 / n) };
  }

  private grow(p: number): void {
    let size = this.n.length;
    while (size <= p) size *= 2;
    const widen = (a: Float64Array): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.n = widen(this.n);
    this.mean = widen(this.mean);
    this.m2 = widen(this.m2);
  }
}
