import { describe, expect, it } from "vitest";
import type { PassShape } from "../../src/timing/passShape.js";
import { SplitPassTiming } from "../../src/timing/splitPasses.js";
import type { TimingModel } from "../../src/timing/timingModel.js";
import { expectDefaultTimingOnlyKey } from "../helpers/configHelpers.js";
import { passOf } from "../helpers/passShape.js";

/** A one-pass model whose mixed pass is cheaper than its halves (as the op-level model's is), recording what it priced. */
class OnePass implements TimingModel {
  readonly priced: [number, number, number, number][] = [];
  prefillMs(count: number, meanIsl: number, meanPrefix: number): number {
    return count * (meanIsl - meanPrefix) * 0.01;
  }
  decodeMs(batch: number): number {
    return 5 + batch * 0.1;
  }
  passMs(p: Readonly<PassShape>): number {
    this.priced.push([p.prefillCount, p.decodeBatch, p.draftSequences, p.draftTokens]);
    const prefill = p.prefillCount > 0 ? this.prefillMs(p.prefillCount, p.meanIsl, p.meanPrefix) : 0;
    // One pass: the 5 ms fixed part is paid once when both halves are there.
    return p.decodeBatch > 0 ? prefill + this.decodeMs(p.decodeBatch) : prefill + (prefill > 0 ? 5 : 0);
  }
}

describe("timing.mixed_passes: additive (SplitPassTiming)", () => {
  it("prices a mixed pass as a prefill pass plus a decode pass of the wrapped model", () => {
    const inner = new OnePass();
    const split = new SplitPassTiming(inner);
    const mixed = passOf(2, 600, 100, 8, 8000, 1000, 100_000, 3, 6);
    expect(inner.passMs(mixed)).toBeCloseTo(10 + 5.8, 9);
    inner.priced.length = 0;
    expect(split.passMs(mixed)).toBeCloseTo(10 + 5 + 5.8, 9);
    // The drafts ride the decode half only.
    expect(inner.priced).toEqual([
      [2, 0, 0, 0],
      [0, 8, 3, 6],
    ]);
  });

  it("leaves a pass with one half as the wrapped model prices it", () => {
    const inner = new OnePass();
    const split = new SplitPassTiming(inner);
    for (const pass of [passOf(2, 600, 100), passOf(0, 0, 0, 8, 8000, 1000, 100_000), passOf()]) {
      expect(split.passMs(pass)).toBe(inner.passMs(pass));
    }
    expect(split.prefillMs(3, 500, 0)).toBe(inner.prefillMs(3, 500, 0));
    expect(split.decodeMs(4, 0, 0, 0)).toBe(inner.decodeMs(4));
  });

  it("is read from the YAML for default timing only", () => {
    expectDefaultTimingOnlyKey("mixed_passes", "additive", null, "mixedPasses");
  });
});
