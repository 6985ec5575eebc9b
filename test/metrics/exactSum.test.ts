import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { ExactMoments, ExactSum, MAX_BATCH, roundRatio } from "../../src/metrics/exactSum.js";
import { exactMeanVariance, nearestDouble, toDyadic } from "./exactRational.js";

/** Doubles over the magnitudes samples take (ms gaps, tokens/s), and a few extreme ones. */
const sample = fc.oneof(
  fc.double({ min: 1e-6, max: 1e7, noNaN: true }),
  fc.double({ min: -1e3, max: 1e3, noNaN: true }),
  fc.constantFrom(0, 1, 0.1, 1 / 3, 2 ** -60, 2 ** 60, 1e-200, 1e200, 5e-324, 1e300),
);

/** The exact sum of `Σ w·x` as a fraction. */
function exactSum(items: readonly { x: number; w: number }[]): { num: bigint; den: bigint } {
  let num = 0n;
  let minE = 0;
  const parts = items.map(({ x, w }) => ({ ...toDyadic(x), w }));
  for (const p of parts) minE = Math.min(minE, p.e);
  for (const p of parts) num += BigInt(p.w) * (p.m << BigInt(p.e - minE));
  return { num, den: 1n << BigInt(-minE) };
}

describe("ExactSum", () => {
  fcTest.prop(
    [
      fc.array(fc.record({ x: sample, w: fc.integer({ min: -3_000_000, max: 3_000_000 }) }), {
        maxLength: 60,
      }),
    ],
    { seed: 4201, numRuns: 300 },
  )("Σ w·x is the correctly rounded exact sum, in any order", (items) => {
    const forward = new ExactSum();
    for (const { x, w } of items) forward.add(x, w);
    const backward = new ExactSum();
    for (let i = items.length - 1; i >= 0; i--) backward.add(items[i].x, items[i].w);
    const q = exactSum(items);
    const expected = q.num === 0n ? 0 : nearestDouble(q);
    expect(forward.value()).toBe(expected);
    expect(backward.value()).toBe(expected);
  });

  fcTest.prop([fc.array(fc.record({ x: sample, w: fc.integer({ min: 1, max: 300 }) }), { maxLength: 40 })], {
    seed: 4202,
    numRuns: 200,
  })("taking every sample back out leaves exactly zero", (items) => {
    const s = new ExactSum();
    for (const { x, w } of items) s.add(x, w);
    for (const { x, w } of items) s.add(x, -w);
    expect(s.scaled()).toBe(0n);
    expect(s.value()).toBe(0);
  });

  it("thousands of large chunks at the largest fast weight: the limbs are normalized in time", () => {
    const s = new ExactSum();
    const items: { x: number; w: number }[] = [];
    for (let i = 0; i < 5000; i++) {
      // Values whose three 32-bit chunks are all near 2^32, weights at the fast path's limit.
      const x = 4294967295.999999 - i * 1e-6;
      const w = 1023;
      s.add(x, w);
      items.push({ x, w });
    }
    const q = exactSum(items);
    expect(s.value()).toBe(nearestDouble(q));
  });

  it("a non-finite value makes the sum NaN", () => {
    const s = new ExactSum();
    s.add(1, 1);
    s.add(Number.POSITIVE_INFINITY, 1);
    expect(s.value()).toBeNaN();
  });
});

describe("ExactMoments", () => {
  fcTest.prop(
    [
      fc.array(
        fc.record({
          x: fc.oneof(fc.double({ min: 1e-3, max: 1e6, noNaN: true }), fc.constantFrom(0, 0.5, 12.5, 1 / 3)),
          w: fc.integer({ min: 1, max: 400 }),
        }),
        { minLength: 1, maxLength: 40 },
      ),
    ],
    { seed: 4203, numRuns: 200 },
  )("mean and population variance are the exact ones, rounded once", (items) => {
    const m = new ExactMoments();
    const values: number[] = [];
    for (const { x, w } of items) {
      m.add(x, w);
      for (let i = 0; i < w; i++) values.push(x);
    }
    const expected = exactMeanVariance(values);
    expect(m.count).toBe(values.length);
    expect(m.mean).toBe(expected.mean);
    expect(m.variance).toBe(expected.variance);
  });

  fcTest.prop(
    [
      fc.array(
        fc.record({
          // The fast path's edges (1, just under 2^32, squares either side of 2^32 and 2^64) and
          // values outside it (below 1, 0, negative, non-finite), weights either side of 2^10.
          x: fc.oneof(
            fc.double({ min: 1, max: 4294967295.9999995, noNaN: true }),
            fc.double({ min: -1e6, max: 1e12, noNaN: true }),
            fc.constantFrom(1, 65535.99999999999, 65536, 4294967295.9999995, 4294967296, 0.999999, 0, -3.5),
            fc.constantFrom(Number.POSITIVE_INFINITY, 1e-310, 1e300),
          ),
          w: fc.oneof(fc.integer({ min: -1023, max: 1023 }), fc.integer({ min: -5000, max: 5000 })),
        }),
        { maxLength: MAX_BATCH },
      ),
      fc.boolean(),
    ],
    { seed: 4204, numRuns: 300 },
  )("a batch (addMany) holds exactly what its samples added one by one hold", (items, positiveOnly) => {
    const values = Float64Array.from(items, (s) => s.x);
    const weights = Float64Array.from(items, (s) => s.w);
    const batch = new ExactMoments();
    batch.add(2.25, 3);
    batch.addMany(values, weights, items.length, positiveOnly);
    const one = new ExactMoments();
    one.add(2.25, 3);
    for (const { x, w } of items) if (!positiveOnly || x > 0) one.add(x, w);
    expect(batch.count).toBe(one.count);
    const sums = (m: ExactMoments): unknown[] => [m.mean, m.variance, m.count];
    expect(sums(batch)).toEqual(sums(one));
    // The exact sums themselves, not only their roundings.
    if (Number.isFinite(one.mean)) expect(batch.scaledSums()).toEqual(one.scaledSums());
  });

  it("a batch whose squares' rounding errors fall in each of their windows (0 … −4) holds what one-by-one adds hold", () => {
    // |x·x − fl(x·x)| ≈ 52, 7.7e−6, 4.6e−13, 4.2e−22, 4.9e−32: windows 0, −1, −2, −3, −4.
    const xs = [1234567891.2345, 1048576.123, 100.1, 1 + 2 ** -20 + 2 ** -52, 1 + 2 ** -52];
    const values = Float64Array.from([...xs, ...xs]);
    const weights = Float64Array.from([...xs.map(() => 1), ...xs.map(() => -3)]);
    const batch = new ExactMoments();
    batch.addMany(values, weights, values.length, false);
    const one = new ExactMoments();
    for (let i = 0; i < values.length; i++) one.add(values[i], weights[i]);
    expect(batch.scaledSums()).toEqual(one.scaledSums());
    expect(batch.count).toBe(one.count);
  });

  it("refuses a batch larger than its exact bound", () => {
    const m = new ExactMoments();
    const n = MAX_BATCH + 1;
    expect(() => m.addMany(new Float64Array(n), new Float64Array(n), n, false)).toThrow(RangeError);
  });

  it("equal samples have variance 0 and their own mean; empty moments read 0", () => {
    const m = new ExactMoments();
    expect(m.mean).toBe(0);
    expect(m.variance).toBe(0);
    m.add(0.1, 7);
    m.add(0.1, 3);
    expect(m.mean).toBe(0.1);
    expect(m.variance).toBe(0);
  });

  it("copies and sums of moments are exact", () => {
    const a = new ExactMoments();
    a.add(1.5, 2);
    a.add(1e-3, 5);
    const b = new ExactMoments();
    b.copyFrom(a);
    b.add(7, 1);
    b.addMoments(a, -1);
    expect(b.count).toBe(1);
    expect(b.mean).toBe(7);
    expect(b.variance).toBe(0);
  });
});

describe("roundRatio", () => {
  it("rounds ties to even and keeps a remainder's sticky bit", () => {
    // 2^53 + 1 is halfway between two doubles: ties to the even 2^53.
    expect(roundRatio(2n ** 53n + 1n, 1n)).toBe(2 ** 53);
    // 2^53 + 3 is halfway too: ties to the even 2^53 + 4.
    expect(roundRatio(2n ** 53n + 3n, 1n)).toBe(2 ** 53 + 4);
    // Just above halfway (a remainder): up.
    expect(roundRatio((2n ** 53n + 1n) * 3n + 1n, 3n)).toBe(2 ** 53 + 2);
    expect(roundRatio(1n, 3n)).toBe(1 / 3);
    expect(roundRatio(-2n, 3n)).toBe(-2 / 3);
    expect(roundRatio(0n, 5n)).toBe(0);
  });
});
