import { describe, expect, it } from "vitest";
import {
  AggRegressionModel,
  DecodeRegressionModel,
  MIN_PREDICTION_S,
  PrefillRegressionModel,
  type RegressionOptions,
} from "../../src/planner/perfModel/index.js";
import { clampKvHitRate, estimateQueuedPrefillTimeS } from "../../src/planner/perfModel/query.js";
import { MovingAverage } from "../../src/planner/perfModel/samples.js";
import type { ForwardPassMetrics } from "../../src/planner/types.js";
import { fittedAggModel, forwardPass } from "../helpers/planner.js";

function fpm(f: Partial<ForwardPassMetrics>): ForwardPassMetrics {
  return forwardPass(1, { wallTimeS: 0.01, ...f });
}

function opts(maxNumFpmSamples: number, minObservations: number, bucketCount: number): RegressionOptions {
  return { maxNumFpmSamples, minObservations, bucketCount };
}

function prefillSample(tokens: number, wallTimeS: number): ForwardPassMetrics {
  return fpm({ sumPrefillTokens: tokens, numPrefillRequests: 1, wallTimeS });
}

function trainedPrefill(
  tokens: readonly number[],
  wall: (t: number) => number,
  min = 3,
): PrefillRegressionModel {
  const m = new PrefillRegressionModel(opts(50, min, 16));
  for (const t of tokens) m.addObservation(prefillSample(t, wall(t)));
  return m;
}

/** The queued-prefill estimate of one engine with `queued` prompt tokens waiting. */
function ttft(m: PrefillRegressionModel, queued: number, mbt: number, h?: number | null): number | null {
  return estimateQueuedPrefillTimeS(m, [fpm({ sumQueuedPrefillTokens: queued })], {
    maxNumBatchedTokens: mbt,
    kvHitRate: h,
  });
}

describe("moving average", () => {
  it("skips leading zeros, then keeps a fixed window including later zeros", () => {
    const avg = new MovingAverage(3);
    avg.add(0);
    avg.add(0);
    expect(avg.length).toBe(0);
    expect(avg.value).toBe(0);
    for (const v of [5, 0, 10, 20]) avg.add(v);
    expect(avg.length).toBe(3);
    expect(avg.value).toBe(10);
  });
});

describe("PrefillRegressionModel (test_load_based_scaling.py)", () => {
  it("is not ready below min_observations", () => {
    const m = new PrefillRegressionModel(opts(50, 5, 16));
    expect(m.hasSufficientData()).toBe(false);
    expect(m.forwardPassS(1000)).toBeNull();
    for (const t of [500, 1000, 1500, 2000]) m.addObservation(prefillSample(t, 0.001 * t));
    expect(m.hasSufficientData()).toBe(false);
    expect(ttft(m, 0, 2048)).toBeNull();
    m.addObservation(prefillSample(2500, 2.5));
    expect(m.hasSufficientData()).toBe(true);
    expect(m.forwardPassS(1000)).toBeCloseTo(1, 12);
  });

  it("ignores wall_time 0 heartbeats as samples but still feeds the moving averages", () => {
    const m = new PrefillRegressionModel(opts(50, 3, 16));
    m.addObservation(fpm({ wallTimeS: 0, sumPrefillTokens: 100, numPrefillRequests: 1 }));
    expect(m.numObservations).toBe(0);
    expect(m.avgIsl).toBe(100);
  });

  it("fits wt = 0.001·t + 0.002 and prices a pass", () => {
    const m = trainedPrefill([500, 1000, 1500, 2000, 2500], (t) => 0.001 * t + 0.002);
    expect(m.hasSufficientData()).toBe(true);
    expect(m.coefficients()?.coef[0]).toBeCloseTo(0.001, 14);
    expect(m.forwardPassS(1000)).toBeCloseTo(1.002, 12);
    // queue 0: only the next request (avg_isl 1500) → one pass of 1500 tokens.
    expect(ttft(m, 0, 2048)).toBeCloseTo(1.502, 12);
  });

  it("chunks queued 5000 + avg_isl 300 at MBT 2048 into 2048, 2048, 1204", () => {
    const m = trainedPrefill([100, 200, 300, 400, 500], (t) => 0.001 * t);
    const est = ttft(m, 5000, 2048);
    expect(est).toBeGreaterThan(0.003);
    expect(est).toBeCloseTo(2 * 2.048 + 1.204, 12);
  });

  it("tracks avg_isl of 1000/2000/3000 = 2000", () => {
    const m = trainedPrefill([1000, 2000, 3000], () => 0.01);
    expect(m.avgIsl).toBeCloseTo(2000, 12);
  });

  it("applies the KV-hit discount with the [0, 0.95] clamp", () => {
    const m = trainedPrefill([500, 1000, 1500, 2000, 2500], (t) => 0.001 * t + 0.002);
    expect(ttft(m, 3000, 2048, null)).toBe(ttft(m, 3000, 2048, 0));
    const lin = trainedPrefill([500, 1000, 1500, 2000, 2500, 3000, 3500, 4000], (t) => 0.001 * t);
    // avg_isl 2250: full = 6250 tokens → 6.25 s; h 0.5 → 3125 tokens → 3.125 s.
    const full = ttft(lin, 4000, 100_000, 0)!;
    const half = ttft(lin, 4000, 100_000, 0.5)!;
    expect(full).toBeCloseTo(6.25, 12);
    expect(half).toBeCloseTo(3.125, 12);
    expect(half / full).toBeLessThan(0.75);
    const base = trainedPrefill([500, 1000, 1500, 2000, 2500], (t) => 0.001 * t);
    expect(ttft(base, 2000, 100_000, 1.5)).toBe(ttft(base, 2000, 100_000, 0.95));
    expect(ttft(base, 2000, 100_000, -0.3)).toBe(ttft(base, 2000, 100_000, 0));
    expect(ttft(base, 2000, 100_000, Number.NaN)).toBe(ttft(base, 2000, 100_000, 0));
    expect([null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1, 0.3, 2].map(clampKvHitRate)).toEqual([
      0, 0, 0, 0, 0, 0.3, 0.95,
    ]);
  });

  it("is not ready when time falls with load, holds a negative intercept at 0 and floors predictions at 1e-6 s", () => {
    const inverted = trainedPrefill([500, 1000, 1500], (t) => 3 - 0.001 * t);
    expect(inverted.hasSufficientData()).toBe(true);
    expect(inverted.forwardPassS(1000)).toBeNull();
    expect(ttft(inverted, 1000, 2048)).toBeNull();
    const offset = trainedPrefill([1000, 2000, 3000], (t) => 0.001 * t - 0.5);
    // OLS would say −0.5 s + 1 ms per token; the fit holds the intercept at 0 and refits the slope
    // through the origin: Σty / Σt² = 11,000 / 14e6 s per token.
    expect(offset.coefficients()?.intercept).toBe(0);
    expect(offset.forwardPassS(0)).toBe(MIN_PREDICTION_S);
    expect(offset.forwardPassS(1000)).toBeCloseTo((1000 * 11_000) / 14e6, 12);
  });

  it("refits lazily after new samples", () => {
    const m = trainedPrefill([100, 200, 300], (t) => 0.001 * t);
    expect(m.forwardPassS(1000)).toBeCloseTo(1, 12);
    for (const t of [400, 500, 600]) m.addObservation(prefillSample(t, 0.002 * t));
    expect(m.forwardPassS(1000)).not.toBeCloseTo(1, 3);
  });
});

describe("bucketed retirement", () => {
  const prefillXs = (m: PrefillRegressionModel) => m.retainedSamples().map((s) => s.x[0]);

  it("caps the total at max_num_fpm_samples (10 of 20)", () => {
    const m = new PrefillRegressionModel(opts(10, 3, 4));
    for (let i = 0; i < 20; i++) m.addObservation(prefillSample(100 * (i + 1), 0.01 * (i + 1)));
    expect(m.numObservations).toBe(10);
  });

  it("retires the oldest sample of the most populated bucket", () => {
    const m = new PrefillRegressionModel(opts(6, 1, 4));
    for (const t of [10, 11, 12, 1000, 1100, 1200]) m.addObservation(prefillSample(t, 0.001 * t));
    expect(m.numObservations).toBe(6);
    // Range [10, 1200] in 4 buckets: {10, 11, 12} in bucket 0, {1000, 1100, 1200} in bucket 3.
    m.addObservation(prefillSample(15, 0.015));
    expect(m.numObservations).toBe(6);
    expect(prefillXs(m)).toEqual([11, 12, 15, 1000, 1100, 1200]);
  });

  it("breaks ties on the first bucket in insertion order", () => {
    const m = new PrefillRegressionModel(opts(3, 1, 2));
    for (const t of [0, 100, 1, 99]) m.addObservation(prefillSample(t, 0.001 * (t + 1)));
    // Buckets {0: [0, 1], 1: [100, 99]} tie at 2: bucket 0 (created first) loses 0.
    expect(prefillXs(m)).toEqual([1, 100, 99]);
  });

  it("keeps a rare operating point when one point dominates (2-D decode)", () => {
    const m = new DecodeRegressionModel(opts(10, 3, 16));
    for (let i = 0; i < 15; i++) m.addObservation(fpm({ numDecodeRequests: 32, sumDecodeKvTokens: 32000 }));
    expect(m.numObservations).toBe(10);
    m.addObservation(fpm({ numDecodeRequests: 4, sumDecodeKvTokens: 4000, wallTimeS: 0.005 }));
    expect(m.numObservations).toBe(10);
    expect(m.retainedSamples().filter((s) => s.x[0] === 4)).toHaveLength(1);
  });

  it("caps the 2-D agg model at 8 and retires from the crowded (100, 500) cell", () => {
    const m = new AggRegressionModel(opts(8, 1, 16));
    const add = (p: number, d: number, wallTimeS: number) =>
      m.addObservation(
        fpm({
          sumPrefillTokens: p,
          numPrefillRequests: 1,
          sumDecodeKvTokens: d,
          numDecodeRequests: 5,
          wallTimeS,
        }),
      );
    for (const [p, d] of [
      [100, 500],
      [200, 1000],
      [300, 1500],
      [400, 2000],
    ]) {
      add(p, d, 0.001 * p + 0.0001 * d);
    }
    for (let i = 0; i < 4; i++) add(100, 500, 0.15);
    expect(m.numObservations).toBe(8);
    add(350, 1800, 0.5);
    expect(m.numObservations).toBe(8);
    const xs = m
      .stores()
      .mixed.retainedSamples()
      .map((s) => s.x.join(","));
    expect(xs.filter((x) => x === "100,500")).toHaveLength(4);
    expect(xs).toContain("350,1800");
  });
});

describe("DecodeRegressionModel", () => {
  it("fits the collinear 2-D training set and stays usable", () => {
    const m = new DecodeRegressionModel(opts(50, 3, 16));
    for (const [n, kv] of [
      [5, 1000],
      [10, 2000],
      [15, 3000],
      [20, 4000],
      [25, 5000],
    ]) {
      m.addObservation(
        fpm({ numDecodeRequests: n, sumDecodeKvTokens: kv, wallTimeS: 0.0001 * kv + 0.0005 * n + 0.001 }),
      );
    }
    expect(m.hasSufficientData()).toBe(true);
    // On the data's own line the fit is exact: n = 15, kv = 3000 → 0.0001·3000 + 0.0005·15 + 0.001.
    expect(m.forwardPassS(0, 0, 15, 3000)).toBeCloseTo(0.3085, 12);
    expect(m.forwardPassS(0, 0, 16, 3200)).toBeGreaterThan(0);
  });

  it("tracks avg_decode_length = 200 and avg_num_decode", () => {
    const m = new DecodeRegressionModel(opts(50, 3, 16));
    for (const kv of [1000, 2000, 3000])
      m.addObservation(fpm({ sumDecodeKvTokens: kv, numDecodeRequests: 10 }));
    expect(m.avgDecodeLength).toBeCloseTo(200, 12);
    expect(m.avgNumDecode).toBe(10);
    expect(m.maxObservedKv).toBe(3000);
  });

  it("holds a negative slope at 0 and refits the rest (decode and agg mixed alike)", () => {
    const pts = [
      [10, 1000],
      [20, 1000],
      [10, 3000],
      [30, 5000],
      [40, 2000],
      [25, 4000],
    ];
    const wall = (n: number, kv: number) => 0.01 + 1e-5 * kv - 1e-4 * n;
    const dec = new DecodeRegressionModel(opts(50, 3, 16));
    const agg = new AggRegressionModel(opts(50, 3, 16));
    for (const [n, kv] of pts) {
      dec.addObservation(fpm({ numDecodeRequests: n, sumDecodeKvTokens: kv, wallTimeS: wall(n, kv) }));
      agg.addObservation(
        fpm({ sumPrefillTokens: n, numDecodeRequests: 1, sumDecodeKvTokens: kv, wallTimeS: wall(n, kv) }),
      );
    }
    // The best fit with the request (prefill) slope at 0: y = a + b·kv by least squares over the points.
    const kvs = pts.map(([, kv]) => kv);
    const ys = pts.map(([n, kv]) => wall(n, kv));
    const mk = kvs.reduce((s, k) => s + k, 0) / kvs.length;
    const my = ys.reduce((s, y) => s + y, 0) / ys.length;
    const b =
      kvs.reduce((s, k, i) => s + (k - mk) * (ys[i] - my), 0) / kvs.reduce((s, k) => s + (k - mk) ** 2, 0);
    const a = my - b * mk;
    for (const m of [dec, agg.stores().mixed]) {
      const fit = m.coefficients()!;
      expect(fit.coef[0]).toBe(0);
      expect(fit.coef[1]).toBeCloseTo(b, 15);
      expect(fit.intercept).toBeCloseTo(a, 12);
    }
    // The estimate no longer depends on the request count.
    expect(dec.forwardPassS(0, 0, 40, 2000)).toBeCloseTo(a + 2000 * b, 12);
    expect(dec.forwardPassS(0, 0, 1, 2000)).toBeCloseTo(a + 2000 * b, 12);
    expect(agg.forwardPassS(10, 0, 1, 2000)).toBeCloseTo(agg.forwardPassS(40, 0, 1, 2000)!, 12);
  });
});

describe("AggRegressionModel", () => {
  it("fits both axes and tracks the averages used by the estimates", () => {
    const m = fittedAggModel(1, opts(50, 3, 16));
    expect(m.forwardPassS(1500, 2, 61, 12200)).toBeCloseTo(0.001 + 0.015 + 0.0122, 12);
    expect(m.avgIsl).toBe(1000);
    expect(m.avgDecodeLength).toBe(200);
    expect(m.avgPrefillTokens).toBe(1500);
    expect(m.avgNumPrefill).toBe(1.5);
    expect(m.avgNumDecode).toBe(25);
  });
});

describe("AggRegressionModel's workload kinds", () => {
  const decodeOnly = (n: number, kv: number) =>
    fpm({ numDecodeRequests: n, sumDecodeKvTokens: kv, wallTimeS: 0.003 + 1e-4 * n + 2e-5 * kv });
  const prefillOnly = (t: number) => prefillSample(t, 0.004 + 3e-5 * t);
  const mixed = (t: number, kv: number) =>
    fpm({
      sumPrefillTokens: t,
      numPrefillRequests: 1,
      numDecodeRequests: 4,
      sumDecodeKvTokens: kv,
      wallTimeS: 0.005 + 4e-5 * t + 1e-5 * kv,
    });

  it("prices each pass with the store of its kind, ready on its own (as the reference's AIS regression)", () => {
    const m = new AggRegressionModel(opts(50, 3, 16));
    // The bootstrap's benchmark passes are prefill-only and decode-only.
    m.loadBenchmarkFpms([prefillOnly(1000), prefillOnly(2000), prefillOnly(4000)]);
    m.loadBenchmarkFpms([decodeOnly(8, 8000), decodeOnly(16, 40000), decodeOnly(32, 20000)]);
    expect(m.hasSufficientData()).toBe(true);
    expect(m.forwardPassS(3000, 1, 0, 0)).toBeCloseTo(0.004 + 0.09, 12);
    expect(m.forwardPassS(0, 0, 10, 10000)).toBeCloseTo(0.003 + 0.001 + 0.2, 12);
    // A mixed pass waits for mixed passes observed live.
    expect(m.forwardPassS(3000, 1, 10, 10000)).toBeNull();
    m.addObservation(mixed(1000, 5000));
    m.addObservation(mixed(2000, 20000));
    expect(m.forwardPassS(3000, 1, 10, 10000)).toBeNull();
    m.addObservation(mixed(4000, 10000));
    expect(m.stores().mixed.numObservations).toBe(3);
    expect(m.forwardPassS(3000, 1, 10, 10000)).toBeCloseTo(0.005 + 0.12 + 0.1, 12);
    expect(m.stores().prefill.numObservations).toBe(3);
    expect(m.stores().decode.numObservations).toBe(3);
    // An empty pass costs nothing; idle heartbeats (wall 0) feed the averages only.
    expect(m.forwardPassS(0, 0, 0, 0)).toBe(0);
    m.addObservation(fpm({ numDecodeRequests: 2, sumDecodeKvTokens: 100, wallTimeS: 0 }));
    expect(m.numObservations).toBe(9);
  });

  it("is not ready before any store holds load_min_observations passes", () => {
    const m = new AggRegressionModel(opts(50, 3, 16));
    m.addObservation(mixed(1000, 5000));
    m.addObservation(decodeOnly(8, 8000));
    m.addObservation(prefillOnly(1000));
    m.addObservation(mixed(2000, 6000));
    expect(m.numObservations).toBe(4);
    expect(m.hasSufficientData()).toBe(false);
  });
});
