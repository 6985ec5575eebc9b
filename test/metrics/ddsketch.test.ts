import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { DDSketch } from "../../src/metrics/ddsketch.js";

/** 0-based nearest-rank order statistic of a sample. */
function orderStat(xs: readonly number[], q: number): number {
  const sorted = Float64Array.from(xs).sort();
  return sorted[Math.floor(q * (sorted.length - 1))];
}

/** Deterministic xorshift32 in [0, 1). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const QS = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999];

describe("DDSketch mapping", () => {
  it("gamma = (1+α)/(1−α); one bucket represents a value within α", () => {
    const s = new DDSketch();
    expect(s.gamma).toBeCloseTo(1.001 / 0.999, 15);
    expect(s.relativeAccuracy).toBe(0.001);
    expect(s.maxBins).toBe(32_768);
    // Value 1 sits on a bucket's upper edge: its representative is 1 − α.
    expect(s.value(s.key(1))).toBeCloseTo(0.999, 12);
    for (const v of [1e-6, 0.5, 1, Math.PI, 42, 1e3, 123456.789, 1e12]) {
      expect(Math.abs(s.value(s.key(v)) - v) / v).toBeLessThanOrEqual(0.001 * (1 + 1e-9));
    }
    expect(s.key(0)).toBe(0);
    expect(s.key(1e-9)).toBe(0);
    expect(s.key(2e-9)).toBeGreaterThan(0);
  });
});

describe("DDSketch basics", () => {
  it("empty sketch", () => {
    const s = new DDSketch();
    expect(s.count).toBe(0);
    expect(s.sum).toBe(0);
    expect(s.mean).toBe(0);
    expect(s.variance).toBe(0);
    expect(Number.isNaN(s.min)).toBe(true);
    expect(Number.isNaN(s.max)).toBe(true);
    expect(Number.isNaN(s.quantile(0.5))).toBe(true);
  });

  it("tracks exact count/min/max/sum and Welford mean/population variance", () => {
    const s = new DDSketch();
    for (const v of [2, 4, 4, 4, 5, 5, 7, 9]) s.add(v);
    expect(s.count).toBe(8);
    expect(s.min).toBe(2);
    expect(s.max).toBe(9);
    expect(s.sum).toBe(40);
    expect(s.mean).toBe(5);
    expect(s.variance).toBeCloseTo(4, 12); // population (÷n) variance of the classic example
  });

  it("drops non-finite samples", () => {
    const s = new DDSketch();
    s.add(Number.NaN);
    s.add(Number.POSITIVE_INFINITY);
    s.addMany(Number.NEGATIVE_INFINITY, 3);
    expect(s.count).toBe(0);
    s.add(1);
    expect(s.count).toBe(1);
    expect(s.sum).toBe(1);
  });

  it("q ≤ 0 → exact min, q ≥ 1 → exact max, interior q → clamped representative", () => {
    const s = new DDSketch();
    s.add(1);
    s.add(1);
    s.add(1000);
    expect(s.quantile(0)).toBe(1);
    expect(s.quantile(1)).toBe(1000);
    // rank floor(0.25·2) = 0 → bucket of 1, representative 0.999 clamped up to min 1.
    expect(s.quantile(0.25)).toBe(1);
    // rank floor(0.75·2) = 1 → still the bucket of 1.
    expect(s.quantile(0.75)).toBe(1);
    expect(() => s.quantile(Number.NaN)).toThrow(RangeError);
  });

  it("1..100: quantile(0.95) holds rank floor(0.95·99) = 94 → 95 (within 0.1%)", () => {
    const s = new DDSketch();
    for (let i = 1; i <= 100; i++) s.add(i);
    expect(Math.abs(s.quantile(0.95) - 95) / 95).toBeLessThanOrEqual(0.001);
    expect(Math.abs(s.quantile(0.5) - 50) / 50).toBeLessThanOrEqual(0.001);
  });

  it("zero bucket: values ≤ 1e-9 (and negatives) are represented by 0, clamped to [min, max]", () => {
    const s = new DDSketch();
    s.addMany(0, 3);
    s.add(10);
    expect(s.quantile(0.5)).toBe(0); // rank floor(1.5) = 1 < 3 zeros
    expect(s.quantile(0.99)).toBe(0); // rank floor(2.97) = 2 < 3 zeros
    expect(s.quantile(1)).toBe(10);
    const neg = new DDSketch();
    neg.add(-5);
    neg.add(5e-10);
    neg.add(2);
    expect(neg.min).toBe(-5);
    expect(neg.quantile(0.5)).toBe(0); // rank 1 → zero bucket
    expect(neg.mean).toBeCloseTo((-5 + 5e-10 + 2) / 3, 15);
  });

  it("rejects invalid counts and options", () => {
    const s = new DDSketch();
    expect(() => s.addMany(1, -1)).toThrow(RangeError);
    expect(() => s.addMany(1, 1.5)).toThrow(RangeError);
    s.addMany(1, 0);
    expect(s.count).toBe(0);
    expect(() => new DDSketch({ relativeAccuracy: 0 })).toThrow(RangeError);
    expect(() => new DDSketch({ maxBins: 0 })).toThrow(RangeError);
  });
});

describe("DDSketch addMany", () => {
  it("add(v) is bit-identical to addMany(v, 1)", () => {
    const a = new DDSketch();
    const b = new DDSketch();
    const r = rng(7);
    for (let i = 0; i < 1000; i++) {
      const v = r() * 1000;
      a.add(v);
      b.addMany(v, 1);
    }
    expect(b.mean).toBe(a.mean);
    expect(b.variance).toBe(a.variance);
    expect(b.sum).toBe(a.sum);
    for (const q of QS) expect(b.quantile(q)).toBe(a.quantile(q));
  });

  fcTest.prop(
    [
      fc.array(
        fc.tuple(
          fc.oneof(fc.constant(0), fc.double({ min: 1e-4, max: 1e7, noNaN: true, noDefaultInfinity: true })),
          fc.integer({ min: 0, max: 50 }),
        ),
        { minLength: 1, maxLength: 60 },
      ),
    ],
    { seed: 424242, numRuns: 150 },
  )("addMany(v, c) and addManyPair are bit-identical to c × add(v)", (pairs) => {
    const a = new DDSketch();
    const b = new DDSketch();
    const pa = new DDSketch();
    const pb = new DDSketch();
    const ref = new DDSketch();
    for (const [v, c] of pairs) {
      for (let i = 0; i < c; i++) {
        a.add(v);
        if (v > 0) ref.add(1000 / v);
      }
      b.addMany(v, c);
      if (v > 0) DDSketch.addManyPair(pa, v, pb, 1000 / v, c);
      else pa.addMany(v, c);
    }
    for (const s of [b, pa]) {
      expect(s.count).toBe(a.count);
      expect(s.min).toBe(a.min);
      expect(s.max).toBe(a.max);
      expect(s.mean).toBe(a.mean);
      expect(s.variance).toBe(a.variance);
      expect(s.sum).toBe(a.sum);
      for (const q of QS) expect(s.quantile(q)).toBe(a.quantile(q));
    }
    expect(pb.count).toBe(ref.count);
    expect(pb.mean).toBe(ref.mean);
    expect(pb.variance).toBe(ref.variance);
    expect(pb.sum).toBe(ref.sum);
    for (const q of QS) expect(pb.quantile(q)).toBe(ref.quantile(q));
  });
});

describe("DDSketch accuracy", () => {
  it("log-normal-ish data over 9 decades: every quantile within 0.1% of the exact order statistic", () => {
    const r = rng(12345);
    const xs: number[] = [];
    for (let i = 0; i < 20_000; i++) xs.push(10 ** (r() * 9 - 3));
    const s = new DDSketch();
    for (const x of xs) s.add(x);
    for (const q of QS) {
      const exact = orderStat(xs, q);
      expect(Math.abs(s.quantile(q) - exact) / exact).toBeLessThanOrEqual(0.001 * (1 + 1e-9));
    }
  });
});

describe("DDSketch bin limit", () => {
  it("collapses the lowest bins; upper quantiles stay accurate, in any insertion order", () => {
    // 64 bins at α = 0.001 span a factor gamma^64 ≈ 1.137: values above ~880 keep their own bins.
    const xs = Array.from({ length: 1000 }, (_, i) => i + 1);
    const orders = [xs, [...xs].reverse(), [...xs].sort((a, b) => ((a * 7919) % 1000) - ((b * 7919) % 1000))];
    const results = orders.map((order) => {
      const s = new DDSketch({ maxBins: 64 });
      for (const x of order) s.add(x);
      expect(s.allocatedBins).toBeLessThanOrEqual(64);
      expect(s.count).toBe(1000);
      expect(s.min).toBe(1);
      expect(s.max).toBe(1000);
      for (const q of [0.9, 0.95, 0.99, 0.999]) {
        const exact = orderStat(xs, q);
        expect(Math.abs(s.quantile(q) - exact) / exact).toBeLessThanOrEqual(0.001 * (1 + 1e-9));
      }
      // Low ranks were folded upwards into the lowest kept bin (≈ 1000 / 1.137).
      expect(s.quantile(0.01)).toBeGreaterThan(850);
      return QS.map((q) => s.quantile(q));
    });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it("default 32,768 bins: a 1e-8 … 1e30 spread collapses the bottom and keeps the top exact to 0.1%", () => {
    const s = new DDSketch();
    const r = rng(99);
    const xs: number[] = [];
    for (let i = 0; i < 5000; i++) xs.push(10 ** (r() * 38 - 8));
    for (const x of xs) s.add(x);
    expect(s.allocatedBins).toBeLessThanOrEqual(32_768);
    for (const q of [0.5, 0.9, 0.99]) {
      const exact = orderStat(xs, q);
      expect(Math.abs(s.quantile(q) - exact) / exact).toBeLessThanOrEqual(0.001 * (1 + 1e-9));
    }
    // 32,768 bins cover a factor e^(32768·ln gamma) ≈ 3.2e28 below the max; the bottom decades collapse.
    const lowExact = orderStat(xs, 0.01);
    expect(s.quantile(0.01)).toBeGreaterThan(lowExact * 1.01);
  });
});

describe("DDSketch exactness against a naive reference", () => {
  /** Reference: bucket of the order statistic, with keys below (maxKey − maxBins + 1) collapsed up. */
  function reference(s: DDSketch, xs: readonly number[], q: number): number {
    const sorted = Float64Array.from(xs).sort();
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[sorted.length - 1];
    const top = s.key(sorted[sorted.length - 1]);
    const x = sorted[Math.floor(q * (sorted.length - 1))];
    let k = s.key(x);
    if (k !== 0) k = Math.max(k, top - s.maxBins + 1);
    return Math.min(Math.max(s.value(k), sorted[0]), sorted[sorted.length - 1]);
  }

  fcTest.prop(
    [
      fc.array(fc.double({ min: -2, max: 9, noNaN: true }), { minLength: 1, maxLength: 400 }),
      fc.constantFrom(16, 100, 1024, 32_768),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }),
    ],
    { seed: 777, numRuns: 300 },
  )("quantile(q) is the (collapsed) bucket representative of rank floor(q·(n−1))", (exps, maxBins, qs) => {
    const xs = exps.map((e) => 10 ** e);
    const s = new DDSketch({ maxBins });
    for (const x of xs) s.add(x);
    expect(s.allocatedBins).toBeLessThanOrEqual(maxBins);
    for (const q of qs) expect(s.quantile(q)).toBe(reference(s, xs, q));
  });
});

describe("DDSketch.keyNear", () => {
  /** The next double above (`up`) or below a positive finite `x`. */
  function step(x: number, up: boolean): number {
    const b = new Float64Array([x]);
    const w = new BigUint64Array(b.buffer);
    w[0] += up ? 1n : -1n;
    return b[0];
  }

  const configs = [
    {},
    { relativeAccuracy: 0.01 },
    { relativeAccuracy: 0.0001, minValue: 1e-3 },
    { relativeAccuracy: 0.05, minValue: 0.5 },
  ];

  it("equals key on slow walks, jumps, and the doubles on either side of every bucket bound", () => {
    for (const options of configs) {
      const near = new DDSketch(options);
      const plain = new DDSketch(options);
      const next = rng(7);
      const values: number[] = [];
      // Slow walks (a decode run's gaps), jumps between them, values at and below minValue.
      let v = 12.5;
      for (let i = 0; i < 20_000; i++) {
        v = i % 500 === 0 ? 10 ** (next() * 12 - 4) : v * (1 + (next() - 0.5) * 1e-4);
        values.push(v);
      }
      values.push(plain.minValue, step(plain.minValue, true), step(plain.minValue, false), 0, -3, Number.NaN);
      // Every bucket bound the key's own arithmetic draws, found by bisection between doubles,
      // approached from below and from above.
      for (const centre of [1e-3, 0.7, 1, 15.3, 999.9, 2.5e6]) {
        if (!(centre > 2 * plain.minValue)) continue;
        const k = plain.key(centre);
        let lo = centre;
        while (plain.key(lo) === k) lo /= 1 + plain.relativeAccuracy;
        let hi = centre;
        for (;;) {
          const mid = (lo + hi) / 2;
          if (mid === lo || mid === hi) break;
          if (plain.key(mid) === k) hi = mid;
          else lo = mid;
        }
        // lo and hi are neighbouring doubles on either side of the bound.
        expect([plain.key(lo) !== k, plain.key(hi), step(lo, true)]).toEqual([true, k, hi]);
        for (const x of [step(lo, false), lo, hi, step(hi, true), centre, lo, hi, step(hi, false)])
          values.push(x);
      }
      for (const x of values) expect(near.keyNear(x), `key of ${x}`).toBe(plain.key(x));
    }
  });

  fcTest.prop([fc.array(fc.double({ min: 1e-12, max: 1e12, noNaN: true }), { maxLength: 200 })])(
    "equals key for any sequence of values",
    (xs) => {
      const near = new DDSketch();
      const plain = new DDSketch();
      for (const x of xs) {
        expect(near.keyNear(x)).toBe(plain.key(x));
        const y = x * (1 + 1e-7);
        expect(near.keyNear(y)).toBe(plain.key(y));
      }
    },
  );
});

describe("DDSketch copies", () => {
  it("clone and copyFrom give the same sketch, independent of the original", () => {
    const next = rng(7);
    const original = new DDSketch({ maxBins: 64 });
    for (let i = 0; i < 2000; i++) original.addMany(1e-12 + 10 ** (next() * 6), 1 + Math.floor(next() * 3));
    const copy = new DDSketch({ maxBins: 64 });
    copy.add(5); // replaced whole
    expect(copy.copyFrom(original)).toBe(copy);
    const clone = original.clone();
    for (const s of [copy, clone]) {
      expect(s.count).toBe(original.count);
      expect([s.min, s.max, s.sum, s.mean, s.variance]).toEqual([
        original.min,
        original.max,
        original.sum,
        original.mean,
        original.variance,
      ]);
      for (const q of QS) expect(s.quantile(q)).toBe(original.quantile(q));
    }
    // Independent: adding to the original leaves the copies as they were.
    const before = copy.quantile(0.99);
    for (let i = 0; i < 500; i++) original.add(1e9);
    expect(copy.quantile(0.99)).toBe(before);
    expect(clone.quantile(0.99)).toBe(before);
    expect(original.quantile(0.99)).not.toBe(before);
  });

  it("copyFrom refuses a sketch of other parameters", () => {
    expect(() => new DDSketch({ maxBins: 64 }).copyFrom(new DDSketch({ maxBins: 65 }))).toThrow(
      /different parameters/,
    );
    expect(() => new DDSketch().copyFrom(new DDSketch({ relativeAccuracy: 0.01 }))).toThrow(
      /different parameters/,
    );
  });
});
