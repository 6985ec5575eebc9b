/**
 * SLA-target load scaling (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`) on exactly linear perf models, so every estimate and
 * every consolidation check below is computed by hand:
 *   prefill: wall = 1e-4 s/token, avg_isl 1000 → TTFT(queue q) = 0.1 ms · (q + 1000);
 *   decode:  wall = 5 ms + 1 µs·kv + 0.1 ms·requests, avg_decode_length 1250;
 *   agg:     wall = 1 ms + 10 µs·prefill + 1 µs·decode_kv, avg_isl 1000, avg_decode_length 200,
 *            typical prefill mix 1500 tokens.
 * SLA: TTFT 500 ms, ITL 50 ms, sensitivity 80 % unless a test says otherwise.
 */
import { describe, expect, it } from "vitest";
import { advanceLoad, type LoadInputs, type LoadOutcome } from "../../src/planner/loadScaling/index.js";
import { FpmRegressionModel } from "../../src/planner/perfModel/index.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../../src/planner/types.js";
import {
  engineCaps,
  fittedAggModel,
  fittedDecodeModel,
  forwardPass,
  plannerSettings,
  REGRESSION_OPTS,
  workerCounts,
} from "../helpers/planner.js";

const OPTS = REGRESSION_OPTS;

function settings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return plannerSettings({
    optimizationTarget: "sla",
    loadMinObservations: 3,
    maxNumFpmSamples: 50,
    advisory: true,
    ...over,
  });
}

function caps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return engineCaps(over);
}

function fpm(workerId: number, f: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
  return forwardPass(workerId, { wallTimeS: 0.01, ...f });
}

const workers = workerCounts;

function prefillModel(samples = [500, 1000, 1500]): FpmRegressionModel {
  const m = new FpmRegressionModel("prefill", OPTS);
  for (const t of samples)
    m.addObservation(fpm(0, { sumPrefillTokens: t, numPrefillRequests: 1, wallTimeS: 1e-4 * t }));
  return m;
}

const decodeModel = () => fittedDecodeModel();
const aggModel = () => fittedAggModel();

interface Disagg {
  /** Queued prompt tokens per prefill worker (null = no prefill FPM, one prefill worker). */
  prefill?: number[] | null;
  /** [scheduled decode KV, scheduled decode requests] per decode worker (null = no decode FPM, one worker). */
  decode?: [number, number][] | null;
  settings?: Partial<PlannerSettings>;
  inputs?: Partial<LoadInputs>;
}

function disagg(t: Disagg): LoadOutcome {
  const pq = t.prefill ?? null;
  const dk = t.decode ?? null;
  return advanceLoad({
    settings: settings(t.settings),
    mode: "disagg",
    workers: workers(pq?.length ?? 1, dk?.length ?? 1),
    fpmPrefill: pq?.map((q, i) => fpm(i, { sumQueuedPrefillTokens: q })) ?? null,
    fpmDecode: dk?.map(([kv, n], i) => fpm(i, { sumDecodeKvTokens: kv, numDecodeRequests: n })) ?? null,
    caps: { prefill: caps(), decode: caps() },
    perf: { prefill: prefillModel(), decode: decodeModel() },
    kvHitRate: null,
    acceptLength: 1,
    lowerBound: null,
    ...t.inputs,
  });
}

describe("disagg prefill: TTFT = 0.1 ms · (queue + 1000) vs 500 ms", () => {
  it("scales up when all engines are over the SLA (600 ms each)", () => {
    const out = disagg({ prefill: [5000, 5000] });
    expect(out.decision).toEqual({ numPrefill: 3, numDecode: 1 });
    expect(out.reason).toBe("scale_up");
    expect(out.estimatedTtftMs).toBeCloseTo(600, 9);
  });

  it("does not scale up when one engine is under; the veto names the reason", () => {
    // own = 100 ms, budget (500 − 100)·0.8 = 320; c = 2 → 10 000 + 1000 tokens = 1100 ms, induced 1000.
    const out = disagg({ prefill: [5000, 3000] });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("scale_down_refused_consolidation");
    expect(out.reasonPrefill).toBe("scale_down_refused_consolidation");
    expect(out.reasonDecode).toBe("no_change");
    expect(out.estimatedTtftMs).toBeCloseTo(600, 9);
  });

  it("scales down when the doubled queue stays inside the budget", () => {
    // queue 1000 → post 3000 tokens = 300 ms, induced 200 < 320.
    expect(disagg({ prefill: [1000, 1000] }).decision).toEqual({ numPrefill: 1, numDecode: 1 });
    // queue 1500 → post 4000 = 400 ms, induced 300 < 320: allowed; 1700 → 440 ms, induced 340 ≥ 320: refused.
    expect(disagg({ prefill: [1500, 1500] }).reason).toBe("scale_down");
    expect(disagg({ prefill: [1700, 1700] }).reason).toBe("scale_down_refused_consolidation");
  });

  it("uses c = N/(N−1): three workers with 2000 queued consolidate to 3000 (induced 300 < 320)", () => {
    expect(disagg({ prefill: [2000, 2000, 2000] }).decision?.numPrefill).toBe(2);
  });

  it("refuses when the queue budget (SLA − own)·sens is ≤ 0 (sensitivity 0 never scales down)", () => {
    // One queued token each: an empty queue would be an idle pool, which steps down without estimates.
    const out = disagg({ prefill: [1, 1], settings: { loadScalingDownSensitivity: 0 } });
    expect(out.reason).toBe("scale_down_refused_consolidation");
  });

  it("discounts the backlog and the next request by the KV-hit rate", () => {
    // h 0.5: (5000 + 1000)·0.5 = 3000 tokens = 300 ms: no scale-up; own 50, budget 360,
    // post (10 000 + 1000)·0.5 = 550 ms → induced 500: refused.
    const out = disagg({ prefill: [5000, 5000], inputs: { kvHitRate: 0.5 } });
    expect(out.estimatedTtftMs).toBeCloseTo(300, 9);
    expect(out.reason).toBe("scale_down_refused_consolidation");
  });

  it("reports insufficient_data while the model has too few samples", () => {
    const out = disagg({
      prefill: [5000, 5000],
      decode: [[10_000, 10]],
      inputs: {
        perf: { prefill: prefillModel([500, 1000]), decode: decodeModel() },
      },
    });
    expect(out.decision).toBeNull();
    expect(out).toMatchObject({ reason: "insufficient_data", reasonPrefill: "insufficient_data" });
    expect(out.reasonDecode).toBe("no_change");
  });
});

describe("disagg decode: ITL = 5 + (kv + 1250)/1000 + 0.1·(requests + 1) ms vs 50 ms", () => {
  it("scales up when all engines are over (61.35 ms each)", () => {
    const out = disagg({
      decode: [
        [50_000, 50],
        [50_000, 50],
      ],
    });
    expect(out.decision).toEqual({ numPrefill: 1, numDecode: 3 });
    expect(out.estimatedItlMs).toBeCloseTo(61.35, 9);
  });

  it("refuses a scale-down whose survivor would exceed SLA·sens (50.35 ≥ 40)", () => {
    const out = disagg({
      decode: [
        [20_000, 20],
        [20_000, 20],
      ],
    });
    expect(out.estimatedItlMs).toBeCloseTo(28.35, 9);
    expect(out.reason).toBe("scale_down_refused_consolidation");
    expect(out.reasonDecode).toBe("scale_down_refused_consolidation");
  });

  it("scales down when the survivor stays under (28.35 < 40)", () => {
    const out = disagg({
      decode: [
        [10_000, 10],
        [10_000, 10],
      ],
    });
    expect(out.decision).toEqual({ numPrefill: 1, numDecode: 1 });
    expect(out.reason).toBe("scale_down");
  });

  it("one engine under blocks the scale-up; its neighbour's doubled KV hits the cache", () => {
    const out = disagg({
      decode: [
        [50_000, 50],
        [10_000, 10],
      ],
    });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("scale_down_refused_consolidation");
  });

  it("the KV-cache check vetoes even when the latency check would pass", () => {
    // 2·16 000 = 32 000 KV after consolidation; ITL 40.35 < 50·1.0.
    const kv: [number, number][] = [
      [16_000, 10],
      [16_000, 10],
    ];
    const small = { caps: { prefill: caps(), decode: caps({ maxKvTokens: 30_000 }) } };
    expect(disagg({ decode: kv, settings: { loadScalingDownSensitivity: 100 }, inputs: small }).reason).toBe(
      "scale_down_refused_consolidation",
    );
    expect(disagg({ decode: kv, settings: { loadScalingDownSensitivity: 100 } }).reason).toBe("scale_down");
  });

  it("divides by the accept length, clamped to [1, nextn + 1]", () => {
    const kv: [number, number][] = [
      [50_000, 50],
      [50_000, 50],
    ];
    const spec = disagg({ decode: kv, settings: { speculativeNextn: 1 }, inputs: { acceptLength: 3 } });
    expect(spec.estimatedItlMs).toBeCloseTo(61.35 / 2, 9);
    expect(spec.decision).toBeNull();
    const noSpec = disagg({ decode: kv, inputs: { acceptLength: 3 } });
    expect(noSpec.decision?.numDecode).toBe(3);
    const workerSpec = disagg({
      decode: kv,
      inputs: { acceptLength: 1.5, caps: { prefill: caps(), decode: caps({ speculativeNextn: 2 }) } },
    });
    expect(workerSpec.estimatedItlMs).toBeCloseTo(61.35 / 1.5, 9);
  });
});

describe("disagg gates and floors", () => {
  it("freezes both roles while either is scaling", () => {
    const busy = disagg({
      prefill: [5000, 5000],
      decode: [[50_000, 50]],
      inputs: { workers: workers(2, 1, { decodeScalingInProgress: true }) },
    });
    expect(busy).toMatchObject({
      decision: null,
      reason: "scaling_in_progress",
      reasonPrefill: "scaling_in_progress",
      reasonDecode: "scaling_in_progress",
    });
    const pending = disagg({
      prefill: [5000, 5000],
      inputs: { workers: workers(2, 1, { expectedDecode: 2 }) },
    });
    expect(pending.reason).toBe("scaling_in_progress");
  });

  it("refuses a snapshot that does not cover the ready workers", () => {
    const out = disagg({ prefill: [5000, 5000], inputs: { workers: workers(3, 1) } });
    expect(out).toMatchObject({ decision: null, reason: "worker_count_mismatch" });
  });

  it("a throughput lower bound lifting a scale-down reports scale_down_capped_by_throughput", () => {
    const out = disagg({ prefill: [1000, 1000], inputs: { lowerBound: { prefill: 2, decode: 1 } } });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("scale_down_capped_by_throughput");
    expect(out.reasonPrefill).toBe("scale_down_capped_by_throughput");
  });

  it("a lower bound above the current count scales up on its own", () => {
    const out = disagg({ prefill: [1000], inputs: { lowerBound: { prefill: 2, decode: null } } });
    expect(out.decision).toEqual({ numPrefill: 2, numDecode: 1 });
    expect(out.reason).toBe("scale_up");
  });

  it("the budget's reason overrides the load reason", () => {
    const out = disagg({ prefill: [5000, 5000], settings: { maxGpuBudget: 3 } });
    expect(out).toMatchObject({
      decision: null,
      reason: "gpu_budget_guard_hold",
      reasonPrefill: "no_change",
    });
  });
});

interface Agg {
  /** [scheduled decode KV, queued prompt tokens] per worker. */
  kv: [number, number][];
  settings?: Partial<PlannerSettings>;
  inputs?: Partial<LoadInputs>;
}

function agg(t: Agg): LoadOutcome {
  return advanceLoad({
    settings: settings({ mode: "agg", ...t.settings }),
    mode: "agg",
    workers: workers(null, t.kv.length),
    fpmPrefill: null,
    fpmDecode: t.kv.map(([kv, q], i) =>
      fpm(i, { sumDecodeKvTokens: kv, numDecodeRequests: kv / 200, sumQueuedPrefillTokens: q }),
    ),
    caps: { prefill: null, decode: caps() },
    perf: { prefill: null, decode: aggModel() },
    kvHitRate: null,
    acceptLength: 1,
    lowerBound: null,
    ...t.inputs,
  });
}

describe("agg SLA: TTFT from chunked prefill riding on decode, ITL with the typical prefill mix", () => {
  it("scales up on ITL 16 + 40.2 = 56.2 ms", () => {
    const out = agg({
      kv: [
        [40_000, 0],
        [40_000, 0],
      ],
    });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 3 });
    expect(out.reason).toBe("scale_up");
    expect(out.estimatedItlMs).toBeCloseTo(56.2, 9);
    expect(out.estimatedTtftMs).toBeCloseTo(1 + 10 + 40, 9);
  });

  it("scales down when both signals survive consolidation", () => {
    // TTFT own 21 ms = post; ITL after: 16 + (10 000 + 200)/1000 = 26.2 < 40.
    const out = agg({
      kv: [
        [5000, 0],
        [5000, 0],
      ],
    });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 1 });
    expect(out.reason).toBe("scale_down");
  });

  it("a decode veto holds the pool (ITL after 42.2 ≥ 40)", () => {
    const out = agg({
      kv: [
        [13_000, 0],
        [13_000, 0],
      ],
    });
    expect(out).toMatchObject({ decision: null, reason: "scale_down_refused_consolidation" });
  });

  it("a prefill veto holds the pool even though decode would scale down", () => {
    // ttft 200: est 94 ms; own 21, budget 143.2; post 13 000 tokens over 7 passes at 10 000 KV = 207 ms.
    // Decode after: 16 + (2·11 000 + 200)/1000 = 38.2 < 40 would allow it alone.
    const out = agg({
      kv: [
        [5000, 6000],
        [5000, 6000],
      ],
      settings: { ttftMs: 200 },
    });
    expect(out.estimatedTtftMs).toBeCloseTo(94, 9);
    expect(out).toMatchObject({ decision: null, reason: "scale_down_refused_consolidation" });
  });

  it("without MBT the decode signal alone may scale down", () => {
    const out = agg({
      kv: [
        [5000, 0],
        [5000, 0],
      ],
      inputs: { caps: { prefill: null, decode: caps({ maxNumBatchedTokens: 0 }) } },
    });
    expect(out.decision?.numDecode).toBe(1);
    expect(out.estimatedTtftMs).toBeNull();
  });

  it("a not-ready model gives insufficient_data", () => {
    const m = new FpmRegressionModel("aggregated", OPTS);
    const out = agg({ kv: [[5000, 0]], inputs: { perf: { prefill: null, decode: m } } });
    expect(out).toMatchObject({ decision: null, reason: "insufficient_data" });
  });

  it("a decode lower bound lifting the scale-down is reported as capped", () => {
    const out = agg({
      kv: [
        [5000, 0],
        [5000, 0],
      ],
      inputs: { lowerBound: { prefill: null, decode: 2 } },
    });
    expect(out).toMatchObject({ decision: null, reason: "scale_down_capped_by_throughput" });
  });

  it("scaling_in_progress and worker_count_mismatch gate the pool", () => {
    const kv: [number, number][] = [[40_000, 0]];
    expect(agg({ kv, inputs: { workers: workers(null, 1, { expectedDecode: 2 }) } }).reason).toBe(
      "scaling_in_progress",
    );
    expect(agg({ kv, inputs: { workers: workers(null, 2) } }).reason).toBe("worker_count_mismatch");
    expect(agg({ kv: [], inputs: { workers: workers(null, 2) } }).reason).toBe("no_fpm_data");
  });
});
