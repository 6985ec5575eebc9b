/**
 * The summary's exact distributions in bounded memory (metrics/exactStatsBuilder.ts): over
 * repeated passes, radix selection must give exactly what `exactStats` gives on the whole array
 * — percentiles, min, max, mean and std, bit for bit — for any values: ties, many equal values,
 * negative zero, wide ranges, non-finite values dropped.
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { exactStats } from "../../src/metrics/distribution.js";
import { buildExactStats, ExactStatsBuilder } from "../../src/metrics/exactStatsBuilder.js";

function viaPasses(
  values: readonly number[],
  limit: number,
): { stats: ReturnType<typeof exactStats>; passes: number } {
  const b = new ExactStatsBuilder(limit);
  let passes = 0;
  buildExactStats([b], () => {
    passes++;
    for (const v of values) b.add(v);
  });
  return { stats: b.result(), passes };
}

const value = fc.oneof(
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -0, 1, 1, 1, 2.5, 1e-300, -1e300, Number.POSITIVE_INFINITY),
  fc.integer({ min: -50, max: 50 }).map((x) => x / 4),
);

describe("ExactStatsBuilder", () => {
  test.prop([fc.array(value, { maxLength: 400 }), fc.integer({ min: 1, max: 64 })], { numRuns: 400 })(
    "equals exactStats of the whole array, with any memory limit",
    (values, limit) => {
      const { stats } = viaPasses(values, limit);
      expect(stats).toEqual(exactStats(Float64Array.from(values)));
      // Bit for bit (toEqual treats 0 and -0 alike).
      for (const [k, v] of Object.entries(exactStats(Float64Array.from(values))))
        expect(Object.is(stats[k as keyof typeof stats], v)).toBe(true);
    },
  );

  it("within the limit one pass; past it a few, on 100,000 values with 64 kept in memory", () => {
    const values = Array.from(
      { length: 100_000 },
      (_, i) => ((i * 7919) % 100_003) / 3 + (i % 10 === 0 ? 5 : 0),
    );
    expect(viaPasses(values, 1 << 20).passes).toBe(1);
    const small = viaPasses(values, 64);
    expect(small.stats).toEqual(exactStats(Float64Array.from(values)));
    expect(small.passes).toBeGreaterThan(1);
    expect(small.passes).toBeLessThanOrEqual(5);
  });

  it("all values equal (a group that never shrinks) resolves at the key's last digit", () => {
    const values = new Array(5000).fill(42.125);
    expect(viaPasses(values, 8).stats).toEqual(exactStats(Float64Array.from(values)));
  });
});
