import { describe, expect, it } from "vitest";
import { ProphetPredictor } from "../../src/planner/predictors/index.js";
import { solveLasso } from "../../src/planner/predictors/lasso.js";
import {
  autoSeasonalities,
  changepointIndices,
  fitProphet,
  prophetForecast,
} from "../../src/planner/predictors/prophetModel.js";

const base = { log1p: false, prophetWindowSize: 20, intervalS: 180 };

describe("Prophet-style predictor", () => {
  it("returns the last value below 5 points, 0 when empty", () => {
    const p = new ProphetPredictor(base);
    expect(p.predictNext()).toBe(0);
    for (const v of [10, 20, 30]) p.addDataPoint(v);
    expect(p.predictNext()).toBe(30);
  });

  it("extrapolates a linear trend one step past the retained window", () => {
    const p = new ProphetPredictor(base);
    for (let i = 0; i < 30; i++) p.addDataPoint(5 + 3 * i);
    expect(p.predictNext()).toBeCloseTo(5 + 3 * 30, 6);
  });

  it("log1p mode fits log1p(y): an exponential series is a line there", () => {
    const p = new ProphetPredictor({ ...base, log1p: true });
    const y = (i: number): number => Math.expm1(1 + 0.1 * i);
    for (let i = 0; i < 12; i++) p.addDataPoint(y(i));
    expect(p.predictNext()).toBeCloseTo(y(12), 5);
    expect(p.getLastValue()).toBeCloseTo(y(11), 9);
  });

  it("clamps forecasts at 0 in both modes", () => {
    const raw = new ProphetPredictor(base);
    for (const v of [90, 70, 50, 30, 10]) raw.addDataPoint(v);
    expect(raw.predictNext()).toBe(0);
    // log1p values 3.93 … 0.10 fall by ~0.76 a step: the log-space forecast is below 0.
    const log = new ProphetPredictor({ ...base, log1p: true });
    for (const v of [50, 20, 8, 3, 1, 0.1]) log.addDataPoint(v);
    expect(log.predictNext()).toBe(0);
  });

  it("keeps only the last prophetWindowSize points", () => {
    // A kink long before the window must not matter: the window sees a clean line.
    const p = new ProphetPredictor({ ...base, prophetWindowSize: 6 });
    for (const v of [500, 400, 1, 2, 3, 4, 5, 6]) p.addDataPoint(v);
    expect(p.predictNext()).toBeCloseTo(7, 6);
  });

  it("follows a change of slope inside the changepoint range", () => {
    const kink = Array.from({ length: 20 }, (_, i) => (i < 8 ? 10 + 2 * i : 26 + 6 * (i - 8)));
    const fit = fitProphet(kink, 0, 180);
    expect(fit.predictAt(20)).toBeCloseTo(26 + 6 * 12, 3);
    expect(fit.delta.some((d) => d > 0.5)).toBe(true);
  });

  it("with long windows, fits Prophet's auto daily seasonality", () => {
    // Hourly points over 4 days: daily seasonality switches on (span ≥ 2 days, spacing < 1 day).
    const y = (i: number): number => 100 + 30 * Math.sin((2 * Math.PI * (i + 5)) / 24);
    const window = Array.from({ length: 96 }, (_, i) => y(i));
    expect(prophetForecast(window, 0, 3600)).toBeCloseTo(y(96), 3);
  });
});

describe("Prophet-style model pieces", () => {
  it("places changepoints as Prophet does (first 80 %, at most 25)", () => {
    expect(changepointIndices(4)).toEqual([1, 2]);
    expect(changepointIndices(5)).toEqual([1, 2, 3]);
    expect(changepointIndices(20)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    const fifty = changepointIndices(50);
    expect(fifty).toHaveLength(25);
    expect(fifty[0]).toBe(2); // round(39/25) = round(1.56)
    expect(fifty[24]).toBe(39);
    expect(changepointIndices(2)).toEqual([]);
  });

  it("enables seasonalities only over long enough spans", () => {
    expect(autoSeasonalities(50, 180)).toEqual([]);
    expect(autoSeasonalities(50, 3600).map((s) => s.periodDays)).toEqual([1]);
    expect(autoSeasonalities(400, 3600).map((s) => s.periodDays)).toEqual([7, 1]);
    expect(autoSeasonalities(20, 86_400).map((s) => s.periodDays)).toEqual([7]); // daily spacing: no daily term
  });

  it("returns a MAP point: perturbing any parameter does not lower the objective", () => {
    const y = [12, 15, 11, 19, 22, 18, 25, 31, 28, 35, 33, 30, 41, 38, 45, 44, 50, 47, 55, 53];
    const fit = fitProphet(y, 0, 180);
    const n = y.length;
    const ys = y.map((v) => v / fit.yScale);
    const objective = (beta: readonly number[], delta: readonly number[]): number => {
      let sse = 0;
      for (let i = 0; i < n; i++) {
        const t = i / (n - 1);
        let f = beta[0] + beta[1] * t;
        fit.changepointsT.forEach((c, j) => {
          f += Math.max(0, t - c) * delta[j];
        });
        sse += (ys[i] - f) ** 2;
      }
      const prior =
        (beta[0] ** 2 + beta[1] ** 2) / 50 +
        delta.reduce((s, d) => s + Math.abs(d), 0) / 0.05 +
        2 * fit.sigma2;
      return (n / 2) * Math.log(fit.sigma2) + sse / (2 * fit.sigma2) + prior;
    };
    const at = objective(fit.beta, fit.delta);
    expect(at).toBeCloseTo(fit.objective, 8);
    for (const h of [1e-4, -1e-4]) {
      for (let j = 0; j < fit.beta.length; j++) {
        const b = fit.beta.slice();
        b[j] += h;
        expect(objective(b, fit.delta)).toBeGreaterThanOrEqual(at - 1e-9);
      }
      for (let j = 0; j < fit.delta.length; j++) {
        const d = fit.delta.slice();
        d[j] += h;
        expect(objective(fit.beta, d)).toBeGreaterThanOrEqual(at - 1e-9);
      }
    }
  });
});

describe("feature-sign lasso", () => {
  it("soft-thresholds an orthonormal design; unpenalised coordinates are plain least squares", () => {
    const I = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
    expect(solveLasso(I, [3, -0.5, -2], [true, true, true], 1, [0, 0, 0])).toEqual([2, 0, -1]);
    expect(solveLasso(I, [3, -0.5, -2], [false, true, true], 1, [0, 0, 0])).toEqual([3, 0, -1]);
  });

  it("meets the optimality conditions on correlated columns from any start", () => {
    const q = [
      [2, 1.9, 1.5],
      [1.9, 2, 1.8],
      [1.5, 1.8, 2],
    ];
    const g = [3, 2.5, -1];
    for (const start of [
      [0, 0, 0],
      [5, -5, 5],
    ]) {
      const z = solveLasso(q, g, [true, true, true], 0.3, start);
      const grad = q.map((row, i) => row.reduce((s, v, j) => s + v * z[j], 0) - g[i]);
      z.forEach((v, i) => {
        if (v !== 0) expect(grad[i] + 0.3 * Math.sign(v)).toBeCloseTo(0, 9);
        else expect(Math.abs(grad[i])).toBeLessThanOrEqual(0.3 + 1e-9);
      });
    }
  });
});
