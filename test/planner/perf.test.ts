import { describe, expect, it } from "vitest";
import {
  type PassWork,
  passFeatures,
  prefillAttentionPairs,
  workloadKind,
} from "../../src/planner/perfModel/features.js";
import { FpmRegressionModel, type RegressionOptions } from "../../src/planner/perfModel/index.js";
import { clampKvHitRate, estimateQueuedPrefillTimeS } from "../../src/planner/perfModel/query.js";
import { MovingAverage } from "../../src/planner/perfModel/samples.js";
import {
  fitStandardizedNnls,
  MIN_PREDICTION_MS,
  predictMs,
} from "../../src/planner/perfModel/standardizedNnls.js";
import type { ForwardPassMetrics } from "../../src/planner/types.js";
import { forwardPass } from "../helpers/planner.js";

/** A pass's work: nothing scheduled unless `over` says so. */
const work = (over: Partial<PassWork> = {}): PassWork => ({
  prefillTokens: 0,
  prefillRequests: 0,
  prefillKvTokens: 0,
  decodeRequests: 0,
  decodeKvTokens: 0,
  ...over,
});

function fpm(f: Partial<ForwardPassMetrics>): ForwardPassMetrics {
  return forwardPass(1, { wallTimeS: 0.01, ...f });
}

function opts(maxNumFpmSamples: number, minObservations: number, bucketCount: number): RegressionOptions {
  return { maxNumFpmSamples, minObservations, bucketCount };
}

function prefillSample(tokens: number, wallTimeS: number): ForwardPassMetrics {
  return fpm({ sumPrefillTokens: tokens, numPrefillRequests: 1, wallTimeS });
}

function trainedPrefill(tokens: readonly number[], wall: (t: number) => number, min = 3): FpmRegressionModel {
  const m = new FpmRegressionModel("prefill", opts(50, min, 16));
  for (const t of tokens) m.addObservation(prefillSample(t, wall(t)));
  return m;
}

/** The queued-prefill estimate of one engine with `queued` prompt tokens waiting. */
function ttft(m: FpmRegressionModel, queued: number, mbt: number, h?: number | null): number | null {
  return estimateQueuedPrefillTimeS(m, [fpm({ sumQueuedPrefillTokens: queued })], {
    maxNumBatchedTokens: mbt,
    kvHitRate: h,
  });
}

describe("moving average (Dynamo 1.6 `_MovingAverage.add_after_first_nonzero`)", () => {
  it("skips values until the first positive one, then keeps a fixed window including later zeros", () => {
    const avg = new MovingAverage(3);
    avg.add(0);
    avg.add(0);
    expect(avg.length).toBe(0);
    expect(avg.value).toBe(0);
    for (const v of [5, 0, 10, 20]) avg.add(v);
    expect(avg.length).toBe(3);
    expect(avg.value).toBe(10);
    avg.add(-30);
    expect(avg.value).toBe(10); // a negative counts as 0: (10 + 20 + 0) / 3
  });
});

describe("the regression's features (`ai-dynamo/aisimulate@070638b:docs/fpm-recursive-regression.md`)", () => {
  it("prices a prefill's attention pairs with each prompt at the average lengths", () => {
    // One prompt of 4 fresh tokens over 2 cached: rows of 3, 4, 5, 6 keys = 18 pairs.
    expect(prefillAttentionPairs(4, 2, 1)).toBe(18);
    // Two prompts of 2 fresh over 1 cached each: 2 × (2 + 3) = 10 pairs.
    expect(prefillAttentionPairs(4, 2, 2)).toBe(10);
    expect(prefillAttentionPairs(0, 500, 1)).toBe(0);
  });

  it("gives each role its attention and token work", () => {
    const w = work({
      prefillTokens: 4,
      prefillRequests: 1,
      prefillKvTokens: 2,
      decodeRequests: 3,
      decodeKvTokens: 100,
    });
    const x = new Float64Array(2);
    passFeatures("prefill", w, x);
    expect([...x]).toEqual([2 + 18, 4]);
    passFeatures("decode", w, x);
    expect([...x]).toEqual([100, 3]);
    passFeatures("aggregated", w, x);
    expect([...x]).toEqual([2 + 100 + 18, 4 + 3]);
    // Cached prefix without fresh tokens computes nothing.
    passFeatures("aggregated", { ...w, prefillTokens: 0 }, x);
    expect([...x]).toEqual([100, 3]);
  });

  it("classifies a pass by what it schedules", () => {
    const w = work();
    expect(workloadKind(w)).toBeNull();
    expect(workloadKind({ ...w, prefillTokens: 10, prefillRequests: 1 })).toBe("pure_prefill");
    expect(workloadKind({ ...w, decodeRequests: 2, decodeKvTokens: 10 })).toBe("pure_decode");
    expect(workloadKind({ ...w, prefillTokens: 10, decodeRequests: 2 })).toBe("contains_locally_mixed");
    expect(workloadKind({ ...w, prefillKvTokens: 500, decodeRequests: 2 })).toBe("pure_decode");
  });
});

describe("the standardized non-negative fit", () => {
  it("replaces a forbidden negative slope by refitting without it (the doc's hand-derived example)", () => {
    const xs: number[][] = [];
    const ys: number[] = [];
    for (const a of [0, 1, 2])
      for (const b of [0, 1, 2]) {
        xs.push([a, b]);
        ys.push(20 - 2 * a + 3 * b);
      }
    const fit = fitStandardizedNnls(xs, ys, 2, 5)!;
    expect(fit.slopes[0]).toBe(0);
    expect(predictMs(fit, [100, 4])).toBeCloseTo(30, 12);
    expect(predictMs(fit, [0, 0])).toBeCloseTo(18, 12);
  });

  it("keeps a negative intercept and floors predictions at 1e-6 ms", () => {
    const xs = [1000, 2000, 3000, 4000, 5000, 6000].map((k) => [k, 1]);
    const ys = xs.map(([k]) => -5 + 0.01 * k);
    const fit = fitStandardizedNnls(xs, ys, 2, 5)!;
    expect(predictMs(fit, [1000, 1])).toBeCloseTo(5, 12);
    expect(predictMs(fit, [100, 1])).toBe(MIN_PREDICTION_MS);
  });

  it("is not ready without a varying feature, or on an intercept-only plane", () => {
    const same = [1, 2, 3, 4, 5].map(() => [10, 2]);
    expect(fitStandardizedNnls(same, [1, 2, 3, 4, 5], 2, 5)).toBeNull();
    const flat = [1, 2, 3, 4, 5].map((k) => [k, 1]);
    expect(fitStandardizedNnls(flat, [7, 7, 7, 7, 7], 2, 5)).toBeNull();
    const falling = [1, 2, 3, 4, 5].map((k) => [k, 1]);
    expect(fitStandardizedNnls(falling, [9, 8, 7, 6, 5], 2, 5)).toBeNull();
    // Below min_observations nothing is fitted; at most as many samples as varying features
    // (underdetermined) the intercept-only plane is kept.
    expect(fitStandardizedNnls(falling.slice(0, 4), [9, 8, 7, 6], 2, 5)).toBeNull();
    expect(fitStandardizedNnls([[1, 1]], [9], 2, 1)).toBeNull();
    const two = fitStandardizedNnls(
      [
        [1, 1],
        [2, 3],
      ],
      [9, 8],
      2,
      1,
    );
    expect(two?.slopes).toEqual([0, 0]);
    expect(predictMs(two!, [5, 1])).toBeCloseTo(8.5, 12);
  });
});

describe("FpmRegressionModel", () => {
  it("is not ready below min_observations", () => {
    const m = new FpmRegressionModel("prefill", opts(50, 5, 16));
    expect(m.hasSufficientData()).toBe(false);
    expect(m.forwardPassS(1000, 1, 0, 0)).toBeNull();
    for (const t of [500, 1000, 1500, 2000]) m.addObservation(prefillSample(t, 0.001 * t));
    expect(m.hasSufficientData()).toBe(false);
    expect(ttft(m, 0, 2048)).toBeNull();
    m.addObservation(prefillSample(2500, 2.5));
    expect(m.hasSufficientData()).toBe(true);
    expect(m.forwardPassS(1000, 1, 0, 0)).toBeCloseTo(1, 12);
  });

  it("learns no sample from a heartbeat (wall time 0) but feeds the next-request averages", () => {
    const m = new FpmRegressionModel("prefill", opts(50, 3, 16));
    m.addObservation(fpm({ wallTimeS: 0, sumPrefillTokens: 100, numPrefillRequests: 1 }));
    expect(m.numObservations).toBe(0);
    expect(m.avgIsl).toBe(100);
  });

  it("averages the ISL over every pass after the first prompt, one without prompts counting 0", () => {
    const m = new FpmRegressionModel("prefill", opts(50, 3, 16));
    m.addObservation(fpm({ wallTimeS: 0 }));
    expect(m.avgIsl).toBe(0);
    for (const t of [1000, 2000, 3000]) m.addObservation(prefillSample(t, 0.01));
    expect(m.avgIsl).toBeCloseTo(2000, 12);
    m.addObservation(fpm({ wallTimeS: 0 }));
    expect(m.avgIsl).toBeCloseTo(1500, 12);
  });

  it("fits wt = 0.001·t + 0.002 and drains a queue in MBT chunks", () => {
    const m = trainedPrefill([500, 1000, 1500, 2000, 2500], (t) => 0.001 * t + 0.002);
    expect(m.forwardPassS(1000, 1, 0, 0)).toBeCloseTo(1.002, 12);
    // queue 0: only the next request (avg_isl 1500) → one pass of 1500 tokens.
    expect(ttft(m, 0, 2048)).toBeCloseTo(1.502, 12);
    const lin = trainedPrefill([100, 200, 300, 400, 500], (t) => 0.001 * t);
    // queued 5000 + avg_isl 300 at MBT 2048: chunks 2048, 2048, 1204.
    expect(ttft(lin, 5000, 2048)).toBeCloseTo(2 * 2.048 + 1.204, 12);
  });

  it("applies the KV-hit discount with the [0, 0.95] clamp", () => {
    const lin = trainedPrefill([500, 1000, 1500, 2000, 2500, 3000, 3500, 4000], (t) => 0.001 * t);
    // avg_isl 2250: full = 6250 tokens → 6.25 s; h 0.5 → 3125 tokens → 3.125 s.
    expect(ttft(lin, 4000, 100_000, 0)).toBeCloseTo(6.25, 12);
    expect(ttft(lin, 4000, 100_000, 0.5)).toBeCloseTo(3.125, 12);
    expect(ttft(lin, 4000, 100_000, null)).toBe(ttft(lin, 4000, 100_000, 0));
    expect(ttft(lin, 2000, 100_000, 1.5)).toBe(ttft(lin, 2000, 100_000, 0.95));
    expect([null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1, 0.3, 2].map(clampKvHitRate)).toEqual([
      0, 0, 0, 0, 0, 0.3, 0.95,
    ]);
  });

  it("prices the attention pairs of a prompt: a long prefill costs more than its tokens' share", () => {
    // Passes whose time is 2 ms + 1 µs per token + 1 ns per attention pair.
    const wall = (t: number) => (2 + 1e-3 * t + 1e-6 * prefillAttentionPairs(t, 0, 1)) / 1000;
    const m = trainedPrefill([256, 512, 1024, 2048, 4096, 8192], wall);
    for (const t of [300, 3000, 6000]) expect(m.forwardPassS(t, 1, 0, 0)).toBeCloseTo(wall(t), 12);
    // Two prompts of 3000 compute half the pairs of one of 6000.
    expect(m.forwardPassS(6000, 2, 0, 0)!).toBeLessThan(m.forwardPassS(6000, 1, 0, 0)!);
  });

  it("refits lazily after new samples", () => {
    const m = trainedPrefill([100, 200, 300], (t) => 0.001 * t);
    expect(m.forwardPassS(1000, 1, 0, 0)).toBeCloseTo(1, 12);
    for (const t of [400, 500, 600]) m.addObservation(prefillSample(t, 0.002 * t));
    expect(m.forwardPassS(1000, 1, 0, 0)).not.toBeCloseTo(1, 3);
  });

  it("tracks avg_decode_length over the passes that decode", () => {
    const m = new FpmRegressionModel("decode", opts(50, 3, 16));
    for (const kv of [1000, 2000, 3000])
      m.addObservation(fpm({ sumDecodeKvTokens: kv, numDecodeRequests: 10 }));
    m.addObservation(fpm({ wallTimeS: 0 }));
    expect(m.avgDecodeLength).toBeCloseTo(200, 12);
  });
});

describe("retention: cells over log(1 + x), the oldest of the fullest cell retired", () => {
  const decodeXs = (m: FpmRegressionModel) =>
    m
      .store("pure_decode")!
      .retainedSamples()
      .map((s) => s.x[0]);

  it("caps each store at max_num_fpm_samples", () => {
    const m = new FpmRegressionModel("decode", opts(10, 3, 4));
    for (let i = 0; i < 20; i++)
      m.addObservation(fpm({ numDecodeRequests: 1, sumDecodeKvTokens: 100 * (i + 1) }));
    expect(m.numObservations).toBe(10);
  });

  it("bins on the log scale (the reference's probe: 1, 10 | 100, 500, 1000 in 2 cells)", () => {
    // KV 1 … 1000: on log(1 + x) the cells split between 10 and 100, so {100, 500, 1000} is the
    // fullest cell and its oldest, 1000, is retired (on a linear scale 1 would be).
    const m = new FpmRegressionModel("decode", opts(4, 2, 4));
    for (const k of [1, 1000, 10, 100, 500])
      m.addObservation(fpm({ numDecodeRequests: 1, sumDecodeKvTokens: k }));
    expect(decodeXs(m)).toEqual([1, 10, 100, 500]);
  });

  it("keeps a rare operating point when one point dominates", () => {
    const m = new FpmRegressionModel("decode", opts(10, 3, 16));
    for (let i = 0; i < 15; i++) m.addObservation(fpm({ numDecodeRequests: 32, sumDecodeKvTokens: 32000 }));
    m.addObservation(fpm({ numDecodeRequests: 4, sumDecodeKvTokens: 4000, wallTimeS: 0.005 }));
    expect(m.numObservations).toBe(10);
    expect(decodeXs(m).filter((k) => k === 4000)).toHaveLength(1);
  });
});

describe("the aggregated model's workload kinds (as the reference's four stores)", () => {
  const decodeOnly = (n: number, kv: number) =>
    fpm({ numDecodeRequests: n, sumDecodeKvTokens: kv, wallTimeS: 0.003 + 1e-4 * n + 2e-5 * kv });
  const prefillOnly = (t: number) => prefillSample(t, 0.004 + 3e-5 * t);
  const mixed = (t: number, kv: number) =>
    fpm({
      sumPrefillTokens: t,
      numPrefillRequests: 1,
      numDecodeRequests: 4,
      sumDecodeKvTokens: kv,
      wallTimeS: 0.005 + 4e-5 * (t + 4) + 1e-5 * (kv + prefillAttentionPairs(t, 0, 1)),
    });

  it("prices each pass with the store of its kind, each ready on its own", () => {
    const m = new FpmRegressionModel("aggregated", opts(50, 3, 16));
    m.loadBenchmarkFpms([prefillOnly(1000), prefillOnly(2000), prefillOnly(4000)]);
    m.loadBenchmarkFpms([decodeOnly(8, 8000), decodeOnly(16, 40000), decodeOnly(32, 20000)]);
    expect(m.hasSufficientData()).toBe(true);
    expect(m.forwardPassS(3000, 1, 0, 0)).toBeCloseTo(0.004 + 0.09, 12);
    expect(m.forwardPassS(0, 0, 10, 10000)).toBeCloseTo(0.003 + 0.001 + 0.2, 12);
    // A mixed pass waits for mixed passes observed live.
    expect(m.forwardPassS(3000, 1, 10, 10000)).toBeNull();
    m.addObservation(mixed(1000, 5000));
    m.addObservation(mixed(2000, 20000));
    expect(m.forwardPassS(3000, 1, 4, 10000)).toBeNull();
    m.addObservation(mixed(4000, 10000));
    expect(m.store("contains_locally_mixed")!.size).toBe(3);
    expect(m.forwardPassS(3000, 1, 4, 10000)).toBeCloseTo(mixed(3000, 10000).wallTimeS, 12);
    expect(m.store("pure_prefill")!.size).toBe(3);
    expect(m.store("pure_decode")!.size).toBe(3);
    expect(m.store("cross_rank_aggregated")!.size).toBe(0);
    // An empty pass costs nothing; idle heartbeats (wall 0) feed the averages only.
    expect(m.forwardPassS(0, 0, 0, 0)).toBe(0);
    m.addObservation(fpm({ numDecodeRequests: 2, sumDecodeKvTokens: 100, wallTimeS: 0 }));
    expect(m.numObservations).toBe(9);
  });

  it("is not ready before any store holds load_min_observations passes", () => {
    const m = new FpmRegressionModel("aggregated", opts(50, 3, 16));
    m.addObservation(mixed(1000, 5000));
    m.addObservation(decodeOnly(8, 8000));
    m.addObservation(prefillOnly(1000));
    m.addObservation(mixed(2000, 6000));
    expect(m.numObservations).toBe(4);
    expect(m.hasSufficientData()).toBe(false);
  });

  it("tracks the prefill mix riding its decode passes, idle passes counting 0", () => {
    const m = new FpmRegressionModel("aggregated", opts(50, 3, 16));
    m.addObservation(fpm({ wallTimeS: 0 }));
    m.addObservation(mixed(1000, 5000));
    m.addObservation(fpm({ numPrefillRequests: 2, sumPrefillTokens: 3000, wallTimeS: 0.1 }));
    m.addObservation(decodeOnly(4, 1000));
    expect(m.avgPrefillTokens).toBeCloseTo(4000 / 3, 12);
    expect(m.avgNumPrefill).toBeCloseTo(1, 12);
    expect(m.avgIsl).toBeCloseTo((1000 + 1500 + 0) / 3, 12);
  });
});
