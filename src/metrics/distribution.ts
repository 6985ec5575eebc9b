/**
 * Summary statistics of a latency distribution, in the two flavours of the aisimulate collector
 * (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`):
 *
 * - exact (vector) distributions — ttft, ttst, tpot, e2e: nearest-rank percentile at
 *   `rank = round((n−1)·p/100)` clamped to [0, n−1] (no interpolation), arithmetic mean,
 *   population std (÷n);
 * - streaming distributions — itl, per-user output throughput: a DDSketch queried at
 *   `q = (rank + 0.5)/(n − 1)` (1.0 at the top rank and for n = 1) so the sketch lands on the same
 *   rounded rank; min/max exact, mean/std via Welford.
 *
 * Empty distributions report every statistic as 0.
 */
import { type StatKeys, SUMMARY_STAT_NAMES, type SummaryDistribution } from "../output/summary.js";
import type { DDSketch } from "./ddsketch.js";

export interface DistStats {
  mean: number;
  min: number;
  max: number;
  median: number;
  p75: number;
  p90: number;
  p95: number;
  p99: number;
  std: number;
}

/** Statistic names in serialization order (the `{mean,…,std}_<name>` families of `ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`). */
export const STAT_NAMES: readonly (keyof DistStats)[] = SUMMARY_STAT_NAMES;

const ZERO_STATS: DistStats = { mean: 0, min: 0, max: 0, median: 0, p75: 0, p90: 0, p95: 0, p99: 0, std: 0 };

export function emptyStats(): DistStats {
  return { ...ZERO_STATS };
}

/** Nearest rank of percentile `p` (0–100) among `n ≥ 1` sorted samples: `round((n−1)·p/100)`, clamped. */
export function nearestRank(n: number, p: number): number {
  const r = Math.round(((n - 1) * p) / 100);
  return Math.min(Math.max(r, 0), n - 1);
}

/** `copyFinite`'s other results: the finite values' sum, and how many are negative and −0. */
const FINITE = new Float64Array(3);

/**
 * Copies the finite values of `values[0..limit)` into `sorted`, in order; returns how many. Their
 * sum, in input order, and the counts of negatives and of −0 go to `FINITE`: a sort puts −0 before
 * 0 and selection cannot tell them apart, so their places are counted. The −0 test (1/v is −∞ for
 * −0 alone among non-negative values) runs on every sample.
 *
 * The loops of `exactStats` are functions of their own: V8 compiles a long loop while it runs
 * (on-stack replacement), and code after a loop that had never run yet had no type feedback, so
 * each large distribution's statistics threw their compiled code away once the loop ended
 * (8 times a seed run's report; docs/performance.md "Field states").
 */
function copyFinite(values: Float64Array, limit: number, sorted: Float64Array): number {
  let m = 0;
  let sum = 0;
  let negatives = 0;
  let negativeZeros = 0;
  for (let i = 0; i < limit; i++) {
    const v = values[i];
    if (Number.isFinite(v)) {
      sorted[m++] = v;
      sum += v;
      if (v < 0) negatives++;
      else if (1 / v === Number.NEGATIVE_INFINITY) negativeZeros++;
    }
  }
  FINITE[0] = sum;
  FINITE[1] = negatives;
  FINITE[2] = negativeZeros;
  return m;
}

/** Σ (x − mean)² over `xs[0..m)`, in order (the two-pass variance's second pass). */
function squaredDeviations(xs: Float64Array, m: number, mean: number): number {
  let ss = 0;
  for (let i = 0; i < m; i++) {
    const d = xs[i] - mean;
    ss += d * d;
  }
  return ss;
}

/**
 * Exact statistics of `values[0..n)`. The input is NOT modified: the finite samples are copied into a
 * fresh `Float64Array` in which the order statistics are selected (`selectRanks`). Non-finite samples are dropped
 * (they do not count towards n). Mean and std are summed in input order; std is the two-pass
 * population standard deviation.
 */
export function exactStats(values: Float64Array, n: number = values.length): DistStats {
  const limit = Math.min(Math.max(0, Math.trunc(n)), values.length);
  const sorted = new Float64Array(limit);
  const m = copyFinite(values, limit, sorted);
  if (m === 0) return emptyStats();
  const sum = FINITE[0];
  const negatives = FINITE[1];
  const negativeZeros = FINITE[2];
  const mean = sum / m;
  const ss = squaredDeviations(sorted, m, mean);
  const xs = m === limit ? sorted : sorted.subarray(0, m);
  // The order statistics by selection, not a sort: each rank's value is what the sorted array
  // holds there, at a fraction of a sort's cost on large runs.
  const ranks = [0, nearestRank(m, 50), nearestRank(m, 75), nearestRank(m, 90), nearestRank(m, 95)];
  ranks.push(nearestRank(m, 99), m - 1);
  selectRanks(xs, ranks);
  // The zeros take sorted places [negatives, …): the first negativeZeros of them hold -0.
  const at = (i: number): number => {
    const r = ranks[i];
    const v = xs[r];
    return v === 0 ? (r - negatives < negativeZeros ? -0 : 0) : v;
  };
  return {
    mean,
    min: at(0),
    max: at(6),
    median: at(1),
    p75: at(2),
    p90: at(3),
    p95: at(4),
    p99: at(5),
    std: Math.sqrt(ss / m),
  };
}

/**
 * Rearranges `xs` so that `xs[r]` holds, for every `r` of `ranks` (ascending), the value a sort
 * would put there (Hoare's quickselect with a median-of-three pivot; each rank searches only the
 * part right of the previous one, which holds no smaller value).
 */
export function selectRanks(xs: Float64Array, ranks: readonly number[]): void {
  let from = 0;
  for (const rank of ranks) {
    if (rank < from) continue;
    let lo = from;
    let hi = xs.length - 1;
    while (hi > lo) {
      const mid = (lo + hi) >>> 1;
      // Median of three as the pivot value.
      const a = xs[lo];
      const b = xs[mid];
      const c = xs[hi];
      const pivot = Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (xs[i] < pivot) i++;
        while (xs[j] > pivot) j--;
        if (i <= j) {
          const t = xs[i];
          xs[i] = xs[j];
          xs[j] = t;
          i++;
          j--;
        }
      }
      // [lo, j] ≤ pivot ≤ [i, hi]; between them, values equal to the pivot.
      if (rank <= j) hi = j;
      else if (rank >= i) lo = i;
      else break;
    }
    from = rank + 1;
  }
}

/** Sketch quantile argument that lands on the rounded nearest rank of percentile `p`. */
export function sketchQuantileFor(n: number, p: number): number {
  const rank = nearestRank(n, p);
  return n <= 1 || rank >= n - 1 ? 1.0 : (rank + 0.5) / (n - 1);
}

/**
 * Statistics of a DDSketch with the same rounded-rank percentile definition as `exactStats`; mean
 * and std from `moments` when the sketch's owner keeps them itself (metrics/tokenGaps.ts).
 */
export function sketchStats(
  s: DDSketch,
  moments: { readonly mean: number; readonly variance: number } = s,
): DistStats {
  const n = s.count;
  if (n === 0) return emptyStats();
  const at = (p: number): number => s.quantile(sketchQuantileFor(n, p));
  return {
    mean: moments.mean,
    min: s.min,
    max: s.max,
    median: at(50),
    p75: at(75),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    std: Math.sqrt(moments.variance),
  };
}

/**
 * The summary keys `{mean,min,max,median,p75,p90,p95,p99,std}_<name>` of one distribution, in
 * that order: `name = "ttft_ms"` gives `mean_ttft_ms … std_ttft_ms`. `name` is one of the
 * contract's distributions (src/output/summary.ts), so a misspelt family does not compile.
 */
export function statKeys<N extends SummaryDistribution>(name: N, stats: DistStats): StatKeys<N> {
  const out: Record<string, number> = {};
  for (const k of STAT_NAMES) out[`${k}_${name}`] = stats[k];
  return out as StatKeys<N>;
}
