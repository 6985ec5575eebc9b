/**
 * Easy-target load scaling: a port of upstream `unit/test_easy_scaling.py` (`ai-dynamo/dynamo@1ca6015:components/src/dynamo/planner/tests/unit/test_easy_scaling.py`; context
 * 4096, max_kv 100 000, MBT 2048), plus the `load` target and the gates of `ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`. Upstream's prefill- and
 * decode-only modes are exercised through the matching role of a disaggregated deployment whose other
 * role reports no FPM (it then keeps its count).
 */
import { describe, expect, it } from "vitest";
import { advanceLoad, type LoadInputs, type LoadOutcome } from "../../src/planner/loadScaling/index.js";
import type {
  EngineCapabilities,
  ForwardPassMetrics,
  PlannerSettings,
  PlannerTarget,
} from "../../src/planner/types.js";
import { engineCaps, forwardPass, plannerSettings, workerCounts } from "../helpers/planner.js";

const CONTEXT_LENGTH = 4096;
const MAX_KV_TOKENS = 100_000;

function settings(target: PlannerTarget, over: Partial<PlannerSettings> = {}): PlannerSettings {
  const load = target === "load";
  return plannerSettings({
    optimizationTarget: target,
    maxNumFpmSamples: 50,
    prefillScaleUpQueueTokens: load ? 1 : null,
    prefillScaleDownQueueTokens: load ? 0 : null,
    decodeScaleUpKvRate: load ? 90 : null,
    decodeScaleDownKvRate: load ? 70 : null,
    advisory: true,
    ...over,
  });
}

function caps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return engineCaps({ contextLength: CONTEXT_LENGTH, maxKvTokens: MAX_KV_TOKENS, ...over });
}

function fpm(workerId: number, f: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
  return forwardPass(workerId, { wallTimeS: 0.01, ...f });
}

const workers = workerCounts;

function base(s: PlannerSettings): Omit<LoadInputs, "workers" | "fpmPrefill" | "fpmDecode"> {
  return {
    settings: s,
    mode: s.mode,
    caps: { prefill: caps(), decode: caps() },
    perf: { prefill: null, decode: null },
    kvHitRate: null,
    acceptLength: 1,
    lowerBound: null,
  };
}

/** Upstream prefill-only mode: one prefill FPM per queue length, one idle decode worker without FPM. */
function prefillTick(target: PlannerTarget, queued: number[], over: Partial<LoadInputs> = {}): LoadOutcome {
  const s = settings(target);
  return advanceLoad({
    ...base(s),
    workers: workers(queued.length, 1),
    fpmPrefill: queued.map((q, i) => fpm(i, { sumQueuedPrefillTokens: q })),
    fpmDecode: null,
    ...over,
  });
}

/** Upstream decode-only mode: `[scheduled KV, queued KV]` per decode worker. */
function decodeTick(
  target: PlannerTarget,
  kv: [number, number][],
  over: Partial<LoadInputs> = {},
): LoadOutcome {
  const s = settings(target);
  return advanceLoad({
    ...base(s),
    workers: workers(1, kv.length),
    fpmPrefill: null,
    fpmDecode: kv.map(([sched, queued], i) =>
      fpm(i, { sumDecodeKvTokens: sched, sumQueuedDecodeKvTokens: queued }),
    ),
    ...over,
  });
}

/** Agg pool: `[scheduled KV, queued KV, queued prompt tokens]` per worker. */
function aggTick(
  target: PlannerTarget,
  kv: [number, number, number][],
  over: Partial<PlannerSettings> = {},
  aggCaps: EngineCapabilities = caps(),
): LoadOutcome {
  const s = settings(target, { mode: "agg", ...over });
  return advanceLoad({
    ...base(s),
    caps: { prefill: null, decode: aggCaps },
    workers: workers(null, kv.length),
    fpmPrefill: null,
    fpmDecode: kv.map(([sched, queued, qp], i) =>
      fpm(i, { sumDecodeKvTokens: sched, sumQueuedDecodeKvTokens: queued, sumQueuedPrefillTokens: qp }),
    ),
  });
}

describe("prefill, throughput target (queued / context_length: up ≥ 1.0, down < 0.1)", () => {
  it("scales up at queued = context_length", () => {
    const out = prefillTick("throughput", [CONTEXT_LENGTH]);
    expect(out.decision).toEqual({ numPrefill: 2, numDecode: 1 });
    expect(out.reason).toBe("scale_up");
    expect(out.reasonPrefill).toBe("scale_up");
    expect(out.reasonDecode).toBe("no_change");
  });
  it("holds between thresholds (2048 each at N=2)", () => {
    const out = prefillTick("throughput", [2048, 2048]);
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
  });
  it("scales down when all are below a tenth (204 each at N=2)", () => {
    const out = prefillTick("throughput", [204, 204]);
    expect(out.decision?.numPrefill).toBe(1);
    expect(out.reason).toBe("scale_down");
  });
  it("never scales below one worker", () => {
    expect(prefillTick("throughput", [0]).decision).toBeNull();
  });
});

describe("prefill, latency target (up ≥ 0.1, down only when every queue is empty)", () => {
  it("scales up at a tenth of the context", () => {
    expect(prefillTick("latency", [410]).decision?.numPrefill).toBe(2);
  });
  it("scales down when all queues are empty", () => {
    expect(prefillTick("latency", [0, 0]).decision?.numPrefill).toBe(1);
  });
  it("holds with any queued token", () => {
    expect(prefillTick("latency", [10, 10]).decision).toBeNull();
  });
});

describe("decode, throughput target ((sched + queued KV) / max_kv: up > 1.0, down < 0.6)", () => {
  it("scales up at 110 %", () => {
    const out = decodeTick("throughput", [[80_000, 30_000]]);
    expect(out.decision).toEqual({ numPrefill: 1, numDecode: 2 });
    expect(out.reason).toBe("scale_up");
  });
  it("scales down at 40 % each", () => {
    const out = decodeTick("throughput", [
      [40_000, 0],
      [40_000, 0],
    ]);
    expect(out.decision?.numDecode).toBe(1);
    expect(out.reason).toBe("scale_down");
  });
  it("holds at 70 %", () => {
    const out = decodeTick("throughput", [
      [70_000, 0],
      [70_000, 0],
    ]);
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
  });
});

describe("decode, latency target (up > 0.4, down < 0.1)", () => {
  it("scales up at 45 %", () => {
    expect(decodeTick("latency", [[45_000, 0]]).decision?.numDecode).toBe(2);
  });
  it("scales down at 5 % each", () => {
    const kv: [number, number][] = [
      [5000, 0],
      [5000, 0],
    ];
    expect(decodeTick("latency", kv).decision?.numDecode).toBe(1);
  });
});

describe("ANY engine up, ALL engines down", () => {
  it("one hot engine at N=2 → 3", () => {
    const kv: [number, number][] = [
      [50_000, 0],
      [80_000, 30_000],
    ];
    expect(decodeTick("throughput", kv).decision?.numDecode).toBe(3);
  });
  it("mixed 0.2 / 0.7 → no change", () => {
    const kv: [number, number][] = [
      [20_000, 0],
      [70_000, 0],
    ];
    expect(decodeTick("throughput", kv).decision).toBeNull();
  });
  it("all below at N=3 → 2", () => {
    const kv: [number, number][] = [
      [20_000, 0],
      [30_000, 0],
      [25_000, 0],
    ];
    expect(decodeTick("throughput", kv).decision?.numDecode).toBe(2);
  });
});

describe("disagg, both roles reporting", () => {
  const tick = (pQueued: number, dKv: [number, number]) =>
    advanceLoad({
      ...base(settings("throughput")),
      workers: workers(1, 1),
      fpmPrefill: [fpm(0, { sumQueuedPrefillTokens: pQueued })],
      fpmDecode: [fpm(0, { sumDecodeKvTokens: dKv[0], sumQueuedDecodeKvTokens: dKv[1] })],
    });
  it("scales prefill up", () => {
    expect(tick(CONTEXT_LENGTH, [50_000, 0]).decision).toEqual({ numPrefill: 2, numDecode: 1 });
  });
  it("scales decode up", () => {
    expect(tick(0, [80_000, 30_000]).decision).toEqual({ numPrefill: 1, numDecode: 2 });
  });
});

describe("agg (queued prompts count as KV pressure)", () => {
  it("scales up decode-heavy at 110 %", () => {
    const out = aggTick("throughput", [[80_000, 30_000, 0]]);
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 2 });
    expect(out.reason).toBe("scale_up");
  });
  it("scales up prefill-heavy: (20 000 + 90 000 queued prompt) / 100 000", () => {
    expect(aggTick("throughput", [[20_000, 0, 90_000]]).decision?.numDecode).toBe(2);
  });
  it("scales down at 30 % each", () => {
    const out = aggTick("throughput", [
      [30_000, 0, 0],
      [30_000, 0, 0],
    ]);
    expect(out.decision?.numDecode).toBe(1);
    expect(out.reason).toBe("scale_down");
  });
});

describe("missing capabilities → insufficient_data", () => {
  it("prefill without context_length", () => {
    const out = prefillTick("throughput", [10_000], {
      caps: { prefill: caps({ contextLength: 0 }), decode: caps() },
    });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("insufficient_data");
    expect(out.reasonPrefill).toBe("insufficient_data");
  });
  it("decode without max_kv_tokens", () => {
    const out = decodeTick("throughput", [[80_000, 30_000]], {
      caps: { prefill: caps(), decode: caps({ maxKvTokens: 0 }) },
    });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("insufficient_data");
  });
  it("agg without max_kv_tokens", () => {
    expect(aggTick("throughput", [[80_000, 30_000, 0]], {}, caps({ maxKvTokens: 0 })).reason).toBe(
      "insufficient_data",
    );
  });
});

describe("load target (user thresholds, inclusive: prefill 1 / 0 tokens, decode 90 % / 70 %)", () => {
  it("prefill: any queued token scales up, all-empty scales down", () => {
    expect(prefillTick("load", [1]).decision?.numPrefill).toBe(2);
    expect(prefillTick("load", [0, 0]).decision?.numPrefill).toBe(1);
    expect(prefillTick("load", [0, 1]).decision?.numPrefill).toBe(3);
  });
  it("decode: 90 % scales up, 70 % each scales down, 80 % holds", () => {
    expect(decodeTick("load", [[90_000, 0]]).decision?.numDecode).toBe(2);
    const down: [number, number][] = [
      [70_000, 0],
      [60_000, 0],
    ];
    expect(decodeTick("load", down).decision?.numDecode).toBe(1);
    const hold: [number, number][] = [
      [80_000, 0],
      [60_000, 0],
    ];
    expect(decodeTick("load", hold).decision).toBeNull();
  });
  it("missing thresholds → insufficient_data", () => {
    const s = settings("load", { prefillScaleUpQueueTokens: null });
    const out = prefillTick("load", [5], { settings: s });
    expect(out.reason).toBe("insufficient_data");
  });
});

describe("gates (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`)", () => {
  it("disabled", () => {
    const out = prefillTick("throughput", [CONTEXT_LENGTH], {
      settings: settings("sla", { enableLoadScaling: false }),
    });
    expect(out).toMatchObject({ decision: null, reason: "disabled" });
  });
  it("scaling_in_progress when expected ≠ ready, or the adapter says so", () => {
    const out = prefillTick("throughput", [2 * CONTEXT_LENGTH], {
      workers: workers(1, 1, { expectedPrefill: 2 }),
    });
    expect(out).toMatchObject({ decision: null, reason: "scaling_in_progress" });
    expect(out.reasonPrefill).toBe("scaling_in_progress");
    const agg = advanceLoad({
      ...base(settings("throughput", { mode: "agg" })),
      workers: workers(null, 1, { decodeScalingInProgress: true }),
      fpmPrefill: null,
      fpmDecode: [fpm(0, { sumDecodeKvTokens: 200_000 })],
    });
    expect(agg.reason).toBe("scaling_in_progress");
  });
  it("no_fpm_data", () => {
    const out = prefillTick("throughput", [], { workers: workers(1, 1) });
    expect(out).toMatchObject({ decision: null, reason: "no_fpm_data", reasonDecode: "no_fpm_data" });
  });
  it("worker_count_mismatch: missing worker, uneven DP ranks, duplicate rank", () => {
    expect(prefillTick("throughput", [CONTEXT_LENGTH], { workers: workers(2, 1) }).reason).toBe(
      "worker_count_mismatch",
    );
    const uneven = [fpm(0), fpm(0, { dpRank: 1 }), fpm(1)];
    expect(prefillTick("throughput", [], { workers: workers(2, 1), fpmPrefill: uneven }).reason).toBe(
      "worker_count_mismatch",
    );
    const dup = [fpm(0), fpm(0), fpm(1), fpm(1, { dpRank: 1 })];
    expect(prefillTick("throughput", [], { workers: workers(2, 1), fpmPrefill: dup }).reason).toBe(
      "worker_count_mismatch",
    );
    const dp2 = [fpm(0), fpm(0, { dpRank: 1 }), fpm(1), fpm(1, { dpRank: 1, sumQueuedPrefillTokens: 5000 })];
    expect(
      prefillTick("throughput", [], { workers: workers(2, 1), fpmPrefill: dp2 }).decision?.numPrefill,
    ).toBe(3);
  });
});

describe("floors and budget", () => {
  it("min_endpoint 2 blocks the scale-down", () => {
    const out = prefillTick("throughput", [0, 0], {
      settings: settings("throughput", { minEndpoint: 2 }),
      workers: workers(2, 2),
    });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
  });
  it("a role's own min_endpoint applies to that role", () => {
    const s = settings("throughput", { prefillMinEndpoint: 2 });
    expect(prefillTick("throughput", [0, 0, 0], { settings: s }).decision?.numPrefill).toBe(2);
    expect(prefillTick("throughput", [0, 0], { settings: s }).decision).toBeNull();
  });
  it("a 4-GPU replica at a 4-GPU ceiling is held (gpu_budget_guard_hold)", () => {
    const out = aggTick(
      "throughput",
      [[80_000, 30_000, 0]],
      { maxGpuBudget: 4 },
      caps({ numGpu: 4, gpuCostPerReplica: 4 }),
    );
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("gpu_budget_guard_hold");
  });
  it("disagg at the ceiling holds a one-sided scale-up", () => {
    const out = prefillTick("throughput", [CONTEXT_LENGTH], {
      settings: settings("throughput", { maxGpuBudget: 2 }),
    });
    expect(out).toMatchObject({
      decision: null,
      reason: "gpu_budget_guard_hold",
      reasonPrefill: "no_change",
    });
  });
  it("a pool below its endpoint minimum is reconciled", () => {
    const out = prefillTick("throughput", [2048], {
      settings: settings("throughput", { prefillMinEndpoint: 2 }),
    });
    expect(out.decision).toEqual({ numPrefill: 2, numDecode: 1 });
    expect(out.reason).toBe("gpu_budget_reconcile");
  });
  it("a throughput lower bound lifts an easy scale-down (reported as capped by throughput)", () => {
    const out = prefillTick("throughput", [204, 204], { lowerBound: { prefill: 2, decode: 1 } });
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("scale_down_capped_by_throughput");
    const up = prefillTick("throughput", [2048], { lowerBound: { prefill: 3, decode: 1 } });
    expect(up.decision).toEqual({ numPrefill: 3, numDecode: 1 });
    expect(up.reason).toBe("scale_up");
  });
});
