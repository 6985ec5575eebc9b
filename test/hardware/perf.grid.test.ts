import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { Grid, type GridRules } from "../../src/hardware/grid.js";

const LOGLOG: GridRules = {
  axes: [
    { log: true, values: "log", below: "clamp", above: "proportional" },
    { log: true, values: "log", below: "clamp", above: "extend" },
  ],
  fillOrder: [0, 1],
};

describe("Grid (shared interpolation core)", () => {
  // f(x, y) = 2·x·y² is exact under log-log interpolation.
  const xs = [1, 4, 16];
  const ys = [1, 2, 8];
  const f = (x: number, y: number): number => 2 * x * y * y;
  const grid = new Grid(
    [xs, ys],
    xs.flatMap((x) => ys.map((y) => f(x, y))),
    LOGLOG,
  );

  it("returns measured cells exactly at the knots", () => {
    for (const x of xs) for (const y of ys) expect(grid.at2(x, y)).toBe(f(x, y));
  });

  it("is exact for power laws inside the grid (log-log)", () => {
    expect(grid.at2(2, 3)).toBeCloseTo(f(2, 3), 9);
    expect(grid.at2(10, 5)).toBeCloseTo(f(10, 5), 9);
  });

  it("extrapolates per axis: proportional, extend, clamp", () => {
    expect(grid.at2(64, 2)).toBeCloseTo(f(16, 2) * 4, 9); // proportional above x
    expect(grid.at2(4, 32)).toBeCloseTo(f(4, 32), 6); // log-log extension above y
    expect(grid.at2(0.5, 2)).toBe(f(1, 2)); // clamp below x
  });

  it("holds the edge value instead of extending a decreasing trend", () => {
    const g = new Grid([[1, 2, 4]], [3, 5, 4], {
      axes: [{ log: false, values: "lin", below: "clamp", above: "extend" }],
      fillOrder: [0],
    });
    expect(g.at1(100)).toBe(4);
  });

  it("extends in √value for the sqrt rule (quadratic growth)", () => {
    const g = new Grid([[1, 2, 3]], [1, 4, 9], {
      axes: [{ log: false, values: "sqrt", below: "clamp", above: "sqrt" }],
      fillOrder: [0],
    });
    expect(g.at1(10)).toBeCloseTo(100, 9);
    expect(g.at1(2.5)).toBeCloseTo(6.25, 9);
  });

  it("fills holes along the fill order before answering queries", () => {
    // y = 8 is missing for x = 16: filled along y by log-log extension (exact for f).
    const cells: (number | null)[] = xs.flatMap((x) => ys.map((y) => (x === 16 && y === 8 ? null : f(x, y))));
    const g = new Grid([xs, ys], cells, { ...LOGLOG, fillOrder: [1, 0] });
    expect(g.measured[8]).toBe(0);
    expect(g.at2(16, 8)).toBeCloseTo(f(16, 8), 6);
  });

  test.prop([fc.double({ min: 1, max: 16, noNaN: true }), fc.double({ min: 1, max: 8, noNaN: true })])(
    "interpolated values lie between the bracketing cells",
    (x, y) => {
      const v = grid.at2(x, y);
      const corners = xs.flatMap((a) => ys.map((b) => f(a, b)));
      expect(v).toBeGreaterThanOrEqual(Math.min(...corners) * (1 - 1e-12));
      expect(v).toBeLessThanOrEqual(Math.max(...corners) * (1 + 1e-12));
    },
  );

  it("rejects unsorted axes and mismatched cell counts", () => {
    const one: GridRules = { axes: [LOGLOG.axes[0]], fillOrder: [0] };
    expect(() => new Grid([[2, 1]], [1, 2], one)).toThrow(/increasing/);
    expect(() => new Grid([xs, ys], [1, 2, 3], LOGLOG)).toThrow();
  });
});
