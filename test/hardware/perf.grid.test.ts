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

/**
 * The interpolation as defined, axis by axis from the first (the documented rules, no shortcuts
 * shared with `Grid`): the value of the sub-grid at each bracketing knot, then one blend or one
 * extrapolation rule. `Grid`'s allocation-free recursion must give the same double, bit for bit
 * (a faster query path is held to this too).
 */
function definedValue(
  knots: number[][],
  cells: Float64Array,
  rules: GridRules,
  q: number[],
  d = 0,
  off = 0,
): number {
  if (d === knots.length) return cells[off];
  const kn = knots[d];
  const n = kn.length;
  let stride = 1;
  for (let e = d + 1; e < knots.length; e++) stride *= knots[e].length;
  const at = (i: number): number => definedValue(knots, cells, rules, q, d + 1, off + i * stride);
  const x = q[d];
  const rule = rules.axes[d];
  const space = (v0: number, v1: number, t: number, values: string): number => {
    if (values === "sqrt") return (Math.sqrt(v0) + t * (Math.sqrt(v1) - Math.sqrt(v0))) ** 2;
    if (values === "log" && v0 > 0 && v1 > 0)
      return Math.exp(Math.log(v0) + t * (Math.log(v1) - Math.log(v0)));
    return Math.max(v0 + t * (v1 - v0), 0);
  };
  if (n === 1) {
    const v = at(0);
    const side = x > kn[0] ? rule.above : x < kn[0] ? rule.below : "clamp";
    return side === "proportional" ? (v * x) / kn[0] : v;
  }
  const exact = kn.indexOf(x);
  if (exact >= 0) return at(exact);
  const outside = x < kn[0] ? rule.below : x > kn[n - 1] ? rule.above : null;
  if (outside === "clamp" || outside === "proportional" || outside === "quadratic") {
    const e = x < kn[0] ? 0 : n - 1;
    const v = at(e);
    const r = x / kn[e];
    return outside === "clamp" ? v : outside === "proportional" ? v * r : v * r * r;
  }
  let i = 0;
  while (i < n - 2 && kn[i + 1] <= x) i++;
  const v0 = at(i);
  const v1 = at(i + 1);
  if (outside !== null && v1 < v0) return x < kn[0] ? v0 : v1;
  if (outside === "sqrt") return space(v0, v1, (x - kn[i]) / (kn[i + 1] - kn[i]), "sqrt");
  const tx = rule.log ? Math.log(x) : x;
  const t0 = rule.log ? Math.log(kn[i]) : kn[i];
  const t1 = rule.log ? Math.log(kn[i + 1]) : kn[i + 1];
  return space(v0, v1, (tx - t0) / (t1 - t0), rule.values);
}

const extrapolation = fc.constantFrom("clamp", "extend", "proportional", "sqrt", "quadratic" as const);
const axisArb = fc.record({
  knots: fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 5 }),
  log: fc.boolean(),
  values: fc.constantFrom("lin", "log", "sqrt" as const),
  below: extrapolation,
  above: extrapolation,
});

describe("Grid ≡ the interpolation as defined", () => {
  test.prop(
    [
      fc.array(axisArb, { minLength: 1, maxLength: 3 }),
      fc.array(fc.double({ min: 0.001, max: 1000, noNaN: true }), { minLength: 125, maxLength: 125 }),
      fc.array(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 3, maxLength: 3 }), { maxLength: 20 }),
    ],
    { seed: 1206, numRuns: 400 },
  )("every query, knots and outside the axes included, to the bit", (axes, pool, queries) => {
    const knots = axes.map((a) => [...a.knots].sort((x, y) => x - y));
    const size = knots.reduce((n, k) => n * k.length, 1);
    const rules: GridRules = {
      axes: axes.map((a) => ({ log: a.log, values: a.values, below: a.below, above: a.above })),
      fillOrder: axes.map((_, d) => d),
    };
    const grid = new Grid(knots, pool.slice(0, size), rules);
    for (const raw of queries) {
      // Half the coordinates on a knot (the exact-hit path), half anywhere (0 is below every knot).
      const q = knots.map((k, d) => (raw[d] % 2 === 0 ? k[raw[d] % k.length] : raw[d] / 1.7));
      const got =
        knots.length === 1
          ? grid.at1(q[0])
          : knots.length === 2
            ? grid.at2(q[0], q[1])
            : grid.at3(q[0], q[1], q[2]);
      expect(Object.is(got, definedValue(knots, grid.values, rules, q))).toBe(true);
    }
  });
});
