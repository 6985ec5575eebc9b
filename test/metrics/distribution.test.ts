import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { DDSketch } from "../../src/metrics/ddsketch.js";
import {
  type DistStats,
  exactStats,
  nearestRank,
  STAT_NAMES,
  selectRanks,
  sketchQuantileFor,
  sketchStats,
  statKeys,
} from "../../src/metrics/distribution.js";

const ZERO: DistStats = { mean: 0, min: 0, max: 0, median: 0, p75: 0, p90: 0, p95: 0, p99: 0, std: 0 };

describe("nearestRank", () => {
  it("rounds (n-1)·p/100 half up and clamps", () => {
    expect(nearestRank(10, 90)).toBe(8); // 8.1
    expect(nearestRank(10, 50)).toBe(5); // 4.5 → 5
    expect(nearestRank(4, 75)).toBe(2); // 2.25
    expect(nearestRank(4, 50)).toBe(2); // 1.5 → 2
    expect(nearestRank(1, 99)).toBe(0);
    expect(nearestRank(5, 100)).toBe(4);
    expect(nearestRank(5, 120)).toBe(4);
    expect(nearestRank(5, -5)).toBe(0);
  });
});

describe("exactStats", () => {
  it("1..10: nearest-rank percentiles, arithmetic mean, population std", () => {
    const v = Float64Array.from([3, 9, 1, 10, 5, 2, 8, 4, 7, 6]);
    const s = exactStats(v, 10);
    expect(s.mean).toBe(5.5);
    expect(s.min).toBe(1);
    expect(s.max).toBe(10);
    expect(s.median).toBe(6); // rank round(4.5) = 5
    expect(s.p75).toBe(8); // rank round(6.75) = 7
    expect(s.p90).toBe(9); // rank round(8.1) = 8
    expect(s.p95).toBe(10); // rank round(8.55) = 9
    expect(s.p99).toBe(10); // rank round(8.91) = 9
    expect(s.std).toBeCloseTo(Math.sqrt(99 / 12), 14); // population variance (n²−1)/12 = 8.25
  });

  it("n = 4, p75 → rank round(2.25) = 2; does not modify the input", () => {
    const v = Float64Array.from([10, 40, 20, 30]);
    const s = exactStats(v, 4);
    expect(s.p75).toBe(30);
    expect(s.median).toBe(30); // rank round(1.5) = 2
    expect(s.p90).toBe(40); // rank round(2.7) = 3
    expect(s.mean).toBe(25);
    expect(s.std).toBe(Math.sqrt(125)); // (225+25+25+225)/4, ÷n not ÷(n−1)
    expect(Array.from(v)).toEqual([10, 40, 20, 30]);
  });

  it("uses only the first n values and drops non-finite samples", () => {
    expect(exactStats(Float64Array.from([5, 1, 100]), 2).max).toBe(5);
    const s = exactStats(Float64Array.from([Number.NaN, 3, Number.POSITIVE_INFINITY, 1]), 4);
    expect(s.mean).toBe(2);
    expect(s.min).toBe(1);
    expect(s.max).toBe(3);
    expect(s.std).toBe(1);
  });

  it("n defaults to the array length; a single sample gives all-equal stats with std 0", () => {
    const s = exactStats(Float64Array.from([7]));
    expect(s).toEqual({ mean: 7, min: 7, max: 7, median: 7, p75: 7, p90: 7, p95: 7, p99: 7, std: 0 });
  });

  it("empty ⇒ all 0", () => {
    expect(exactStats(new Float64Array(0), 0)).toEqual(ZERO);
    expect(exactStats(Float64Array.from([1, 2, 3]), 0)).toEqual(ZERO);
    expect(exactStats(Float64Array.from([Number.NaN]), 1)).toEqual(ZERO);
  });
});

describe("sketchStats", () => {
  it("empty ⇒ all 0", () => {
    expect(sketchStats(new DDSketch())).toEqual(ZERO);
  });

  it("queries q = (rank + 0.5)/(n − 1), 1.0 at the top rank and for n = 1", () => {
    expect(sketchQuantileFor(1, 50)).toBe(1);
    expect(sketchQuantileFor(10, 90)).toBe(8.5 / 9);
    expect(sketchQuantileFor(10, 99)).toBe(1); // rank 9 = top
    expect(sketchQuantileFor(4, 75)).toBe(2.5 / 3);
  });

  it("one sample: every statistic is that sample (exact min/max, std 0)", () => {
    const s = new DDSketch();
    s.add(3.3);
    expect(sketchStats(s)).toEqual({
      mean: 3.3,
      min: 3.3,
      max: 3.3,
      median: 3.3,
      p75: 3.3,
      p90: 3.3,
      p95: 3.3,
      p99: 3.3,
      std: 0,
    });
  });

  it("zero bucket participates in the ranks", () => {
    const s = new DDSketch();
    s.addMany(0, 3);
    s.add(5);
    const st = sketchStats(s);
    expect(st.median).toBe(0); // rank round(1.5) = 2 < 3 zeros
    expect(st.p75).toBe(0); // rank round(2.25) = 2
    expect(st.p90).toBe(5); // rank round(2.7) = 3 = top → exact max
    expect(st.mean).toBe(1.25);
    expect(st.std).toBeCloseTo(Math.sqrt((3 * 1.25 ** 2 + 3.75 ** 2) / 4), 12);
  });

  it("1..10 lands on the same ranks as exactStats (within 0.1%)", () => {
    const s = new DDSketch();
    for (let i = 1; i <= 10; i++) s.add(i);
    const st = sketchStats(s);
    expect(st.min).toBe(1);
    expect(st.max).toBe(10);
    expect(Math.abs(st.p90 - 9) / 9).toBeLessThanOrEqual(0.001);
    expect(Math.abs(st.median - 6) / 6).toBeLessThanOrEqual(0.001);
    expect(Math.abs(st.p75 - 8) / 8).toBeLessThanOrEqual(0.001);
    expect(st.p95).toBe(10);
    expect(st.mean).toBeCloseTo(5.5, 12);
    expect(st.std).toBeCloseTo(Math.sqrt(8.25), 12);
  });

  const TOL = 0.001 * (1 + 1e-9);
  fcTest.prop(
    [
      fc.array(fc.double({ min: 1e-3, max: 1e6, noNaN: true, noDefaultInfinity: true }), {
        minLength: 1,
        maxLength: 3000,
      }),
    ],
    { seed: 20240611, numRuns: 200 },
  )("sketch percentiles are within 0.1% of the exact nearest-rank value", (xs) => {
    const v = Float64Array.from(xs);
    const s = new DDSketch();
    for (const x of xs) s.add(x);
    const e = exactStats(v, v.length);
    const k = sketchStats(s);
    expect(k.min).toBe(e.min);
    expect(k.max).toBe(e.max);
    for (const p of ["median", "p75", "p90", "p95", "p99"] as const) {
      expect(Math.abs(k[p] - e[p]) / e[p]).toBeLessThanOrEqual(TOL);
    }
    expect(Math.abs(k.mean - e.mean)).toBeLessThanOrEqual(1e-9 * e.max);
    expect(Math.abs(k.std - e.std)).toBeLessThanOrEqual(1e-6 * e.max);
  });
});

describe("statKeys", () => {
  it("gives {mean,min,max,median,p75,p90,p95,p99,std}_<name> keys in order", () => {
    const target: Record<string, number> = {
      num_requests: 1,
      ...statKeys("ttft_ms", exactStats(Float64Array.from([1, 2, 3]), 3)),
      ...statKeys("output_token_throughput_per_user", exactStats(new Float64Array(0), 0)),
    };
    expect(Object.keys(target)).toEqual([
      "num_requests",
      ...STAT_NAMES.map((k) => `${k}_ttft_ms`),
      ...STAT_NAMES.map((k) => `${k}_output_token_throughput_per_user`),
    ]);
    expect(target["mean_ttft_ms"]).toBe(2);
    expect(target["p99_ttft_ms"]).toBe(3);
    expect(target["median_ttft_ms"]).toBe(2);
    expect(target["std_output_token_throughput_per_user"]).toBe(0);
  });
});

describe("selectRanks", () => {
  fcTest.prop(
    [
      fc.array(
        fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
        {
          minLength: 1,
          maxLength: 400,
        },
      ),
      fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 8 }),
    ],
    { seed: 11, numRuns: 300 },
  )("puts at each rank exactly what a sort puts there (duplicates, negatives, any ranks)", (values, ps) => {
    const xs = Float64Array.from(values);
    const sorted = Float64Array.from(values).sort();
    const ranks = [...new Set(ps.map((p) => nearestRank(xs.length, p)))].sort((a, b) => a - b);
    selectRanks(xs, ranks);
    // == : a sort orders -0 before 0, selection treats them as equal (the same in prediction.json).
    for (const r of ranks) expect(xs[r] === sorted[r]).toBe(true);
    // Still a permutation of the input.
    expect(Array.from(Float64Array.from(xs).sort(), (v) => v + 0)).toEqual(Array.from(sorted, (v) => v + 0));
  });
});

describe("exactStats ≡ its definition on the sorted finite samples", () => {
  const sample = fc.oneof(
    fc.double({ noNaN: false }),
    fc.constantFrom(0, -0, 1, -1, 2.5, Number.POSITIVE_INFINITY),
  );
  fcTest.prop([fc.array(sample, { maxLength: 300 })], { seed: 20261206, numRuns: 400 })(
    "min, max and every percentile at its nearest rank, -0 and +0 told apart as a sort does",
    (values) => {
      const finite = values.filter((v) => Number.isFinite(v));
      const st = exactStats(Float64Array.from(values));
      if (finite.length === 0) {
        expect(st).toEqual(exactStats(new Float64Array(0)));
        return;
      }
      const sorted = Float64Array.from(finite).sort();
      const m = sorted.length;
      expect(Object.is(st.min, sorted[0])).toBe(true);
      expect(Object.is(st.max, sorted[m - 1])).toBe(true);
      const at = { median: 50, p75: 75, p90: 90, p95: 95, p99: 99 } as const;
      for (const [k, p] of Object.entries(at)) {
        expect(Object.is(st[k as keyof typeof at], sorted[nearestRank(m, p)])).toBe(true);
      }
    },
  );
});
