/**
 * The throughput (slow, predictive) loop of the Planner (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py`, `ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`): turn predicted demand and
 * per-engine capacity into replica targets, bound each observation's change, fit the hard GPU ceiling,
 * and either persist a lower bound for the load loop or emit a budget-guarded decision.
 *
 * Pure: the caller owns prediction, the perf models and the persisted bounds, and passes the current
 * ready counts in. Re-running the same observation therefore yields the same bound (the cap is relative
 * to the current ready count, never to the previous bound).
 */

import { fitPairUnderCeiling, guardPairBudget, guardSingleScalingBudget } from "./budget.js";
import { resolveMinEndpoint } from "./loadScaling/types.js";
import type { CapacityRequest, CapacityRole, EngineCapacity } from "./throughputCapacity.js";
import type { PlannerMode, PlannerSettings, ScalingDecision } from "./types.js";

export {
  type CapacityRequest,
  type CapacityRole,
  type EngineCapacity,
  findEngineCapacityRps,
} from "./throughputCapacity.js";

export type ThroughputReason =
  | "scale"
  | "set_lower_bound"
  | "model_not_ready"
  | "partner_not_ready"
  | "gpu_budget_guard_hold"
  | "gpu_budget_reconcile"
  | "no_change"
  | "disabled"
  | "no_traffic_data"
  | "predict_failed";

/** The settings the throughput loop reads; a full PlannerSettings fits. */
export type ThroughputSettings = Pick<
  PlannerSettings,
  | "enableThroughputScaling"
  | "enableLoadScaling"
  | "maxThroughputScalingReplicas"
  | "maxGpuBudget"
  | "minGpuBudget"
  | "minEndpoint"
  | "prefillMinEndpoint"
  | "decodeMinEndpoint"
>;

export interface ThroughputInputs {
  readonly settings: ThroughputSettings;
  /** `agg` sizes the one pool kept in the decode fields. */
  readonly mode: PlannerMode;
  /** Current ready replicas; a null prefill count (not yet observed) counts as 0. */
  readonly current: { readonly prefill: number | null; readonly decode: number };
  /** Predicted requests per second; null ⇒ no_traffic_data (see `demandRps`). */
  readonly demandRps: number | null;
  /** Per-engine capacity (agg: `decode`); null or ≤ 0 ⇒ model_not_ready. */
  readonly engineRps: { readonly prefill: number | null; readonly decode: number | null };
  /** Budget cost per replica (`gpuCostPerReplica ?? numGpu`); ≤ 0 disables the budget for that pool. */
  readonly gpu: { readonly prefill: number; readonly decode: number };
  /** The load predictor threw ⇒ predict_failed (takes precedence over a missing demand). */
  readonly predictFailed?: boolean;
}

export interface ReplicaPair {
  readonly prefill: number | null;
  readonly decode: number | null;
}

export interface ThroughputOutcome {
  /** Absolute targets to actuate; null when nothing changes or load scaling is on. */
  readonly decision: ScalingDecision | null;
  /** New throughput lower bounds (load scaling on only; agg fills `decode`); null = leave unchanged. */
  readonly lowerBound: ReplicaPair | null;
  /** Per-role reasons (disagg only, as upstream). */
  readonly reasonPrefill: ThroughputReason | null;
  readonly reasonDecode: ThroughputReason | null;
  readonly reason: ThroughputReason;
}

/** Predicted requests over the window's duration; null (no_traffic_data) for a non-positive duration. */
export function demandRps(predictedNumReq: number, durationS: number): number | null {
  if (!(durationS > 0) || !Number.isFinite(predictedNumReq)) return null;
  return predictedNumReq / durationS;
}

/** The capacity a throughput decision may use: any positive rate, eligible or not, as `ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py` does. */
export function engineRpsOf(capacity: EngineCapacity | null): number | null {
  return capacity !== null && capacity.rps > 0 && Number.isFinite(capacity.rps) ? capacity.rps : null;
}

/**
 * Accept length for the decode/agg capacity search: the last observed value clamped to
 * [1, nextn + 1], where the worker's speculative depth wins over the configured one; 1 without
 * speculative decoding or without a usable observation.
 */
export function resolveAcceptLength(last: number | null, capsNextn: number, settingsNextn: number): number {
  const nextn = capsNextn > 0 ? capsNextn : Math.max(0, Math.trunc(settingsNextn));
  if (nextn <= 0 || last === null || !Number.isFinite(last)) return 1;
  return Math.min(Math.max(last, 1), nextn + 1);
}

/**
 * The capacity request a role's search gets: prefill is judged on TTFT only (accept length 1), decode
 * on ITL only, agg on both.
 */
export function capacityRequestFor(
  role: CapacityRole,
  settings: Pick<PlannerSettings, "ttftMs" | "itlMs">,
  shape: {
    readonly isl: number;
    readonly osl: number;
    readonly kvHitRate: number | null;
    readonly acceptLength: number;
  },
): CapacityRequest {
  return {
    isl: shape.isl,
    osl: shape.osl,
    kvHitRate: shape.kvHitRate,
    ttftS: role === "decode" ? null : settings.ttftMs / 1000,
    itlS: role === "prefill" ? null : settings.itlMs / 1000,
    acceptLength: role === "prefill" ? 1 : shape.acceptLength,
  };
}

/** `max(ceil(demand / engine), min)`, or null when the engine capacity is unknown (model_not_ready). */
export function rawReplicas(demand: number, engineRps: number | null, minEndpoint: number): number | null {
  if (engineRps === null || !(engineRps > 0) || !Number.isFinite(engineRps)) return null;
  return Math.max(Math.ceil(demand / engineRps), minEndpoint);
}

/** Bound one observation's change to ±cap around the CURRENT ready count (never below 0). */
export function capThroughputReplicas(desired: number, current: number, cap: number): number {
  return Math.min(Math.max(desired, Math.max(0, current - cap)), current + cap);
}

/** One throughput observation (`ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`). */
export function advanceThroughput(inputs: ThroughputInputs): ThroughputOutcome {
  const { settings, demandRps: demand } = inputs;
  if (!settings.enableThroughputScaling) return skipped("disabled");
  if (inputs.predictFailed) return skipped("predict_failed");
  if (demand === null || !Number.isFinite(demand)) return skipped("no_traffic_data");
  return inputs.mode === "disagg" ? advanceDisagg(inputs, demand) : advanceSingle(inputs, demand);
}

function skipped(reason: ThroughputReason): ThroughputOutcome {
  return { decision: null, lowerBound: null, reasonPrefill: null, reasonDecode: null, reason };
}

/** Agg (and, by the same rules, a single decode pool). */
function advanceSingle(inputs: ThroughputInputs, demand: number): ThroughputOutcome {
  const { settings } = inputs;
  const current = inputs.current.decode;
  const gpu = inputs.gpu.decode;
  const minEp = resolveMinEndpoint(settings, "decode");
  const raw = rawReplicas(demand, inputs.engineRps.decode, minEp);
  const notReady = raw === null;

  // Not ready ⇒ hold at current, but the endpoint floor still applies; endpoint recovery may exceed the cap.
  let desired = capThroughputReplicas(raw ?? current, current, settings.maxThroughputScalingReplicas);
  desired = Math.max(desired, minEp);
  const ceiling = guardSingleScalingBudget(current, desired, gpu, -1, settings.maxGpuBudget, minEp);
  desired = ceiling.value;

  if (settings.enableLoadScaling) {
    const reason: ThroughputReason = notReady
      ? "model_not_ready"
      : ceiling.reason === "gpu_budget_guard_hold"
        ? "gpu_budget_guard_hold"
        : "set_lower_bound";
    return single(null, { prefill: null, decode: desired }, reason);
  }

  const guarded = guardSingleScalingBudget(
    current,
    desired,
    gpu,
    settings.minGpuBudget,
    settings.maxGpuBudget,
    minEp,
  );
  if (guarded.value === current) {
    return single(
      null,
      null,
      notReady ? "model_not_ready" : (guarded.reason ?? ceiling.reason ?? "no_change"),
    );
  }
  return single({ numPrefill: null, numDecode: guarded.value }, null, notReady ? "model_not_ready" : "scale");
}

function single(
  decision: ScalingDecision | null,
  lowerBound: ReplicaPair | null,
  reason: ThroughputReason,
): ThroughputOutcome {
  return { decision, lowerBound, reasonPrefill: null, reasonDecode: null, reason };
}

function advanceDisagg(inputs: ThroughputInputs, demand: number): ThroughputOutcome {
  const { settings } = inputs;
  const current: [number, number] = [inputs.current.prefill ?? 0, inputs.current.decode];
  const gpu: [number, number] = [inputs.gpu.prefill, inputs.gpu.decode];
  const mins: [number, number] = [
    resolveMinEndpoint(settings, "prefill"),
    resolveMinEndpoint(settings, "decode"),
  ];
  const rawP = rawReplicas(demand, inputs.engineRps.prefill, mins[0]);
  const rawD = rawReplicas(demand, inputs.engineRps.decode, mins[1]);

  // If either side cannot be sized, both hold: acting on the ready side alone would move a tick the perf
  // model cannot size. The ready side is labelled partner_not_ready.
  const notReady = rawP === null || rawD === null;
  let reasonP: ThroughputReason;
  let reasonD: ThroughputReason;
  let target: [number, number];
  if (rawP === null || rawD === null) {
    reasonP = rawP === null ? "model_not_ready" : "partner_not_ready";
    reasonD = rawD === null ? "model_not_ready" : "partner_not_ready";
    target = [current[0], current[1]];
  } else {
    reasonP = reasonD = settings.enableLoadScaling ? "set_lower_bound" : "scale";
    target = [rawP, rawD];
  }

  const cap = settings.maxThroughputScalingReplicas;
  const bounded: [number, number] = [
    Math.max(capThroughputReplicas(target[0], current[0], cap), mins[0]),
    Math.max(capThroughputReplicas(target[1], current[1], cap), mins[1]),
  ];
  const fitted = fitPairUnderCeiling(current, bounded, gpu, settings.maxGpuBudget, mins);
  // The ceiling alone turned a wanted move into no move at all.
  const budgetHeld = samePair(fitted, current) && !samePair(bounded, current);

  if (settings.enableLoadScaling) {
    const lowerBound = { prefill: fitted[0], decode: fitted[1] };
    if (notReady) return disagg(null, lowerBound, reasonP, reasonD, "model_not_ready");
    if (budgetHeld) {
      return disagg(
        null,
        lowerBound,
        "gpu_budget_guard_hold",
        "gpu_budget_guard_hold",
        "gpu_budget_guard_hold",
      );
    }
    return disagg(null, lowerBound, reasonP, reasonD, "set_lower_bound");
  }

  const guarded = guardPairBudget(current, fitted, gpu, [settings.minGpuBudget, settings.maxGpuBudget], mins);
  const [np, nd] = guarded.value;
  if (np === current[0] && nd === current[1]) {
    // Keep the not-ready per-role reasons: relabelling them would hide why the tick held.
    if (notReady) return disagg(null, null, reasonP, reasonD, "model_not_ready");
    const hold: ThroughputReason = guarded.reason ?? (budgetHeld ? "gpu_budget_guard_hold" : "no_change");
    return disagg(null, null, hold, hold, hold);
  }
  return disagg(
    { numPrefill: np, numDecode: nd },
    null,
    reasonP,
    reasonD,
    notReady ? "model_not_ready" : "scale",
  );
}

function disagg(
  decision: ScalingDecision | null,
  lowerBound: ReplicaPair | null,
  reasonPrefill: ThroughputReason,
  reasonDecode: ThroughputReason,
  reason: ThroughputReason,
): ThroughputOutcome {
  return { decision, lowerBound, reasonPrefill, reasonDecode, reason };
}

function samePair(a: readonly [number, number], b: readonly [number, number]): boolean {
  return a[0] === b[0] && a[1] === b[1];
}
