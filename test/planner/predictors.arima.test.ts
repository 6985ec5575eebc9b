import { describe, expect, it } from "vitest";
import {
  arimaCandidates,
  autoArima,
  chooseDifferencing,
  forecastArima,
  kpssStatistic,
} from "../../src/planner/predictors/arimaModel.js";
import { ArimaPredictor } from "../../src/planner/predictors/index.js";

/** y_t = φ·y_{t−1} + c, no noise. */
function arSeries(y0: number, phi: number, c: number, n: number): number[] {
  const y = [y0];
  while (y.length < n) y.push(phi * y[y.length - 1] + c);
  return y;
}

function feed(p: ArimaPredictor, values: readonly number[]): void {
  for (const v of values) p.addDataPoint(v);
}

describe("ARIMA predictor", () => {
  it("returns the last value below 5 points and the common value of constant data", () => {
    const p = new ArimaPredictor({ log1p: false });
    feed(p, [3, 9, 4, 8]);
    expect(p.predictNext()).toBe(8);
    expect(p.fit).toBeNull();
    const c = new ArimaPredictor({ log1p: false });
    feed(c, [7, 7, 7, 7, 7, 7]);
    expect(c.predictNext()).toBe(7);
    expect(c.fit).toBeNull();
  });

  it("forecasts a noise-free AR(1) approach to its mean as the recursion does", () => {
    const y = arSeries(10, 0.8, 20, 10);
    const p = new ArimaPredictor({ log1p: false });
    feed(p, y);
    expect(p.predictNext()).toBeCloseTo(0.8 * y[9] + 20, 8);
    expect(p.mode).toBe("raw");
    const fit = p.fit!;
    expect(fit.p).toBe(1);
    expect(fit.q).toBe(0);
    expect(fit.params[fit.intercept ? 1 : 0]).toBeCloseTo(0.8, 10);
    // Updates keep the order and re-estimate on the grown buffer: still on the recursion.
    let last = y[9];
    for (let i = 0; i < 5; i++) {
      last = 0.8 * last + 20;
      p.addDataPoint(last);
      expect(p.predictNext()).toBeCloseTo(0.8 * last + 20, 8);
    }
    expect(p.fit!.p).toBe(fit.p);
    expect(p.fit!.d).toBe(fit.d);
  });

  it("fits a stationary oscillating AR(1) with an intercept at d = 0", () => {
    const y = arSeries(0, -0.5, 30, 10);
    expect(chooseDifferencing(y)).toBe(0);
    const p = new ArimaPredictor({ log1p: false });
    feed(p, y);
    expect(p.predictNext()).toBeCloseTo(-0.5 * y[9] + 30, 8);
    expect(p.fit).toMatchObject({ p: 1, d: 0, q: 0, intercept: true });
    expect(p.fit!.params[0]).toBeCloseTo(30, 8);
    expect(p.fit!.params[1]).toBeCloseTo(-0.5, 10);
  });

  it("switches to log1p when a raw fit selects p = q = 0", () => {
    // A straight line differences to a constant: ARIMA(0,1,0) with drift, so raw mode gives up.
    const p = new ArimaPredictor({ log1p: false });
    feed(p, [10, 20, 30, 40, 50]);
    const f = p.predictNext();
    expect(p.mode).toBe("log1p");
    expect(Number.isFinite(f)).toBe(true);
    expect(f).toBeGreaterThan(0);
    // The raw selection itself, for the record.
    expect(autoArima([10, 20, 30, 40, 50])).toMatchObject({ p: 0, d: 1, q: 0, intercept: true });
    expect(forecastArima([10, 20, 30, 40, 50], autoArima([10, 20, 30, 40, 50]))).toBeCloseTo(60, 10);
  });

  it("log1p requested: models log1p(y), returns max(0, expm1(f))", () => {
    const y = arSeries(10, 0.8, 20, 12);
    const p = new ArimaPredictor({ log1p: true });
    feed(p, y);
    const f = p.predictNext();
    expect(p.mode).toBe("log1p");
    const logY = y.map(Math.log1p);
    expect(f).toBeCloseTo(Math.max(0, Math.expm1(forecastArima(logY, autoArima(logY)))), 8);
    expect(p.getLastValue()).toBe(y[11]);
  });

  it("clamps negative raw forecasts to 0 and buffers max(0, value)", () => {
    const p = new ArimaPredictor({ log1p: false });
    feed(p, [90, 71, 50, 29, 10.5, 1]);
    expect(p.predictNext()).toBeGreaterThanOrEqual(0);
    const q = new ArimaPredictor({ log1p: false });
    q.addDataPoint(5);
    q.addDataPoint(-3);
    expect(q.getLastValue()).toBe(0);
  });

  it("is deterministic", () => {
    const y = [12, 30, 7, 18, 25, 9, 40, 13, 22, 31, 8, 19];
    const run = (): number[] => {
      const p = new ArimaPredictor({ log1p: false });
      const out: number[] = [];
      for (const v of y) {
        p.addDataPoint(v);
        out.push(p.predictNext());
      }
      return out;
    };
    expect(run()).toEqual(run());
  });
});

describe("auto-ARIMA pieces", () => {
  it("KPSS level statistic by hand: y = 1..5", () => {
    // e = −2..2, partial sums −2, −3, −3, −2, 0 ⇒ η = 26/25; lag 0 ⇒ s² = 10/5.
    expect(kpssStatistic([1, 2, 3, 4, 5])).toBeCloseTo(26 / 25 / 2, 12);
    expect(chooseDifferencing([1, 2, 3, 4, 5])).toBe(1); // 0.52 > 0.463, then constant
    expect(chooseDifferencing([5, 5, 5, 5])).toBe(0);
  });

  it("caps p and q at ⌊n/3⌋ and keeps a residual degree of freedom", () => {
    const few = arimaCandidates([10, 14, 9, 12, 11]);
    for (const f of few) {
      expect(f.p).toBeLessThanOrEqual(1);
      expect(f.q).toBeLessThanOrEqual(1);
    }
    const many = arimaCandidates([12, 30, 7, 18, 25, 9, 40, 13, 22, 31, 8, 19]);
    expect(Math.max(...many.map((f) => f.p))).toBe(2);
    expect(Math.max(...many.map((f) => f.q))).toBe(2);
    // Candidates are admissible: stationary AR, invertible MA (1 − a₁B − a₂B² roots outside |B| = 1).
    const inside = (a: readonly number[]): boolean =>
      a.length === 0 ||
      (a.length === 1 ? Math.abs(a[0]) < 1 : a[0] + a[1] < 1 && a[1] - a[0] < 1 && Math.abs(a[1]) < 1);
    for (const f of many) {
      const off = f.intercept ? 1 : 0;
      expect(inside(f.params.slice(off, off + f.p))).toBe(true);
      expect(inside(f.params.slice(off + f.p).map((t) => -t))).toBe(true);
    }
  });

  it("picks the lowest AIC among the candidates", () => {
    const y = [12, 30, 7, 18, 25, 9, 40, 13, 22, 31, 8, 19];
    const best = autoArima(y);
    expect(Math.min(...arimaCandidates(y).map((f) => f.aic))).toBe(best.aic);
  });
});
