import { describe, expect, it } from "vitest";
import {
  ConstantPredictor,
  createPredictor,
  KalmanPredictor,
  type PredictorOptions,
  SeriesPredictors,
} from "../../src/planner/predictors/index.js";

const opts: PredictorOptions = {
  log1p: false,
  prophetWindowSize: 20,
  intervalS: 180,
  kalmanQLevel: 1,
  kalmanQTrend: 0.1,
  kalmanR: 10,
  kalmanMinPoints: 5,
};
const kinds = ["constant", "arima", "prophet", "kalman"] as const;

describe("common input rules (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py` BasePredictor)", () => {
  it.each(kinds)(
    "%s: leading zeros are skipped, later zeros kept, resetIdleSkip re-arms skipping",
    (kind) => {
      const p = createPredictor(kind, opts);
      expect(p.getLastValue()).toBe(0);
      expect(p.predictNext()).toBe(0);
      p.addDataPoint(0);
      p.addDataPoint(0);
      expect(p.getLastValue()).toBe(0);
      p.addDataPoint(7);
      expect(p.getLastValue()).toBe(7);
      p.addDataPoint(0);
      expect(p.getLastValue()).toBe(0);
      p.addDataPoint(9);
      p.resetIdleSkip();
      p.addDataPoint(0);
      expect(p.getLastValue()).toBe(9);
      p.addDataPoint(3);
      p.addDataPoint(0);
      expect(p.getLastValue()).toBe(0);
    },
  );

  it.each(kinds)("%s: non-finite readings count as zero load", (kind) => {
    const p = createPredictor(kind, opts);
    p.addDataPoint(Number.NaN); // a leading "zero": skipped
    expect(p.getLastValue()).toBe(0);
    p.addDataPoint(10);
    p.addDataPoint(Number.POSITIVE_INFINITY);
    expect(p.getLastValue()).toBe(0);
    p.addDataPoint(4);
    p.addDataPoint(Number.NEGATIVE_INFINITY);
    expect(p.getLastValue()).toBe(0);
    expect(Number.isFinite(p.predictNext())).toBe(true);
  });

  it("minimum data points per kind (pre-sweep warm-up)", () => {
    expect(createPredictor("constant", opts).minimumDataPoints).toBe(1);
    expect(createPredictor("arima", opts).minimumDataPoints).toBe(5);
    expect(createPredictor("prophet", opts).minimumDataPoints).toBe(5);
    expect(createPredictor("kalman", { ...opts, kalmanMinPoints: 3 }).minimumDataPoints).toBe(3);
  });
});

describe("constant predictor", () => {
  it("returns the last value, 0 with no data", () => {
    const p = new ConstantPredictor();
    expect(p.predictNext()).toBe(0);
    for (const v of [10, 20, 30]) p.addDataPoint(v);
    expect(p.predictNext()).toBe(30);
    p.addDataPoint(Number.NaN);
    expect(p.predictNext()).toBe(0);
  });
});

/** An independent filterpy-style filter with general 2×2 matrix algebra (no shortcuts). */
class ReferenceKalman {
  x = [0, 0];
  P = [
    [1000, 0],
    [0, 1000],
  ];
  readonly F = [
    [1, 1],
    [0, 1],
  ];
  constructor(
    readonly Q: number[][],
    readonly R: number,
  ) {}
  static mul(a: number[][], b: number[][]): number[][] {
    return a.map((row) => b[0].map((_, j) => row.reduce((s, v, k) => s + v * b[k][j], 0)));
  }
  static t(a: number[][]): number[][] {
    return a[0].map((_, j) => a.map((row) => row[j]));
  }
  static add(a: number[][], b: number[][]): number[][] {
    return a.map((row, i) => row.map((v, j) => v + b[i][j]));
  }
  predict(): void {
    const M = ReferenceKalman;
    this.x = [this.x[0] + this.x[1], this.x[1]];
    this.P = M.add(M.mul(M.mul(this.F, this.P), M.t(this.F)), this.Q);
  }
  update(z: number): void {
    const M = ReferenceKalman;
    const S = this.P[0][0] + this.R;
    const K = [[this.P[0][0] / S], [this.P[1][0] / S]];
    const y = z - this.x[0];
    this.x = [this.x[0] + K[0][0] * y, this.x[1] + K[1][0] * y];
    const IKH = [
      [1 - K[0][0], 0],
      [-K[1][0], 1],
    ];
    const KRKt = M.mul(K, M.t(K)).map((row) => row.map((v) => v * this.R));
    this.P = M.add(M.mul(M.mul(IKH, this.P), M.t(IKH)), KRKt);
  }
}

describe("Kalman local-linear-trend predictor", () => {
  const kOpts = { log1p: false, kalmanQLevel: 1, kalmanQTrend: 0.1, kalmanR: 10, kalmanMinPoints: 5 };

  it("matches a hand-computed two-step recursion", () => {
    const p = new KalmanPredictor(kOpts);
    expect(p.predictNext()).toBe(0); // uninitialised: last value (none)
    p.addDataPoint(10);
    // Initialised at [10, 0] without an update; the forecast is level + trend = 10.
    expect(p.predictNext()).toBe(10);
    const q = new KalmanPredictor(kOpts);
    q.addDataPoint(10);
    q.addDataPoint(12);
    // predict: P = [[2001, 1000], [1000, 1000.1]]; update z = 12: S = 2011, K = [2001, 1000]/2011,
    // x = [10 + 2·2001/2011, 2·1000/2011]; next level = x0 + x1 = 10 + 6002/2011.
    expect(q.predictNext()).toBeCloseTo(10 + 6002 / 2011, 12);
    // Joseph form: P00 = (1 − k0)²·2001 + k0²·10 = 10·2001/2011 before the forecast's predict step.
    const r = new KalmanPredictor(kOpts);
    r.addDataPoint(10);
    r.addDataPoint(12);
    expect(r.state().p[0]).toBeCloseTo(20010 / 2011, 10);
  });

  it("follows an independent matrix implementation, caching forecasts within an interval", () => {
    const series = [12, 15, 11, 30, 28, 26, 40, 10, 5, 7, 22];
    const p = new KalmanPredictor(kOpts);
    const ref = new ReferenceKalman(
      [
        [1, 0],
        [0, 0.1],
      ],
      10,
    );
    let initialised = false;
    let cached = false;
    series.forEach((z, i) => {
      p.addDataPoint(z);
      if (!initialised) {
        ref.x = [z, 0];
        initialised = true;
      } else {
        if (!cached) ref.predict();
        ref.update(z);
      }
      cached = false;
      // Forecast on every other interval, twice: the second call must not advance the filter again.
      if (i % 2 === 0) {
        ref.predict();
        cached = true;
        const f1 = p.predictNext();
        const f2 = p.predictNext();
        expect(f1).toBeCloseTo(ref.x[0], 9);
        expect(f2).toBe(f1);
      }
      const st = p.state();
      expect(st.level).toBeCloseTo(ref.x[0], 9);
      expect(st.trend).toBeCloseTo(ref.x[1], 9);
      expect(st.p[0]).toBeCloseTo(ref.P[0][0], 6);
      expect(st.p[1]).toBeCloseTo(ref.P[0][1], 6);
      expect(st.p[2]).toBeCloseTo(ref.P[1][1], 6);
    });
  });

  it("log1p mode filters log1p(y) and returns max(0, expm1(level))", () => {
    const series = [100, 120, 90, 150, 160];
    const p = new KalmanPredictor({ ...kOpts, log1p: true });
    const ref = new ReferenceKalman(
      [
        [1, 0],
        [0, 0.1],
      ],
      10,
    );
    series.forEach((v, i) => {
      p.addDataPoint(v);
      const z = Math.log1p(v);
      if (i === 0) ref.x = [z, 0];
      else {
        ref.predict();
        ref.update(z);
      }
    });
    ref.predict();
    expect(p.predictNext()).toBeCloseTo(Math.expm1(ref.x[0]), 8);
    expect(p.getLastValue()).toBe(160); // last value stays in the original scale
  });

  it("raw mode is not clamped at zero; log1p mode is", () => {
    const declining = [100, 60, 20];
    const raw = new KalmanPredictor({ ...kOpts, kalmanR: 1e-6 });
    const log = new KalmanPredictor({ ...kOpts, kalmanR: 1e-6, log1p: true });
    for (const v of declining) {
      raw.addDataPoint(v);
      log.addDataPoint(v);
    }
    expect(raw.predictNext()).toBeLessThan(-10);
    expect(log.predictNext()).toBeGreaterThanOrEqual(0);
  });

  it("kalmanMinPoints does not delay forecasts; floors apply to q and r", () => {
    const p = new KalmanPredictor({
      ...kOpts,
      kalmanMinPoints: 10,
      kalmanR: 0,
      kalmanQLevel: -1,
      kalmanQTrend: 0,
    });
    p.addDataPoint(10);
    p.addDataPoint(20);
    // r → 1e-9 pins the level to 20; the trend gain is P01/P00 = 1000/(2000 + q) = 0.5 with q → 1e-12
    // (an unfloored q_level of −1 would give 1000/1999).
    expect(p.predictNext()).toBeCloseTo(25, 8);
  });
});

describe("SeriesPredictors (BuiltinLoadPredict)", () => {
  it("carries the last request shape across idle windows after live traffic", () => {
    const s = new SeriesPredictors("constant", opts);
    s.observe({ numReq: 10, isl: 512, osl: 128 });
    s.observe({ numReq: 0, isl: 0, osl: 0 });
    s.observe({ numReq: 0, isl: 0, osl: 0 });
    expect(s.numReq.getLastValue()).toBe(0);
    expect(s.isl.getLastValue()).toBe(512);
    expect(s.osl.getLastValue()).toBe(128);
    expect(s.predict()).toEqual({ numReq: 0, isl: 512, osl: 128 });
  });

  it("leading idle windows do not seed the request shape; non-finite lengths are not fed", () => {
    const s = new SeriesPredictors("kalman", opts);
    s.observe({ numReq: 0, isl: 0, osl: 0 });
    expect(s.predict()).toEqual({ numReq: 0, isl: 0, osl: 0 });
    s.observe({ numReq: 3, isl: Number.NaN, osl: 50 });
    expect(s.isl.getLastValue()).toBe(0);
    expect(s.osl.getLastValue()).toBe(50);
    // The idle replacement only uses finite shapes seen with live traffic (none for ISL yet ⇒ 0).
    s.observe({ numReq: 0, isl: Number.NaN, osl: Number.NaN });
    expect(s.isl.getLastValue()).toBe(0);
    expect(s.osl.getLastValue()).toBe(50);
  });

  it("coalesces identical idle windows once a constant forecast reaches zero", () => {
    const s = new SeriesPredictors("constant", opts);
    expect(s.observeAndPredict({ numReq: 10, isl: 100, osl: 10 })).toEqual({ numReq: 10, isl: 100, osl: 10 });
    const first = s.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    expect(first).toEqual({ numReq: 0, isl: 100, osl: 10 });
    const second = s.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    expect(second).toBe(first); // reused, not recomputed
    const live = s.observeAndPredict({ numReq: 4, isl: 200, osl: 20 });
    expect(live).toEqual({ numReq: 4, isl: 200, osl: 20 });
    expect(s.observeAndPredict({ numReq: 0, isl: 0, osl: 0 })).not.toBe(first);
  });

  it("keeps observing idle windows for Kalman (incremental state) and for Prophet while coalesced", () => {
    const k = new SeriesPredictors("kalman", opts);
    k.observeAndPredict({ numReq: 10, isl: 100, osl: 10 });
    const a = k.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    const b = k.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    expect(b).not.toBe(a);

    const p = new SeriesPredictors("prophet", opts);
    p.observeAndPredict({ numReq: 10, isl: 100, osl: 10 });
    const idle = p.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    expect(idle?.numReq).toBe(0); // fewer than 5 points: last value
    expect(p.observeAndPredict({ numReq: 0, isl: 0, osl: 0 })).toBe(idle);
    for (let i = 0; i < 5; i++) p.observeAndPredict({ numReq: 0, isl: 0, osl: 0 });
    // Prophet still recorded every coalesced window: its window now holds 8 points.
    expect(p.numReq.getLastValue()).toBe(0);
    expect(p.isl.getLastValue()).toBe(100);
  });

  it("reports a failed forecast as null and drops the coalesced forecast", () => {
    const s = new SeriesPredictors("constant", opts);
    s.observeAndPredict({ numReq: 1, isl: 1, osl: 1 });
    s.osl.predictNext = () => {
      throw new Error("boom");
    };
    expect(s.observeAndPredict({ numReq: 2, isl: 2, osl: 2 })).toBeNull();
  });

  it("warm-up feeds the windows, then skips leading idle windows again", () => {
    const s = new SeriesPredictors("constant", opts);
    s.warm([
      { numReq: 5, avgIsl: 100, avgOsl: 10 },
      { numReq: 0, avgIsl: 0, avgOsl: 0 },
      { numReq: 7, avgIsl: 300, avgOsl: 30 },
    ]);
    expect(s.predict()).toEqual({ numReq: 7, isl: 300, osl: 30 });
    s.observe({ numReq: 0, isl: 0, osl: 0 });
    expect(s.predict()).toEqual({ numReq: 7, isl: 300, osl: 30 });
    s.observe({ numReq: 2, isl: 50, osl: 5 });
    s.observe({ numReq: 0, isl: 0, osl: 0 });
    expect(s.predict()).toEqual({ numReq: 0, isl: 50, osl: 5 });
  });
});
