/**
 * Conformance suite for the GPU-budget primitives: a port of upstream `unit/test_budget.py`
 * (`ai-dynamo/dynamo@a211eac:components/src/dynamo/planner/tests/unit/test_budget.py`) plus a property version of its exhaustive directional-fit check.
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  boundsForTotal,
  computeTolerance,
  fitDirectionalBudgetPair,
  guardDisaggScalingBudget,
  guardSingleScalingBudget,
  proportionalClampPair,
  proportionalClampSingle,
} from "../../src/planner/budget.js";

describe("computeTolerance", () => {
  it("takes the max", () => {
    expect(computeTolerance([1, 2])).toBe(2);
    expect(computeTolerance([2, 1])).toBe(2);
    expect(computeTolerance([4])).toBe(4);
  });
  it("ignores zero and negative costs", () => {
    expect(computeTolerance([0, 0])).toBe(0);
    expect(computeTolerance([1, 0, 2, -1])).toBe(2);
  });
  it("is 0 for no costs", () => {
    expect(computeTolerance([])).toBe(0);
  });
});

describe("boundsForTotal", () => {
  it("accepts totals in band", () => {
    expect(boundsForTotal(8, 4, 8, 0)).toBeNull();
    expect(boundsForTotal(4, 4, 8, 0)).toBeNull();
  });
  it("rejects above a strict ceiling", () => {
    expect(boundsForTotal(9, 4, 8, 0)).toContain("exceeds ceiling");
  });
  it("rejects below a strict floor", () => {
    expect(boundsForTotal(3, 4, 8, 0)).toContain("below floor");
  });
  it("relaxes only the lower edge by the tolerance", () => {
    expect(boundsForTotal(2, 4, 8, 2)).toBeNull();
    expect(boundsForTotal(8, 4, 8, 2)).toBeNull();
    const over = boundsForTotal(9, 4, 8, 2);
    expect(over).toContain("exceeds ceiling");
    expect(over).not.toContain("tol");
    expect(boundsForTotal(1, 4, 8, 2)).toContain("- tol 2");
  });
  it("treats a negative floor as disabled", () => {
    expect(boundsForTotal(0, -1, 8, 0)).toBeNull();
    expect(boundsForTotal(9, -1, 8, 0)).not.toBeNull();
  });
  it("treats a negative ceiling as disabled", () => {
    expect(boundsForTotal(100, 4, -1, 0)).toBeNull();
    expect(boundsForTotal(3, 4, -1, 0)).not.toBeNull();
  });
  it("accepts anything with both bounds disabled", () => {
    expect(boundsForTotal(999, -1, -1, 0)).toBeNull();
  });
});

describe("proportionalClampPair", () => {
  it("is a no-op with both bounds disabled", () => {
    expect(proportionalClampPair(3, 5, 1, 1, -1, -1, 1)).toEqual([3, 5]);
  });
  it("preserves asymmetric component minimums", () => {
    expect(proportionalClampPair(10, 10, 1, 1, -1, 5, 2, 1)).toEqual([2, 3]);
  });
  it("returns in-band inputs unchanged", () => {
    expect(proportionalClampPair(3, 1, 1, 1, 4, 4, 1)).toEqual([3, 1]);
  });
  it("pushes up to the floor", () => {
    const [p, d] = proportionalClampPair(1, 1, 1, 1, 4, 4, 1);
    expect(p + d).toBeGreaterThanOrEqual(3);
    expect(p + d).toBeLessThanOrEqual(5);
  });
  it("shrinks to a strict ceiling when only max is set", () => {
    const [p, d] = proportionalClampPair(5, 5, 1, 1, -1, 4, 1);
    expect(p + d).toBe(4);
  });
  it("shrinks an asymmetric overshoot under the strict ceiling", () => {
    const [p, d] = proportionalClampPair(1, 2, 1, 2, 4, 4, 1);
    expect(p + 2 * d).toBeLessThanOrEqual(4);
    expect(p).toBeGreaterThanOrEqual(1);
    expect(d).toBeGreaterThanOrEqual(1);
  });
  it("never grows decode on the ceiling path", () => {
    const [p, d] = proportionalClampPair(10, 1, 8, 1, -1, 20, 1);
    expect(p).toBeLessThanOrEqual(10);
    expect(d).toBeLessThanOrEqual(1);
    expect(p * 8 + d).toBeLessThanOrEqual(20);
  });
  it("keeps min_endpoint on the ceiling path", () => {
    const [p, d] = proportionalClampPair(10, 0, 8, 1, -1, 20, 1);
    expect(d).toBeGreaterThanOrEqual(1);
    expect(p * 8 + d).toBeLessThanOrEqual(20);
  });
  it.each([
    [12, 1, 8, 1, 32],
    [8, 2, 8, 1, 20],
    [6, 1, 4, 1, 12],
    [5, 5, 1, 1, 4],
  ])("never grows either pool on the ceiling path (%i,%i, pg %i, dg %i, max %i)", (p, d, pg, dg, max) => {
    const [np, nd] = proportionalClampPair(p, d, pg, dg, -1, max, 1);
    expect(np).toBeLessThanOrEqual(p);
    expect(nd).toBeLessThanOrEqual(d);
    expect(np * pg + nd * dg).toBeLessThanOrEqual(max);
  });
  it("grows an asymmetric pair to the floor without overshooting", () => {
    const [p, d] = proportionalClampPair(1, 1, 1, 2, 5, 5, 1);
    expect(p + 2 * d).toBeGreaterThanOrEqual(3);
    expect(p + 2 * d).toBeLessThanOrEqual(5);
  });
  it("converges on an unreachable target (2-GPU pools, min = max = 5 ⇒ 4)", () => {
    const [p, d] = proportionalClampPair(1, 1, 2, 2, 5, 5, 1);
    expect(2 * p + 2 * d).toBe(4);
  });
  it("is idempotent after one pass", () => {
    const first = proportionalClampPair(1, 1, 2, 2, 5, 5, 1);
    expect(proportionalClampPair(first[0], first[1], 2, 2, 5, 5, 1)).toEqual(first);
  });
  it("leaves a total inside the tolerance-relaxed open band alone", () => {
    expect(proportionalClampPair(1, 1, 1, 2, 4, 10, 1)).toEqual([1, 1]);
  });
  it("returns inputs when a GPU cost is not initialised", () => {
    expect(proportionalClampPair(3, 5, 0, 1, 4, 8, 1)).toEqual([3, 5]);
    expect(proportionalClampPair(3, 5, 1, 0, 4, 8, 1)).toEqual([3, 5]);
  });
  it("zeroes when the ceiling cannot fit the minimum footprint", () => {
    expect(proportionalClampPair(5, 5, 1, 1, -1, 1, 1)).toEqual([0, 0]);
    expect(proportionalClampPair(1, 2, 2, 2, 3, 3, 1)).toEqual([0, 0]);
    expect(proportionalClampPair(1, 2, 2, 2, 1, 1, 1)).toEqual([0, 0]);
  });
  it("distributes a floor over an empty allocation", () => {
    const [p, d] = proportionalClampPair(0, 0, 1, 1, 4, 4, 1);
    expect(p + d).toBeGreaterThanOrEqual(3);
    expect(p + d).toBeLessThanOrEqual(5);
  });
  it("falls back to inputs on an infeasible band", () => {
    expect(proportionalClampPair(2, 2, 1, 1, 100, 4, 1)).toEqual([2, 2]);
  });
});

describe("guardSingleScalingBudget", () => {
  it("holds a scale-down at the nominal floor", () => {
    expect(guardSingleScalingBudget(64, 63, 1, 64, 64, 1)).toEqual({
      value: 64,
      reason: "gpu_budget_guard_hold",
    });
  });
  it("does not bounce from the tolerance edge to the floor", () => {
    expect(guardSingleScalingBudget(63, 62, 1, 64, 64, 1)).toEqual({
      value: 63,
      reason: "gpu_budget_guard_hold",
    });
  });
  it("reconciles an over-ceiling current count past the throughput delta", () => {
    expect(guardSingleScalingBudget(70, 69, 1, -1, 64, 1)).toEqual({
      value: 64,
      reason: "gpu_budget_reconcile",
    });
  });
});

describe("fitDirectionalBudgetPair", () => {
  const fitPair = (
    current: [number, number],
    proposed: [number, number],
    { pg = 1, dg = 1, min = 64, max = 64 } = {},
  ): [number, number] =>
    fitDirectionalBudgetPair(current[0], current[1], proposed[0], proposed[1], pg, dg, min, max, 1, 1);

  it("holds when both roles scale up at the ceiling", () => {
    expect(fitPair([24, 40], [32, 48])).toEqual([24, 40]);
  });
  it("admits only the funded part of an opposing rebalance", () => {
    expect(fitPair([24, 40], [23, 48])).toEqual([23, 41]);
  });
  it("keeps a weighted opposing rebalance atomic", () => {
    expect(fitPair([16, 16], [15, 24], { pg: 2, dg: 1, min: 48, max: 48 })).toEqual([15, 18]);
  });
  it("shares the available headroom between two scale-ups", () => {
    expect(fitPair([24, 36], [32, 44], { min: -1, max: 64 })).toEqual([26, 38]);
  });

  // Upstream enumerates currents 1..4 and proposals current±2 for widths (1,1), (1,2), (2,3) with
  // min = max = the current total and zero endpoint minimums.
  it.each([
    [1, 1],
    [1, 2],
    [2, 3],
  ])("exhaustively preserves directions and budget (pg %i, dg %i)", (pg, dg) => {
    for (let cp = 1; cp < 5; cp++) {
      for (let cd = 1; cd < 5; cd++) {
        const budget = cp * pg + cd * dg;
        for (let pp = Math.max(0, cp - 2); pp < cp + 3; pp++) {
          for (let pd = Math.max(0, cd - 2); pd < cd + 3; pd++) {
            expectDirectionalFit(cp, cd, pp, pd, pg, dg, budget, budget);
          }
        }
      }
    }
  });

  test.prop([
    fc.integer({ min: 1, max: 4 }),
    fc.integer({ min: 1, max: 4 }),
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: -10, max: 10 }),
    fc.integer({ min: -10, max: 10 }),
    fc.integer({ min: 0, max: 8 }),
  ])("stays directional, in band and atomic for random shapes", (pg, dg, cp, cd, dp, dd, slack) => {
    const pp = Math.max(0, cp + dp);
    const pd = Math.max(0, cd + dd);
    const total = cp * pg + cd * dg;
    // A band that contains the current allocation: floor at the current total, ceiling a little above.
    expectDirectionalFit(cp, cd, pp, pd, pg, dg, total, total + slack);
  });
});

/** The invariants upstream's exhaustive test asserts, for a current allocation that is in band. */
function expectDirectionalFit(
  cp: number,
  cd: number,
  pp: number,
  pd: number,
  pg: number,
  dg: number,
  min: number,
  max: number,
): void {
  const [fp, fd] = fitDirectionalBudgetPair(cp, cd, pp, pd, pg, dg, min, max, 0, 0);
  expect(fp).toBeGreaterThanOrEqual(Math.min(cp, pp));
  expect(fp).toBeLessThanOrEqual(Math.max(cp, pp));
  expect(fd).toBeGreaterThanOrEqual(Math.min(cd, pd));
  expect(fd).toBeLessThanOrEqual(Math.max(cd, pd));
  expect(boundsForTotal(fp * pg + fd * dg, min, max, Math.max(pg, dg))).toBeNull();
  const opposing = (pp < cp && pd > cd) || (pp > cp && pd < cd);
  if (opposing) expect(fp === cp).toBe(fd === cd);
}

describe("guardDisaggScalingBudget", () => {
  const guard = (
    current: [number, number],
    proposed: [number, number],
    { pg = 1, dg = 1, min = 64, max = 64, pmin = 1, dmin = 1 } = {},
  ) =>
    guardDisaggScalingBudget(current[0], current[1], proposed[0], proposed[1], pg, dg, min, max, pmin, dmin);
  const hold = (p: number, d: number) => ({ value: [p, d], reason: "gpu_budget_guard_hold" });

  it.each([
    [[28, 36] as [number, number], [27, 36] as [number, number]],
    [[27, 36] as [number, number], [26, 35] as [number, number]],
  ])("holds a scale-down without scale-up at the floor (%j → %j)", (current, proposed) => {
    expect(guard(current, proposed)).toEqual(hold(current[0], current[1]));
  });
  it("allows an explicit opposing swap at a fixed budget", () => {
    expect(guard([27, 37], [26, 38])).toEqual({ value: [26, 38], reason: null });
  });
  it("allows the reverse opposing swap at a fixed budget", () => {
    expect(guard([27, 37], [28, 36])).toEqual({ value: [28, 36], reason: null });
  });
  it.each([[[28, 37] as [number, number]], [[29, 37] as [number, number]]])(
    "does not invent a donor at full budget (→ %j)",
    (proposed) => {
      expect(guard([28, 36], proposed)).toEqual(hold(28, 36));
    },
  );
  it("rejects an opposing swap that does not fit", () => {
    expect(guard([2, 1], [1, 2], { pg: 1, dg: 2, min: 4, max: 4 })).toEqual(hold(2, 1));
  });
  it("does not execute only the donor leg of a weighted swap", () => {
    expect(guard([2, 1], [1, 2], { pg: 1, dg: 3, min: 5, max: 6 })).toEqual(hold(2, 1));
  });
  it("allows a scale-down above the floor", () => {
    expect(guard([35, 35], [34, 35], { max: 80 })).toEqual({ value: [34, 35], reason: null });
  });
  it("does not invent a ceiling donor with the floor disabled", () => {
    expect(guard([3, 1], [3, 2], { min: -1, max: 4 })).toEqual(hold(3, 1));
  });
  it("does not invent a donor for max-only up/up", () => {
    expect(guard([4, 1], [5, 2], { min: -1, max: 5 })).toEqual(hold(4, 1));
  });
  it("does not let the weighted tolerance enable donor-only churn", () => {
    expect(guard([1, 1], [0, 1], { pg: 2, dg: 2, min: 5, max: 5, pmin: 0 })).toEqual(hold(1, 1));
  });
  it("allows a feasible opposing swap within the weighted tolerance", () => {
    expect(guard([1, 1], [0, 2], { pg: 2, dg: 2, min: 5, max: 5, pmin: 0 })).toEqual({
      value: [0, 2],
      reason: null,
    });
  });
  it("never inverts a hold into a scale-up through the floor clamp", () => {
    expect(guard([4, 3], [1, 3], { min: 6, max: 10 })).toEqual(hold(4, 3));
  });
  it("holds when an integer-width clamp cannot reach the band", () => {
    expect(guard([1, 2], [2, 1], { pg: 1, dg: 2, min: 7, max: 7 })).toEqual(hold(1, 2));
  });
  it("reconciles from the current allocation when it is below the floor", () => {
    expect(guard([1, 1], [0, 1], { min: 4, max: 6 })).toEqual({
      value: [2, 2],
      reason: "gpu_budget_reconcile",
    });
  });
});

describe("proportionalClampSingle", () => {
  it("is a no-op with both bounds disabled", () => {
    expect(proportionalClampSingle(3, 1, -1, -1, 1)).toBe(3);
  });
  it("keeps an in-band count", () => {
    expect(proportionalClampSingle(3, 1, 2, 5, 1)).toBe(3);
  });
  it("shrinks to a strict ceiling", () => {
    expect(proportionalClampSingle(10, 1, -1, 4, 1)).toBe(4);
  });
  it("grows into the band below the floor", () => {
    const out = proportionalClampSingle(1, 1, 4, 5, 1);
    expect(out).toBeGreaterThanOrEqual(3);
    expect(out).toBeLessThanOrEqual(5);
  });
  it("keeps min_endpoint", () => {
    expect(proportionalClampSingle(0, 1, 4, 5, 2)).toBeGreaterThanOrEqual(2);
  });
  it("zeroes when min_endpoint cannot fit the ceiling", () => {
    expect(proportionalClampSingle(5, 1, -1, 2, 3)).toBe(0);
    expect(proportionalClampSingle(2, 4, 3, 3, 1)).toBe(0);
  });
  it("falls back to the largest fitting count when a floor push overshoots", () => {
    expect(proportionalClampSingle(1, 2, 5, 5, 1)).toBe(2);
  });
  // Upstream `test_planner_budget_uses_replica_cost_not_engine_width`: 4-GPU engines under an 8-GPU
  // ceiling; the budget charges `gpuCostPerReplica ?? numGpu`, so a 1-GPU sidecar lowers the limit.
  it.each([
    ["no sidecar (cost = numGpu 4)", 4, 2],
    ["zero-GPU sidecar (cost 4)", 4, 2],
    ["one-GPU sidecar (cost 5)", 5, 1],
  ])("charges the per-replica cost: %s", (_label, cost, expected) => {
    expect(proportionalClampSingle(3, cost, -1, 8, 1)).toBe(expected);
  });
});
