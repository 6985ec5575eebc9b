/**
 * The load-predictor pre-sweep (docs/retune.md §6, `ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`) with the real predictors:
 * presets, bucketing, the weighted log-space loss, the warm-up, argmin with ties to the first, and
 * no winner when nothing is scored.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SeriesPredictors } from "../../../src/planner/predictors/series.js";
import {
  bucketsEndingAt,
  leadingEmptyBuckets,
  observationCount,
} from "../../../src/planner/retune/buckets.js";
import {
  bucketLoss,
  LOAD_PREDICTOR_CANDIDATES,
  logError,
  minimumObservations,
  presweepRecord,
  runPresweep,
} from "../../../src/planner/retune/predictorPresweep.js";
import { LOAD_PREDICTOR_PRESETS, plannerSettings } from "../../helpers/planner.js";

const BASE = plannerSettings();
const lp = Math.log1p;

function series(n: number, f: (i: number) => { numReq: number; avgIsl: number; avgOsl: number }) {
  return Array.from({ length: n }, (_, i) => f(i));
}

describe("presets", () => {
  it("are the 11 presets of `ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py` in canonical order", () => {
    expect(LOAD_PREDICTOR_CANDIDATES.map((c) => c.name)).toEqual(LOAD_PREDICTOR_PRESETS);
  });

  it("need constant 1, ARIMA 5, Prophet 5, Kalman min_points observations", () => {
    expect(LOAD_PREDICTOR_CANDIDATES.map((c) => minimumObservations(c.fields, BASE))).toEqual([
      1, 5, 5, 5, 5, 5, 5, 5, 5, 3, 3,
    ]);
  });
});

describe("buckets", () => {
  it("end exactly at the end time and keep empty buckets", () => {
    // [0, 1000) at 300 ms: m = 4 buckets starting at −200, 100, 400, 700.
    const rows = {
      timestampMs: [-250, -200, 99, 100, 650, 399],
      inputLength: [1, 10, 20, 30, 40, 50],
      outputLength: [2, 4, 6, 8, 10, 12],
    };
    const b = bucketsEndingAt(rows, { startMs: 0, endMs: 1000 }, 300);
    expect(b.map((w) => w.intervalStartS * 1000)).toEqual([-200, 100, 400, 700]);
    expect(b.map((w) => [w.numReq, w.avgIsl, w.avgOsl])).toEqual([
      [2, 15, 5],
      [2, 40, 10],
      [1, 40, 10],
      [0, 0, 0],
    ]);
    // Only the listed rows.
    expect(bucketsEndingAt(rows, { startMs: 0, endMs: 1000 }, 300, [4]).map((w) => w.numReq)).toEqual([
      0, 0, 1, 0,
    ]);
    // A whole number of buckets.
    expect(bucketsEndingAt(rows, { startMs: 100, endMs: 1000 }, 300)).toHaveLength(3);
  });

  it("count observations from the first bucket with traffic", () => {
    const b = [0, 0, 3, 0, 2].map((numReq) => ({ numReq }));
    expect(leadingEmptyBuckets(b)).toBe(2);
    expect(observationCount(b)).toBe(3);
  });
});

describe("loss", () => {
  it("weighs token totals 40 % each and mean lengths 10 % each, in log space", () => {
    expect(logError(-5, 0)).toBe(0);
    expect(logError(3, 7)).toBeCloseTo(lp(7) - lp(3), 15);
    const f = { numReq: 10, isl: 100, osl: 20 };
    const w = { numReq: 20, avgIsl: 120, avgOsl: 20 };
    const expected =
      0.4 * (lp(2400) - lp(1000)) + 0.4 * (lp(400) - lp(200)) + 0.1 * (lp(120) - lp(100)) + 0.1 * 0;
    expect(bucketLoss(f, w)).toBeCloseTo(expected, 12);
  });
});

describe("runPresweep", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("on a constant series: constant_last scores 0 and wins the ties as the first candidate", () => {
    const flat = series(14, () => ({ numReq: 10, avgIsl: 100, avgOsl: 20 }));
    const r = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, flat, 4);
    expect(r.winner?.name).toBe("constant_last");
    expect(r.losses[0]).toEqual({ name: "constant_last", loss: 0, error: null });
    // ARIMA short-circuits constant data: an exact tie that the earlier candidate keeps.
    expect(r.losses[1].loss).toBe(0);
    for (const l of r.losses) expect(l.loss).toBeLessThan(1e-12);
    expect([r.evalSteps, r.warmupSteps, r.scoredSteps]).toEqual([4, 10, 4]);
  });

  it("on a trend: a trend-following preset beats constant_last", () => {
    // n = 10, 20, …, 80 (ISL 100, OSL 10); the last 2 buckets are the window, both past the warm-up 5.
    const trend = series(8, (i) => ({ numReq: 10 * (i + 1), avgIsl: 100, avgOsl: 10 }));
    const r = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, trend, 2);
    // constant_last forecasts the previous bucket: 60 for 70, 70 for 80.
    const constantLoss =
      (0.4 * (lp(7000) - lp(6000)) +
        0.4 * (lp(700) - lp(600)) +
        0.4 * (lp(8000) - lp(7000)) +
        0.4 * (lp(800) - lp(700))) /
      2;
    expect(r.losses[0].loss).toBeCloseTo(constantLoss, 12);
    const byName = Object.fromEntries(r.losses.map((l) => [l.name, l.loss ?? Number.NaN]));
    expect(byName["kalman_default_raw"]).toBeLessThan(constantLoss / 10);
    expect(byName["kalman_reactive_raw"]).toBeLessThan(constantLoss / 10);
    expect(r.winner).not.toBeNull();
    expect(r.winner?.name).not.toBe("constant_last");
    const winnerLoss = byName[r.winner?.name ?? ""];
    expect(Math.min(...Object.values(byName))).toBe(winnerLoss);
  });

  it("scores only window buckets past the warm-up, counted from the first bucket with traffic", () => {
    // Two leading empty buckets, then 7 with traffic, all of them window buckets: positions 0–6, the
    // warm-up (5) leaves positions 5 and 6.
    const buckets = [
      { numReq: 0, avgIsl: 0, avgOsl: 0 },
      { numReq: 0, avgIsl: 0, avgOsl: 0 },
      ...series(7, () => ({ numReq: 4, avgIsl: 50, avgOsl: 5 })),
    ];
    const r = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, buckets, 9);
    expect([r.evalSteps, r.warmupSteps, r.scoredSteps]).toEqual([9, 0, 2]);
    // The last 4 as the window: 3 history buckets after the leading empties, and of the window's
    // positions 3–6 only 5 and 6 pass the warm-up.
    const h = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, buckets, 4);
    expect([h.evalSteps, h.warmupSteps, h.scoredSteps]).toEqual([4, 3, 2]);
  });

  it("has no winner when nothing is scored (a first window without history)", () => {
    const short = series(4, () => ({ numReq: 4, avgIsl: 50, avgOsl: 5 }));
    const r = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, short, 4);
    expect(r.winner).toBeNull();
    expect(r.losses.every((l) => l.loss === null && l.error === "no scored bucket")).toBe(true);
    expect(presweepRecord(r, 0.5)).toEqual({
      winner: null,
      fields: null,
      losses: Object.fromEntries(LOAD_PREDICTOR_CANDIDATES.map((c) => [c.name, null])),
      eval_steps: 4,
      warmup_steps: 0,
      wall_s: 0.5,
    });
  });

  it("lets no candidate whose forecast fails win", () => {
    const original = SeriesPredictors.prototype.predict;
    vi.spyOn(SeriesPredictors.prototype, "predict").mockImplementation(function (this: SeriesPredictors) {
      if (this.kind === "constant") throw new Error("boom");
      return original.call(this);
    });
    const flat = series(14, () => ({ numReq: 10, avgIsl: 100, avgOsl: 20 }));
    const r = runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, flat, 4);
    expect(r.losses[0]).toEqual({ name: "constant_last", loss: null, error: "boom" });
    // The next exact zero: arima_raw.
    expect(r.winner?.name).toBe("arima_raw");
  });

  it("records the winner's live fields and every loss", () => {
    const flat = series(8, () => ({ numReq: 10, avgIsl: 100, avgOsl: 20 }));
    const candidates = [LOAD_PREDICTOR_CANDIDATES[9], LOAD_PREDICTOR_CANDIDATES[0]];
    const rec = presweepRecord(runPresweep(candidates, BASE, flat, 2), 1.25);
    expect(rec.winner).toBe("kalman_reactive_raw");
    expect(rec.fields).toEqual({
      load_predictor: "kalman",
      load_predictor_log1p: false,
      kalman_q_level: 10,
      kalman_q_trend: 1,
      kalman_r: 5,
      kalman_min_points: 3,
    });
    expect(rec.losses).toEqual({ kalman_reactive_raw: 0, constant_last: 0 });
    expect([rec.eval_steps, rec.warmup_steps, rec.wall_s]).toEqual([2, 6, 1.25]);
  });

  it("rejects an evalSteps that is not a bucket count", () => {
    expect(() => runPresweep(LOAD_PREDICTOR_CANDIDATES, BASE, [], 1)).toThrow(RangeError);
  });
});
