/**
 * Throughput loop conformance: a port of upstream `unit/test_throughput_scaling.py` (`ai-dynamo/dynamo@302cbcd:components/src/dynamo/planner/tests/unit/test_throughput_scaling.py`),
 * plus hand-computed checks of the capacity search on linear forward-pass models.
 *
 * Upstream stubs the raw replica counts; here a raw count r comes from demand / engine rps with integer
 * arithmetic that is exact in floating point (demand = rawP·rawD, engine rps of prefill = rawD, ...).
 */
import { describe, expect, it } from "vitest";
import {
  fitDirectionalBudgetPair,
  guardDisaggScalingBudget,
  proportionalClampPair,
} from "../../src/planner/budget.js";
import { resolveMinEndpoint } from "../../src/planner/loadScaling/types.js";
import { capacityBatchSizes } from "../../src/planner/throughputCapacity.js";
import {
  advanceThroughput,
  type CapacityRequest,
  capacityRequestFor,
  capThroughputReplicas,
  demandRps,
  engineRpsOf,
  findEngineCapacityRps,
  rawReplicas,
  resolveAcceptLength,
  type ThroughputInputs,
  type ThroughputSettings,
} from "../../src/planner/throughputScaling.js";
import type { EngineCapabilities, EnginePerfModel } from "../../src/planner/types.js";

// ---------------------------------------------------------------------------------------------------
// Harness: 1 GPU per replica, min_gpu_budget = max_gpu_budget = 64, cap 8 unless a test says otherwise.
// ---------------------------------------------------------------------------------------------------

interface Harness {
  load: boolean;
  cap?: number;
  minGpus?: number;
  maxGpus?: number;
  pg?: number;
  dg?: number;
  pmin?: number | null;
  dmin?: number | null;
}

function settings(h: Harness): ThroughputSettings {
  return {
    enableThroughputScaling: true,
    enableLoadScaling: h.load,
    maxThroughputScalingReplicas: h.cap ?? 8,
    minGpuBudget: h.minGpus ?? 64,
    maxGpuBudget: h.maxGpus ?? 64,
    minEndpoint: 1,
    prefillMinEndpoint: h.pmin ?? null,
    decodeMinEndpoint: h.dmin ?? null,
  };
}

/** Disagg tick with stubbed raw counts (null = that side's perf model is not ready). */
function disagg(current: [number, number], raw: [number | null, number | null], h: Harness) {
  const [rawP, rawD] = raw;
  const demand = (rawP ?? 1) * (rawD ?? 1);
  const inputs: ThroughputInputs = {
    settings: settings(h),
    mode: "disagg",
    current: { prefill: current[0], decode: current[1] },
    demandRps: demand,
    engineRps: {
      prefill: rawP === null ? null : demand / rawP,
      decode: rawD === null ? null : demand / rawD,
    },
    gpu: { prefill: h.pg ?? 1, decode: h.dg ?? 1 },
  };
  return advanceThroughput(inputs);
}

/** Single-pool tick (agg; upstream's `_throughput_single(…, "decode")` follows the same rules). */
function single(current: number, raw: number | null, h: Harness) {
  return advanceThroughput({
    settings: settings(h),
    mode: "agg",
    current: { prefill: null, decode: current },
    demandRps: raw ?? 1,
    engineRps: { prefill: null, decode: raw === null ? null : 1 },
    gpu: { prefill: 0, decode: h.dg ?? 1 },
  });
}

describe("raw replica computation", () => {
  it("unreachable_prefill_ttft_does_not_create_replica_floor", () => {
    // Capacity 1 rps but TTFT 1.002 s against a 0.2 s SLA: the ineligible capacity still sizes the pool.
    const engine = engineRpsOf({ rps: 1, eligible: false, batch: 1, ttftS: 1.002 });
    expect(engine).toBe(1);
    expect(rawReplicas(0.01, engine, 1)).toBe(1);
  });

  it("prefill_throughput_uses_component_minimum_override", () => {
    const s = settings({ load: false, pmin: 3 });
    expect(rawReplicas(0.01, 1, resolveMinEndpoint(s, "prefill"))).toBe(3);
    expect(resolveMinEndpoint(s, "decode")).toBe(1);
  });

  it.each([4, 5])("engine_rps_recommendation_is_independent_of_sidecar_cost (cost %i)", (cost) => {
    expect(rawReplicas(2.1, 1, 1)).toBe(3);
    const out = advanceThroughput({
      settings: settings({ load: false, minGpus: -1, maxGpus: -1 }),
      mode: "agg",
      current: { prefill: null, decode: 1 },
      demandRps: 2.1,
      engineRps: { prefill: null, decode: 1 },
      gpu: { prefill: 0, decode: cost },
    });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 3 });
  });
});

describe("disagg throughput", () => {
  it("disagg_throughput_caps_persisted_lower_bounds_once_per_observation", () => {
    const first = disagg([24, 40], [8, 180], { load: true });
    expect(first.decision).toBeNull();
    expect(first.lowerBound).toEqual({ prefill: 16, decode: 48 });
    expect(first.reason).toBe("set_lower_bound");
    // The same observation evaluated again (second builtin consumer) must not ratchet the bound.
    const again = disagg([24, 40], [8, 180], { load: true });
    expect(again.lowerBound).toEqual({ prefill: 16, decode: 48 });
  });

  it("disagg_throughput_uses_configured_replica_cap", () => {
    const out = disagg([24, 40], [8, 180], { load: true, cap: 3 });
    expect(out.decision).toBeNull();
    expect(out.lowerBound).toEqual({ prefill: 21, decode: 43 });
  });

  it("disagg_throughput_holds_two_scale_ups_at_gpu_ceiling", () => {
    const out = disagg([24, 40], [32, 48], { load: false });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("gpu_budget_guard_hold");
  });

  it("disagg_throughput_natural_noop_is_not_reported_as_budget_hold", () => {
    const out = disagg([24, 40], [24, 40], { load: false });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
    expect(out.reasonPrefill).toBe("no_change");
    expect(out.reasonDecode).toBe("no_change");
  });

  it("mixed_scaling_does_not_persist_unfunded_scale_ups_at_gpu_ceiling", () => {
    const out = disagg([24, 40], [32, 48], { load: true });
    expect(out.decision).toBeNull();
    expect(out.lowerBound).toEqual({ prefill: 24, decode: 40 });
    expect(out.reason).toBe("gpu_budget_guard_hold");
    expect(out.reasonPrefill).toBe("gpu_budget_guard_hold");
    expect(out.reasonDecode).toBe("gpu_budget_guard_hold");
  });

  it("disagg_throughput_holds_scale_down_without_scale_up_at_gpu_floor", () => {
    const out = disagg([28, 36], [27, 36], { load: false });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("gpu_budget_guard_hold");
  });

  it("disagg_throughput_uses_only_available_headroom", () => {
    const out = disagg([24, 36], [40, 36], { load: false, minGpus: -1 });
    expect(out.decision).toEqual({ numPrefill: 28, numDecode: 36 });
    expect(out.reason).toBe("scale");
  });

  it("disagg_throughput_caps_scale_down_when_minimum_is_disabled", () => {
    const out = disagg([20, 20], [1, 20], { load: false, minGpus: -1 });
    expect(out.decision).toEqual({ numPrefill: 12, numDecode: 20 });
  });

  it("endpoint_and_budget_recovery_take_precedence_over_throughput_cap", () => {
    const out = disagg([21, 34], [30, 34], { load: false, pmin: 30, dmin: 34 });
    expect(out.decision).toEqual({ numPrefill: 30, numDecode: 34 });
  });

  it("disagg_endpoint_recovery_overrides_cap_without_minimum_gpu_budget", () => {
    const out = disagg([1, 1], [30, 1], { load: false, minGpus: -1, pmin: 30, dmin: 1 });
    expect(out.decision).toEqual({ numPrefill: 30, numDecode: 1 });
  });

  it("endpoint_recovery_can_select_budget_donor", () => {
    const out = disagg([24, 40], [8, 180], { load: false, pmin: 30, dmin: 8 });
    expect(out.decision).toEqual({ numPrefill: 30, numDecode: 34 });
  });

  it("mixed_endpoint_recovery_can_select_budget_donor (throughput half)", () => {
    const out = disagg([24, 40], [8, 180], { load: true, pmin: 30, dmin: 8 });
    expect(out.decision).toBeNull();
    expect(out.lowerBound).toEqual({ prefill: 30, decode: 34 });
  });

  it("disagg_throughput_applies_min_endpoint_floor_when_perf_model_not_ready", () => {
    const out = disagg([1, 1], [null, null], { load: false, minGpus: -1, dmin: 3 });
    expect(out.decision).toEqual({ numPrefill: 1, numDecode: 3 });
    expect(out.reason).toBe("model_not_ready");
    expect(out.reasonPrefill).toBe("model_not_ready");
    expect(out.reasonDecode).toBe("model_not_ready");
  });

  it("disagg_throughput_holds_when_perf_model_not_ready_and_floor_already_met", () => {
    const out = disagg([1, 3], [null, null], { load: false, minGpus: -1, dmin: 3 });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("model_not_ready");
  });

  it("one side not ready holds both and labels the ready side partner_not_ready", () => {
    const out = disagg([4, 4], [null, 12], { load: false, minGpus: -1 });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("model_not_ready");
    expect(out.reasonPrefill).toBe("model_not_ready");
    expect(out.reasonDecode).toBe("partner_not_ready");
    const mixed = disagg([4, 4], [12, null], { load: true, minGpus: -1 });
    expect(mixed.lowerBound).toEqual({ prefill: 4, decode: 4 });
    expect(mixed.reason).toBe("model_not_ready");
    expect(mixed.reasonPrefill).toBe("partner_not_ready");
    expect(mixed.reasonDecode).toBe("model_not_ready");
  });

  it("capped_throughput_floor_preserves_floor_guard_without_oscillation (throughput half)", () => {
    const out = disagg([27, 36], [8, 8], { load: true });
    expect(out.lowerBound).toEqual({ prefill: 19, decode: 28 });
  });

  it("mixed_scaling_funds_only_atomic_part_of_large_throughput_floor (throughput half)", () => {
    const out = disagg([24, 40], [8, 180], { load: true });
    expect(out.lowerBound).toEqual({ prefill: 16, decode: 48 });
  });
});

describe("single-pool throughput", () => {
  it("single_mixed_scaling_reports_unfunded_scale_up_at_gpu_ceiling", () => {
    const out = single(64, 180, { load: true });
    expect(out.decision).toBeNull();
    expect(out.lowerBound).toEqual({ prefill: null, decode: 64 });
    expect(out.reason).toBe("gpu_budget_guard_hold");
  });

  it("single_throughput_does_not_oscillate_at_tolerance_edge", () => {
    const out = single(63, 62, { load: false });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("gpu_budget_guard_hold");
  });

  it("single_throughput_natural_noop_is_not_reported_as_budget_hold", () => {
    const out = single(64, 64, { load: false });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
  });

  it("single_throughput_floor_is_not_inflated_by_minimum_gpu_budget", () => {
    const out = single(64, 1, { load: true });
    expect(out.lowerBound).toEqual({ prefill: null, decode: 56 });
    expect(out.reason).toBe("set_lower_bound");
  });

  it("single_endpoint_recovery_overrides_cap_without_minimum_gpu_budget", () => {
    // Upstream sizes a prefill-only pool with prefill_min_endpoint 30; the agg pool uses the decode minimum.
    const out = single(1, 30, { load: false, minGpus: -1, dmin: 30 });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 30 });
  });

  it("single_throughput_applies_min_endpoint_floor_when_perf_model_not_ready", () => {
    const out = single(1, null, { load: false, minGpus: -1, dmin: 3 });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 3 });
    expect(out.reason).toBe("model_not_ready");
  });

  it("agg_throughput_uses_replica_cap", () => {
    const out = advanceThroughput({
      settings: settings({ load: false, minGpus: -1, maxGpus: 100 }),
      mode: "agg",
      current: { prefill: null, decode: 10 },
      demandRps: 100,
      engineRps: { prefill: null, decode: 1 },
      gpu: { prefill: 0, decode: 1 },
    });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 18 });
    expect(out.reason).toBe("scale");
  });

  it("agg_throughput_applies_min_endpoint_floor_when_perf_model_not_ready", () => {
    // rps 0 is the agg form of "perf model not ready".
    const out = advanceThroughput({
      settings: settings({ load: false, minGpus: -1, maxGpus: 100, dmin: 3 }),
      mode: "agg",
      current: { prefill: null, decode: 1 },
      demandRps: 1,
      engineRps: { prefill: null, decode: engineRpsOf({ rps: 0, eligible: true, batch: 1 }) },
      gpu: { prefill: 0, decode: 1 },
    });
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 3 });
    expect(out.reason).toBe("model_not_ready");
  });
});

describe("skip reasons", () => {
  const base: ThroughputInputs = {
    settings: settings({ load: true }),
    mode: "disagg",
    current: { prefill: 2, decode: 2 },
    demandRps: 4,
    engineRps: { prefill: 1, decode: 1 },
    gpu: { prefill: 1, decode: 1 },
  };

  it("disabled ⇒ nothing touched", () => {
    const out = advanceThroughput({
      ...base,
      settings: { ...base.settings, enableThroughputScaling: false },
    });
    expect(out).toEqual({
      decision: null,
      lowerBound: null,
      reasonPrefill: null,
      reasonDecode: null,
      reason: "disabled",
    });
  });
  it("predict_failed", () => {
    expect(advanceThroughput({ ...base, predictFailed: true }).reason).toBe("predict_failed");
  });
  it("no_traffic_data for a missing demand or a non-positive window", () => {
    expect(advanceThroughput({ ...base, demandRps: null }).reason).toBe("no_traffic_data");
    expect(demandRps(10, 0)).toBeNull();
    expect(demandRps(10, -5)).toBeNull();
    expect(demandRps(30, 60)).toBe(0.5);
  });
  it("a null prefill count is treated as 0 replicas", () => {
    const out = advanceThroughput({
      ...base,
      current: { prefill: null, decode: 2 },
      settings: settings({ load: false, minGpus: -1 }),
    });
    expect(out.decision).toEqual({ numPrefill: 4, numDecode: 4 });
  });
});

describe("mixed load + throughput composition (budget primitives only; the load loop owns it)", () => {
  // Mirrors upstream's disagg load step (core/state.py wrappers): lift the load proposal to the throughput
  // bound and the endpoint minimums; when the bound lifted it, fit the ceiling only (endpoint recovery may
  // pick a donor); then apply the full band (endpoint recovery reconciles, else the directional guard).
  function compose(
    current: [number, number],
    load: [number, number],
    bound: [number, number] | null,
    h: Harness,
  ): { value: [number, number]; reason: string | null } {
    const s = settings(h);
    const [cp, cd] = current;
    const [pmin, dmin] = [resolveMinEndpoint(s, "prefill"), resolveMinEndpoint(s, "decode")];
    const [pg, dg] = [h.pg ?? 1, h.dg ?? 1];
    const recovery = cp < pmin || cd < dmin;
    let [p, d] = bound ? [Math.max(load[0], bound[0]), Math.max(load[1], bound[1])] : load;
    const lifted = p > load[0] || d > load[1];
    [p, d] = [Math.max(p, pmin), Math.max(d, dmin)];
    if (lifted) {
      [p, d] = recovery
        ? proportionalClampPair(p, d, pg, dg, -1, s.maxGpuBudget, pmin, dmin)
        : fitDirectionalBudgetPair(cp, cd, p, d, pg, dg, -1, s.maxGpuBudget, pmin, dmin);
    }
    if (recovery) {
      const value = proportionalClampPair(p, d, pg, dg, s.minGpuBudget, s.maxGpuBudget, pmin, dmin);
      return { value, reason: "gpu_budget_reconcile" };
    }
    return guardDisaggScalingBudget(cp, cd, p, d, pg, dg, s.minGpuBudget, s.maxGpuBudget, pmin, dmin);
  }

  it("mixed_scaling_funds_only_atomic_part_of_large_throughput_floor", () => {
    expect(compose([24, 40], [23, 39], [16, 48], { load: true })).toEqual({ value: [23, 41], reason: null });
  });
  it("capped_throughput_floor_preserves_floor_guard_without_oscillation", () => {
    expect(compose([27, 36], [26, 35], [19, 28], { load: true })).toEqual({
      value: [27, 36],
      reason: "gpu_budget_guard_hold",
    });
  });
  it("mixed_endpoint_recovery_can_select_budget_donor", () => {
    const h = { load: true, pmin: 30, dmin: 8 };
    expect(compose([24, 40], [23, 39], [30, 34], h)).toEqual({
      value: [30, 34],
      reason: "gpu_budget_reconcile",
    });
  });
  it("load_only_endpoint_recovery_can_select_budget_donor", () => {
    const h = { load: true, pmin: 30, dmin: 8 };
    expect(compose([24, 40], [23, 39], null, h)).toEqual({ value: [30, 34], reason: "gpu_budget_reconcile" });
  });
});

describe("helpers", () => {
  it("caps relative to the current count and never below 0", () => {
    expect(capThroughputReplicas(180, 40, 8)).toBe(48);
    expect(capThroughputReplicas(1, 3, 8)).toBe(1);
    expect(capThroughputReplicas(0, 5, 8)).toBe(0);
    expect(capThroughputReplicas(-3, 2, 8)).toBe(0);
  });
  it("resolves the accept length against the speculative depth", () => {
    expect(resolveAcceptLength(2.5, 0, 0)).toBe(1);
    expect(resolveAcceptLength(2.5, 3, 0)).toBe(2.5);
    expect(resolveAcceptLength(9, 3, 0)).toBe(4);
    expect(resolveAcceptLength(0.5, 0, 2)).toBe(1);
    expect(resolveAcceptLength(9, 0, 2)).toBe(3);
    expect(resolveAcceptLength(null, 3, 0)).toBe(1);
    expect(resolveAcceptLength(Number.NaN, 3, 0)).toBe(1);
  });
  it("builds role-specific capacity requests", () => {
    const s = { ttftMs: 500, itlMs: 50 };
    const shape = { isl: 1000, osl: 150, kvHitRate: 0.2, acceptLength: 2 };
    expect(capacityRequestFor("prefill", s, shape)).toEqual({
      ...shape,
      ttftS: 0.5,
      itlS: null,
      acceptLength: 1,
    });
    expect(capacityRequestFor("decode", s, shape)).toEqual({ ...shape, ttftS: null, itlS: 0.05 });
    expect(capacityRequestFor("agg", s, shape)).toEqual({ ...shape, ttftS: 0.5, itlS: 0.05 });
  });
  it("searches every batch up to 128, else 128 spread points", () => {
    expect(capacityBatchSizes(0)).toEqual([]);
    expect(capacityBatchSizes(3)).toEqual([1, 2, 3]);
    expect(capacityBatchSizes(128)).toHaveLength(128);
    const spread = capacityBatchSizes(1000);
    expect(spread).toHaveLength(128);
    expect(spread[0]).toBe(1);
    expect(spread[1]).toBe(8); // 1 + floor(999 / 127)
    expect(spread[127]).toBe(1000);
  });
});

// ---------------------------------------------------------------------------------------------------
// Capacity search on linear forward-pass models.
// ---------------------------------------------------------------------------------------------------

function linearModel(
  fn: (
    prefillTokens: number,
    prefillRequests: number,
    decodeRequests: number,
    decodeKv: number,
  ) => number | null,
): EnginePerfModel & { calls: number[][] } {
  const calls: number[][] = [];
  return {
    calls,
    addObservation: () => {},
    hasSufficientData: () => true,
    forwardPassS: (pt, pr, dr, kv) => {
      calls.push([pt, pr, dr, kv]);
      return fn(pt, pr, dr, kv);
    },
  };
}

/** 2 ms overhead + 1 ms per prefill token + 0.1 ms per decode request + 1 µs per decode KV token. */
const LINEAR = () => linearModel((pt, _pr, dr, kv) => 0.002 + 0.001 * pt + 0.0001 * dr + 0.000001 * kv);

function caps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return {
    numGpu: 1,
    gpuCostPerReplica: 1,
    maxNumBatchedTokens: 2048,
    maxNumSeqs: 8,
    contextLength: 8192,
    maxKvTokens: 100_000,
    kvCacheBlockSize: 16,
    speculativeNextn: 0,
    attentionData: 1,
    ...over,
  };
}

function req(over: Partial<CapacityRequest> = {}): CapacityRequest {
  return { isl: 1000, osl: 150, ttftS: null, itlS: null, kvHitRate: null, acceptLength: 1, ...over };
}

describe("findEngineCapacityRps — prefill", () => {
  // isl 1000, MBT 2048 ⇒ batches 1..2; ttft(b) = 0.002 + b s (one chunk), rps = b / ttft.
  it("picks the best eligible batch", () => {
    const cap = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ ttftS: 2 }));
    expect(cap).not.toBeNull();
    expect(cap?.batch).toBe(1);
    expect(cap?.eligible).toBe(true);
    expect(cap?.ttftS).toBeCloseTo(1.002, 12);
    expect(cap?.rps).toBeCloseTo(1 / 1.002, 12);
  });
  it("takes the larger batch when the SLA allows it", () => {
    const cap = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ ttftS: 3 }));
    expect(cap?.batch).toBe(2);
    expect(cap?.rps).toBeCloseTo(2 / 2.002, 12);
  });
  it("returns the best ineligible candidate when no batch meets the SLA", () => {
    const cap = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ ttftS: 0.5 }));
    expect(cap?.eligible).toBe(false);
    expect(cap?.batch).toBe(2);
    expect(cap?.rps).toBeCloseTo(2 / 2.002, 12);
  });
  it("chunks a prompt longer than MBT (one request per engine)", () => {
    // 5000 tokens = 2 × 2048 + 904: 2 × 2.050 + 0.906 = 5.006 s.
    const cap = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ isl: 5000 }));
    expect(cap?.batch).toBe(1);
    expect(cap?.ttftS).toBeCloseTo(5.006, 12);
  });
  it("discounts the prompt by the KV-hit rate and clamps it", () => {
    // hit 0.5 ⇒ 500 effective tokens ⇒ batches 1..4; rps rises with b ⇒ b = 4, ttft 2.002.
    const half = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ kvHitRate: 0.5 }));
    expect(half?.batch).toBe(4);
    expect(half?.ttftS).toBeCloseTo(2.002, 12);
    const none = findEngineCapacityRps("prefill", caps(), LINEAR(), req());
    for (const odd of [Number.NaN, -1]) {
      expect(findEngineCapacityRps("prefill", caps(), LINEAR(), req({ kvHitRate: odd }))).toEqual(none);
    }
    expect(findEngineCapacityRps("prefill", caps(), LINEAR(), req({ kvHitRate: 1.5 }))).toEqual(
      findEngineCapacityRps("prefill", caps(), LINEAR(), req({ kvHitRate: 0.95 })),
    );
  });
  it("keeps the first batch on an rps tie", () => {
    // Time exactly proportional to tokens (exact in binary) ⇒ every batch has rps 1.
    const model = linearModel((pt) => pt / 1024);
    const cap = findEngineCapacityRps(
      "prefill",
      caps({ maxNumBatchedTokens: 4096 }),
      model,
      req({ isl: 1024 }),
    );
    expect(cap).toMatchObject({ batch: 1, rps: 1 });
  });
  it("splits work over attention-DP ranks and waits for the slowest", () => {
    // 1001 tokens over 2 ranks ⇒ 501 / 500; the slower rank takes 0.503 s.
    const model = LINEAR();
    const cap = findEngineCapacityRps(
      "prefill",
      caps({ maxNumSeqs: 1, attentionData: 2 }),
      model,
      req({ isl: 1001 }),
    );
    expect(cap?.ttftS).toBeCloseTo(0.503, 12);
    expect(model.calls).toEqual([
      [501, 1, 0, 0],
      [500, 1, 0, 0],
    ]);
  });
  it("is model_not_ready when the model cannot answer, isl is 0, or every time is 0", () => {
    expect(
      findEngineCapacityRps(
        "prefill",
        caps(),
        linearModel(() => null),
        req(),
      ),
    ).toBeNull();
    expect(findEngineCapacityRps("prefill", caps(), LINEAR(), req({ isl: 0 }))).toBeNull();
    expect(
      findEngineCapacityRps(
        "prefill",
        caps(),
        linearModel(() => 0),
        req(),
      ),
    ).toBeNull();
  });
});

describe("findEngineCapacityRps — decode", () => {
  // ctx = 1000 + 75 = 1075; batches 1..min(64, 100000 / 1075 = 93) = 64;
  // itl(b) = 0.002 + 0.0001 b + 0.001075 b = 0.002 + 0.001175 b; rps = b / (150 · itl).
  const decodeCaps = caps({ maxNumSeqs: 64 });
  it("picks the largest batch under the ITL SLA", () => {
    const cap = findEngineCapacityRps("decode", decodeCaps, LINEAR(), req({ itlS: 0.05 }));
    expect(cap?.batch).toBe(40); // 0.049 s; b = 41 gives 0.050175 s
    expect(cap?.eligible).toBe(true);
    expect(cap?.itlS).toBeCloseTo(0.049, 12);
    expect(cap?.rps).toBeCloseTo(40 / (150 * 0.049), 9);
  });
  it("divides the forward pass by the accept length", () => {
    const cap = findEngineCapacityRps("decode", decodeCaps, LINEAR(), req({ itlS: 0.05, acceptLength: 2 }));
    expect(cap?.batch).toBe(64);
    expect(cap?.itlS).toBeCloseTo((0.002 + 0.001175 * 64) / 2, 12);
  });
  it("passes b requests and b·ctx KV tokens to the model", () => {
    const model = LINEAR();
    findEngineCapacityRps("decode", caps({ maxNumSeqs: 2 }), model, req());
    expect(model.calls).toEqual([
      [0, 0, 1, 1075],
      [0, 0, 2, 2150],
    ]);
  });
  it("has no candidate when one request's context exceeds the KV cache", () => {
    expect(findEngineCapacityRps("decode", caps({ maxKvTokens: 1000 }), LINEAR(), req())).toBeNull();
  });
});

describe("findEngineCapacityRps — agg", () => {
  // isl 1000, osl 100, ctx 1050, batches 1..8; prefill per iteration 10 b tokens;
  // itl(b) = 0.002 + 0.01 b + 0.0001 b + 0.00105 b = 0.002 + 0.01115 b; ttft = itl(b) + 1.0.
  const aggReq = req({ osl: 100 });
  it("meets both SLAs at the best batch and reports e2e", () => {
    const cap = findEngineCapacityRps("agg", caps(), LINEAR(), { ...aggReq, ttftS: 2, itlS: 0.1 });
    expect(cap?.batch).toBe(8);
    expect(cap?.eligible).toBe(true);
    expect(cap?.itlS).toBeCloseTo(0.0912, 12);
    expect(cap?.ttftS).toBeCloseTo(1.0912, 12);
    expect(cap?.e2eS).toBeCloseTo(1.0912 + 99 * 0.0912, 9);
    expect(cap?.rps).toBeCloseTo(8 / 9.12, 9);
  });
  it("is limited by the ITL SLA", () => {
    const cap = findEngineCapacityRps("agg", caps(), LINEAR(), { ...aggReq, ttftS: 2, itlS: 0.05 });
    expect(cap?.batch).toBe(4); // itl 0.0466
    expect(cap?.rps).toBeCloseTo(4 / 4.66, 9);
  });
  it("is limited by the TTFT SLA", () => {
    // ttft = 1.002 + 0.01115 b ≤ 1.05 ⇒ b ≤ 4.3.
    const cap = findEngineCapacityRps("agg", caps(), LINEAR(), { ...aggReq, ttftS: 1.05, itlS: 0.1 });
    expect(cap?.batch).toBe(4);
  });
  it("only considers batches whose prefill share fits beside the decode tokens", () => {
    // osl 10 ⇒ 100 b prefill tokens per iteration ≤ 2048 − b ⇒ b ≤ 20 although 64 sequences fit.
    const cap = findEngineCapacityRps("agg", caps({ maxNumSeqs: 64 }), LINEAR(), req({ osl: 10 }));
    expect(cap?.batch).toBe(20);
  });
  it("queries a mixed pass for itl and a chunked mixed prefill for ttft", () => {
    const model = LINEAR();
    findEngineCapacityRps("agg", caps({ maxNumSeqs: 1 }), model, aggReq);
    expect(model.calls).toEqual([
      [10, 1, 1, 1050],
      [1010, 1, 1, 1050],
    ]);
  });
  it("needs an MBT above 1", () => {
    expect(findEngineCapacityRps("agg", caps({ maxNumBatchedTokens: 1 }), LINEAR(), aggReq)).toBeNull();
  });
});

describe("capacity → replicas", () => {
  it("sizes a prefill pool from the searched capacity", () => {
    const cap = findEngineCapacityRps("prefill", caps(), LINEAR(), req({ ttftS: 2 }));
    const rps = engineRpsOf(cap);
    // 0.998 rps per engine; 10 rps of demand ⇒ ceil(10.02) = 11 engines.
    expect(rawReplicas(10, rps, 1)).toBe(11);
    expect(engineRpsOf(null)).toBeNull();
  });
});
