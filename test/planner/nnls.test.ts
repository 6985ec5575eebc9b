import { describe, expect, it } from "vitest";
import { fitNnls } from "../../src/planner/perfModel/nnls.js";

describe("fitNnls", () => {
  it("recovers a noiseless 1-D line and 2-D plane exactly", () => {
    const line = [[500], [1000], [1500], [2000], [2500]];
    const fit1 = fitNnls(
      line,
      line.map(([t]) => 0.001 * t + 0.002),
      1,
    )!;
    expect(fit1.coef[0]).toBeCloseTo(0.001, 14);
    expect(fit1.intercept).toBeCloseTo(0.002, 12);
    const xs: number[][] = [];
    for (const a of [100, 700, 1900, 4000]) for (const b of [0, 5000, 12000]) xs.push([a, b + a / 3]);
    const fit2 = fitNnls(
      xs,
      xs.map(([a, b]) => 0.002 + 3e-5 * a + 7e-7 * b),
      2,
    )!;
    expect(fit2.coef[0] / 3e-5).toBeCloseTo(1, 9);
    expect(fit2.coef[1] / 7e-7).toBeCloseTo(1, 9);
    expect(fit2.intercept / 0.002).toBeCloseTo(1, 9);
  });

  it("fits collinear features on the data's own line and gives a constant feature no slope", () => {
    // kv = 200·n: any split of the slope between the two fits the data; the fit must reproduce it.
    const xs = [5, 10, 15, 20, 25].map((n) => [n, 200 * n]);
    const fit = fitNnls(
      xs,
      xs.map(([n]) => 0.0205 * n + 0.001),
      2,
    )!;
    for (const [n, kv] of xs) {
      expect(fit.intercept + fit.coef[0] * n + fit.coef[1] * kv).toBeCloseTo(0.0205 * n + 0.001, 12);
    }
    expect(fitNnls([[3], [3], [3]], [1, 2, 6], 1)).toMatchObject({ intercept: 3, coef: [0] });
  });

  it("holds a negative intercept at 0 and refits the slopes through the origin", () => {
    // Passes of 4–8k tokens: y = −0.1 + 5e-5·x has a negative intercept.
    const xs = [[4000], [5000], [6000], [7000], [8000]];
    const ys = xs.map(([x]) => -0.1 + 5e-5 * x);
    const fit = fitNnls(xs, ys, 1)!;
    expect(fit.intercept).toBe(0);
    const sxy = xs.reduce((s, [x], i) => s + x * ys[i], 0);
    const sxx = xs.reduce((s, [x]) => s + x * x, 0);
    expect(fit.coef[0]).toBeCloseTo(sxy / sxx, 15);
  });

  it("finds the least-squares point of the feasible set (checked on a grid of candidates)", () => {
    // Time falls with the first feature: its slope is held at 0.
    const xs: number[][] = [];
    for (const n of [5, 15, 35]) for (const kv of [800, 2600, 4400]) xs.push([n, kv + 37 * n]);
    const ys = xs.map(([n, kv]) => 0.01 + 1e-5 * kv - 1e-4 * n);
    const fit = fitNnls(xs, ys, 2)!;
    const sse = (a: number, b: number, c: number) =>
      xs.reduce((s, [n, kv], i) => s + (ys[i] - a - b * n - c * kv) ** 2, 0);
    const best = sse(fit.intercept, fit.coef[0], fit.coef[1]);
    for (const da of [-1e-3, 0, 1e-3])
      for (const dc of [-1e-7, 0, 1e-7]) {
        const a = fit.intercept + da;
        const c = fit.coef[1] + dc;
        if (a < 0 || c < 0) continue;
        expect(sse(a, 0, c)).toBeGreaterThanOrEqual(best - 1e-18);
      }
    expect(fit.coef[0]).toBe(0);
    expect(fitNnls([], [], 2)).toBeNull();
  });
});
