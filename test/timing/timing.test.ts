import { describe, expect, it } from "vitest";
import { FixedTiming } from "../../src/timing/fixed.js";
import { PolynomialTiming } from "../../src/timing/polynomial.js";

describe("polynomial timing (`ai-dynamo/aisimulate@a71c2e8:crates/core/src/engine/timing.rs`, `ai-dynamo/aisimulate@4c80077:crates/core/src/engine/common/perf_model.rs`)", () => {
  const p = new PolynomialTiming();
  it("prices prefill on new tokens only: T = batch × (isl − prefix)", () => {
    // 1 request of 4096 new tokens ≈ 7.06 + 62.19 + 16.50 ms.
    const t = 4096;
    expect(p.prefillMs(1, 4096, 0)).toBeCloseTo(4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142, 10);
    expect(p.prefillMs(1, 4096, 0)).toBeCloseTo(85.76, 1);
    expect(p.prefillMs(2, 3000, 1000)).toBeCloseTo(p.prefillMs(1, 4000, 0), 10);
  });
  it("costs nothing for a fully cached prompt or an empty batch", () => {
    expect(p.prefillMs(1, 128, 128)).toBe(0);
    expect(p.prefillMs(0, 128, 0)).toBe(0);
  });
  it("prices decode on KV utilization only, clamped to [0, 1], floored at 1 ms", () => {
    expect(p.decodeMs(1, 0, 0, 1024)).toBeCloseTo(5.74, 10);
    expect(p.decodeMs(8, 1024, 128, 1024)).toBeCloseTo(-25.74 + 54.01 + 5.74, 10);
    expect(p.decodeMs(2, 2048, 1024, 1024)).toBe(p.decodeMs(2, 1024, 512, 1024));
    expect(p.decodeMs(3, 10, 3, 0)).toBeCloseTo(34.01, 10);
    expect(p.decodeMs(0, 10, 0, 100)).toBe(0);
  });
});

describe("fixed timing", () => {
  it("returns the constant for non-empty batches and 0 for empty ones", () => {
    const f = new FixedTiming(10, 2);
    expect(f.prefillMs(3, 100, 0)).toBe(10);
    expect(f.prefillMs(0, 0, 0)).toBe(0);
    expect(f.decodeMs(5, 0, 0, 0)).toBe(2);
    expect(f.decodeMs(0, 0, 0, 0)).toBe(0);
  });
});
