/**
 * Conformance: the rows of upstream `unit/test_throughput_scaling.py` that combine the throughput
 * loop and the load loop (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`, `ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`). Upstream harness: disaggregated, 1 GPU per replica,
 * `min_gpu_budget = max_gpu_budget = 64`, `max_throughput_scaling_replicas = 8`; a throughput observation
 * sets the lower bounds, then a load tick proposes (p, d) and is floored, ceiling-fitted and guarded.
 *
 * Two harnesses, same expectations:
 *  1. the pure loops: `advanceThroughput` (stubbed raw counts) feeds its lower bound into `advanceLoad`
 *     (easy `throughput` target, idle FPMs, so each role proposes N−1 as upstream's stub does);
 *  2. `PlannerCore.tick` on one combined tick (throughput + load due), SLA target, with perf models
 *     bootstrapped so every forward pass takes exactly 1 s: the capacity search then yields exact
 *     engine rps (prefill = MBT / isl, decode = max batch / osl), the constant predictor returns the
 *     window's demand, and idle engines make both roles propose N−1 (`idleSlaTarget`, without an
 *     estimate).
 *
 * Upstream's endpoint-recovery rows stub the load proposal (23,39) although prefill_min_endpoint is 30; a
 * real load loop floors its ±1 step at the role minimum, so here prefill proposes max(24−1, 30) = 30.
 * Either way endpoint recovery reconciles to the same (30,34).
 */
import { describe, expect, it } from "vitest";
import { advanceLoad, type LoadOutcome } from "../../src/planner/loadScaling/index.js";
import { PlannerCore } from "../../src/planner/plannerCore.js";
import { advanceThroughput } from "../../src/planner/throughputScaling.js";
import type {
  EngineCapabilities,
  ForwardPassMetrics,
  PlannerSettings,
  PlannerTarget,
} from "../../src/planner/types.js";
import { engineCaps, forwardPass, PlanePerfModel, plannerSettings } from "../helpers/planner.js";

function settings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return plannerSettings({
    enableThroughputScaling: true,
    maxGpuBudget: 64,
    minGpuBudget: 64,
    ttftMs: 5000,
    itlMs: 5000,
    ...over,
  });
}

function caps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return engineCaps({ maxNumBatchedTokens: 4500, ...over });
}

function fpm(workerId: number, f: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
  return forwardPass(workerId, f);
}

/** Idle engines (empty queues, no KV): every role is under its down-threshold and proposes N−1. */
function idle(n: number, firstId: number): ForwardPassMetrics[] {
  return Array.from({ length: n }, (_, i) => fpm(firstId + i));
}

function counts(p: number, d: number) {
  return {
    readyPrefill: p,
    readyDecode: d,
    expectedPrefill: p,
    expectedDecode: d,
    prefillScalingInProgress: false,
    decodeScalingInProgress: false,
  };
}

interface Row {
  readonly current: [number, number];
  /** Raw throughput replicas (null = throughput scaling off: load-only). */
  readonly raw: [number, number] | null;
  readonly pmin?: number;
  readonly dmin?: number;
}

// ---------------------------------------------------------------------------------------------------
// Harness 1: the pure loops.
// ---------------------------------------------------------------------------------------------------

function pureRow(row: Row): {
  lowerBound: { prefill: number | null; decode: number | null } | null;
  load: LoadOutcome;
} {
  const s = settings({
    enableThroughputScaling: row.raw !== null,
    prefillMinEndpoint: row.pmin ?? null,
    decodeMinEndpoint: row.dmin ?? null,
  });
  const [cp, cd] = row.current;
  let lowerBound: { prefill: number | null; decode: number | null } | null = null;
  if (row.raw !== null) {
    // demand = rawP·rawD with engine rps rawD / rawP: ceil(demand / rps) is exactly rawP / rawD.
    const [rawP, rawD] = row.raw;
    const thr = advanceThroughput({
      settings: s,
      mode: "disagg",
      current: { prefill: cp, decode: cd },
      demandRps: rawP * rawD,
      engineRps: { prefill: rawD, decode: rawP },
      gpu: { prefill: 1, decode: 1 },
    });
    expect(thr.decision).toBeNull();
    lowerBound = thr.lowerBound;
  }
  const load = advanceLoad({
    settings: s,
    mode: "disagg",
    workers: counts(cp, cd),
    fpmPrefill: idle(cp, 0),
    fpmDecode: idle(cd, 1000),
    caps: { prefill: caps(), decode: caps() },
    perf: { prefill: null, decode: null },
    kvHitRate: null,
    acceptLength: 1,
    lowerBound,
  });
  return { lowerBound, load };
}

describe("mixed rows through advanceThroughput → advanceLoad", () => {
  it("mixed_scaling_funds_only_atomic_part_of_large_throughput_floor: LB (16,48), load (23,39) ⇒ (23,41)", () => {
    const { lowerBound, load } = pureRow({ current: [24, 40], raw: [8, 180] });
    expect(lowerBound).toEqual({ prefill: 16, decode: 48 });
    // Floors: (max(23,16), max(39,48)) = (23,48), total 71 > 64. The ceiling-only directional fit keeps
    // prefill's step down and funds decode only with the GPU it frees: (23,41), total 64.
    expect(load.decision).toEqual({ numPrefill: 23, numDecode: 41 });
    expect(load.reasonPrefill).toBe("scale_down");
    expect(load.reasonDecode).toBe("scale_up");
    expect(load.reason).toBe("scale_up");
  });

  it("capped_throughput_floor_preserves_floor_guard_without_oscillation: (27,36)→(8,8) ⇒ LB (19,28); load (26,35) ⇒ None, hold", () => {
    const { lowerBound, load } = pureRow({ current: [27, 36], raw: [8, 8] });
    // Cap 8 relative to the current counts: (27−8, 36−8). The 64-GPU floor does not inflate it.
    expect(lowerBound).toEqual({ prefill: 19, decode: 28 });
    // 63 GPUs ≤ the 64 floor and both roles only step down: held, no oscillation below the floor.
    expect(load.decision).toBeNull();
    expect(load.reason).toBe("gpu_budget_guard_hold");
  });

  it("mixed_endpoint_recovery_can_select_budget_donor: LB (30,34), load ⇒ (30,34) gpu_budget_reconcile", () => {
    const { lowerBound, load } = pureRow({ current: [24, 40], raw: [8, 180], pmin: 30, dmin: 8 });
    expect(lowerBound).toEqual({ prefill: 30, decode: 34 });
    // Prefill 24 < its minimum 30: endpoint recovery picks decode as the donor under the 64-GPU band.
    expect(load.decision).toEqual({ numPrefill: 30, numDecode: 34 });
    expect(load.reason).toBe("gpu_budget_reconcile");
  });

  it("load_only_endpoint_recovery_can_select_budget_donor: no LB, load ⇒ (30,34) gpu_budget_reconcile", () => {
    const { lowerBound, load } = pureRow({ current: [24, 40], raw: null, pmin: 30, dmin: 8 });
    expect(lowerBound).toBeNull();
    expect(load.decision).toEqual({ numPrefill: 30, numDecode: 34 });
    expect(load.reason).toBe("gpu_budget_reconcile");
  });

  it("without the lower bound the same load proposal (23,39) is a plain scale-down (the LB is what lifts decode)", () => {
    // Sanity check of the harness: the idle FPMs alone propose (23,39) — held at the 64-GPU floor.
    const s = settings({ enableThroughputScaling: false });
    const load = advanceLoad({
      settings: { ...s, minGpuBudget: -1 },
      mode: "disagg",
      workers: counts(24, 40),
      fpmPrefill: idle(24, 0),
      fpmDecode: idle(40, 1000),
      caps: { prefill: caps(), decode: caps() },
      perf: { prefill: null, decode: null },
      kvHitRate: null,
      acceptLength: 1,
      lowerBound: null,
    });
    expect(load.decision).toEqual({ numPrefill: 23, numDecode: 39 });
    expect(load.reason).toBe("scale_down");
  });
});

// ---------------------------------------------------------------------------------------------------
// Harness 2: one combined PlannerCore tick with a 1-second-per-pass perf model.
// ---------------------------------------------------------------------------------------------------

/**
 * Perf models that price every pass at exactly 1 s. (A regression cannot stand in: the
 * reference's fit is not ready on passes that all take the same time, an intercept-only plane.)
 */
function oneSecondPerfModels(): { prefill: PlanePerfModel; decode: PlanePerfModel } {
  return {
    prefill: new PlanePerfModel("prefill", { intercept: 1 }),
    decode: new PlanePerfModel("decode", { intercept: 1 }),
  };
}

const ISL = 100;
const OSL = 2;
/** 360 req/s: prefill engine 45 rps (MBT 4500 / isl 100, one 1-s pass) ⇒ 8 replicas. */
const DEMAND_RPS = 360;
/** 180 s of traffic at DEMAND_RPS, ISL/OSL as above, no KV hit rate, no speculation. */
const TRAFFIC_180S = {
  durationS: 180,
  numReq: DEMAND_RPS * 180,
  isl: ISL,
  osl: OSL,
  kvHitRate: null,
  acceptLength: 1,
};

function coreRow(
  row: Row,
  /** Decode max batch: demand 360 / (batch / osl 2) = raw decode replicas. */
  decodeMaxSeqs: number,
  target: PlannerTarget = "sla",
) {
  const s = settings({
    optimizationTarget: target,
    enableThroughputScaling: row.raw !== null,
    prefillMinEndpoint: row.pmin ?? null,
    decodeMinEndpoint: row.dmin ?? null,
  });
  const core = new PlannerCore({
    settings: s,
    caps: { prefill: caps(), decode: caps({ maxNumSeqs: decodeMaxSeqs }) },
    bootstrap: null,
    perfModels: oneSecondPerfModels(),
    warmup: null,
  });
  const [cp, cd] = row.current;
  const nowS = 180;
  const scheduled = core.schedule(nowS);
  expect(scheduled.runLoadScaling).toBe(true);
  expect(scheduled.runThroughputScaling).toBe(row.raw !== null);
  return core.tick({
    nowS,
    traffic: row.raw === null ? null : TRAFFIC_180S,
    workers: counts(cp, cd),
    fpmPrefill: idle(cp, 0),
    fpmDecode: idle(cd, 1000),
  });
}

describe("mixed rows through one combined PlannerCore.tick (SLA target, 1 s per pass)", () => {
  it("mixed_scaling_funds_only_atomic_part_of_large_throughput_floor ⇒ LB (16,48), decision (23,41)", () => {
    // Decode: 4 sequences / osl 2 = 2 rps per engine ⇒ 180 replicas; prefill 45 rps ⇒ 8.
    const out = coreRow({ current: [24, 40], raw: [8, 180] }, 4);
    expect(out.diagnostics.engineRpsPrefill).toBe(45);
    expect(out.diagnostics.engineRpsDecode).toBe(2);
    expect(out.diagnostics.predictedNumReq).toBe(DEMAND_RPS * 180);
    expect(out.diagnostics.throughputDecisionReason).toBe("set_lower_bound");
    expect(out.diagnostics.throughputLowerBoundPrefill).toBe(16);
    expect(out.diagnostics.throughputLowerBoundDecode).toBe(48);
    // Idle engines step down by one without asking the perf model ⇒ (23,39), no estimates.
    expect(out.diagnostics.estimatedTtftMs).toBeNull();
    expect(out.diagnostics.estimatedItlMs).toBeNull();
    expect(out.diagnostics.loadMetadataAvailable).toEqual({});
    expect(out.diagnostics.throughputMetadataAvailable).toEqual({ prefill: true, decode: true });
    expect(out.scaleTo).toEqual({ numPrefill: 23, numDecode: 41 });
    expect(out.diagnostics.loadDecisionReason).toBe("scale_up");
  });

  it("capped_throughput_floor_preserves_floor_guard_without_oscillation ⇒ LB (19,28), None, hold", () => {
    // Decode: 90 sequences / osl 2 = 45 rps ⇒ 8 replicas, like prefill.
    const out = coreRow({ current: [27, 36], raw: [8, 8] }, 90);
    expect(out.diagnostics.engineRpsDecode).toBe(45);
    expect(out.diagnostics.throughputLowerBoundPrefill).toBe(19);
    expect(out.diagnostics.throughputLowerBoundDecode).toBe(28);
    expect(out.scaleTo).toBeNull();
    expect(out.diagnostics.loadDecisionReason).toBe("gpu_budget_guard_hold");
  });

  it("mixed_endpoint_recovery_can_select_budget_donor ⇒ LB (30,34), decision (30,34) gpu_budget_reconcile", () => {
    const out = coreRow({ current: [24, 40], raw: [8, 180], pmin: 30, dmin: 8 }, 4);
    expect(out.diagnostics.throughputLowerBoundPrefill).toBe(30);
    expect(out.diagnostics.throughputLowerBoundDecode).toBe(34);
    expect(out.scaleTo).toEqual({ numPrefill: 30, numDecode: 34 });
    expect(out.diagnostics.loadDecisionReason).toBe("gpu_budget_reconcile");
  });

  it("load_only_endpoint_recovery_can_select_budget_donor ⇒ (30,34) gpu_budget_reconcile", () => {
    const out = coreRow({ current: [24, 40], raw: null, pmin: 30, dmin: 8 }, 4);
    expect(out.diagnostics.throughputDecisionReason).toBeUndefined();
    expect(out.scaleTo).toEqual({ numPrefill: 30, numDecode: 34 });
    expect(out.diagnostics.loadDecisionReason).toBe("gpu_budget_reconcile");
  });

  it("the lower bound persists: a later load-only tick of the same core is still floored by it", () => {
    const s = settings({ optimizationTarget: "sla" });
    const core = new PlannerCore({
      settings: s,
      caps: { prefill: caps(), decode: caps({ maxNumSeqs: 4 }) },
      bootstrap: null,
      perfModels: oneSecondPerfModels(),
      warmup: null,
    });
    const traffic = TRAFFIC_180S;
    const first = core.tick({
      nowS: 180,
      traffic,
      workers: counts(24, 40),
      fpmPrefill: idle(24, 0),
      fpmDecode: idle(40, 1000),
    });
    expect(first.scaleTo).toEqual({ numPrefill: 23, numDecode: 41 });
    // 185 s: load only. Now at (23,41): the LB (16,48) still lifts decode's proposal 40 back to 48; the
    // opposing rebalance moves prefill 23→22 and funds decode 41→42.
    expect(core.schedule(185)).toMatchObject({ runLoadScaling: true, runThroughputScaling: false });
    const second = core.tick({
      nowS: 185,
      traffic: null,
      workers: counts(23, 41),
      fpmPrefill: idle(23, 0),
      fpmDecode: idle(41, 1000),
    });
    // The lower bound is state: a load-only tick reports the one the throughput tick set.
    expect(second.diagnostics.throughputLowerBoundDecode).toBe(48);
    expect(second.scaleTo).toEqual({ numPrefill: 22, numDecode: 42 });
  });
});
