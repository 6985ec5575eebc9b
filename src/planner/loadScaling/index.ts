/**
 * The reactive load-scaling loop of the Dynamo Planner (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`) as pure
 * functions: gates, then per-role ±1 decisions from static thresholds or perf-model
 * estimates vs SLA, then composition per mode with throughput floors and the GPU budget.
 */

import { type ForwardPassMetrics, isIdleFpm, type PlannerSettings, type WorkerCounts } from "../types.js";
import { applyDisaggScalingBudget, applySingleScalingBudget, fitDisaggThroughputCeiling } from "./budget.js";
import { decodeEasyDecision, prefillEasyDecision } from "./easy.js";
import {
  aggDecodeSlaDecision,
  aggPrefillSlaDecision,
  decodeSlaDecision,
  prefillSlaDecision,
  type SlaContext,
} from "./sla.js";
import {
  clampAcceptLength,
  type LoadInputs,
  type LoadOutcome,
  type LoadReason,
  type Role,
  type RoleDecision,
  type RoleFlags,
  resolveMinEndpoint,
  validEngineLimits,
} from "./types.js";

export * from "./types.js";

/** One load tick: `disabled`, else the mode's composition. */
export function advanceLoad(inputs: LoadInputs): LoadOutcome {
  if (!inputs.settings.enableLoadScaling) return quiet("disabled");
  return inputs.mode === "agg" ? advanceLoadAgg(inputs) : advanceLoadDisagg(inputs);
}

function quiet(reason: LoadReason, perRole = false, metadataAvailable: RoleFlags = {}): LoadOutcome {
  const roles = perRole ? { reasonPrefill: reason, reasonDecode: reason } : {};
  return { decision: null, reason, ...roles, estimatedTtftMs: null, estimatedItlMs: null, metadataAvailable };
}

/**
 * `_idle_sla_target`: under the SLA target, a pool whose every engine is idle steps down by one
 * (to at least 1 and its minimum endpoint) without asking the perf model, which has nothing to
 * price there (`dynamo/planner/core/load_scaling.py` in ai-dynamo 1.6.0.dev20261023). Null when the
 * target is not SLA or some engine has work.
 */
export function idleSlaTarget(
  s: PlannerSettings,
  fpms: readonly ForwardPassMetrics[],
  n: number,
  minEndpoint: number,
): number | null {
  if (s.optimizationTarget !== "sla" || fpms.length === 0 || !fpms.every(isIdleFpm)) return null;
  return Math.max(1, minEndpoint, n - 1);
}

/** An idle pool's step down: a target, no reason of its own, no estimate. */
function idleDecision(desired: number): RoleDecision {
  return { desired, reason: null, estimateMs: null };
}

function present(fpms: readonly ForwardPassMetrics[] | null): fpms is readonly ForwardPassMetrics[] {
  return fpms !== null && fpms.length > 0;
}

/** The adapter's in-flight flag, or a pool that has not yet reached its expected size. */
export function scalingInProgress(w: WorkerCounts, role: Role): boolean {
  if (role === "prefill") {
    return (
      w.prefillScalingInProgress ||
      (w.expectedPrefill !== null && w.expectedPrefill !== (w.readyPrefill ?? 0))
    );
  }
  return (
    w.decodeScalingInProgress || (w.expectedDecode !== null && w.expectedDecode !== (w.readyDecode ?? 0))
  );
}

/**
 * `_reconcile_fpm_worker_count`: the snapshot must cover exactly the ready workers, each with the same
 * number of DP ranks, one FPM per (worker, rank); otherwise estimates would be over a stale or partial
 * fleet.
 */
export function fpmMatchesWorkers(fpms: readonly ForwardPassMetrics[], count: number): boolean {
  const ranks = new Map<number, Set<number>>();
  for (const f of fpms) {
    const set = ranks.get(f.workerId);
    if (set === undefined) ranks.set(f.workerId, new Set([f.dpRank]));
    else set.add(f.dpRank);
  }
  if (ranks.size !== count) return false;
  const sizes = new Set([...ranks.values()].map((s) => s.size));
  if (sizes.size > 1) return false;
  const dpSize = sizes.size === 1 ? [...sizes][0] : 1;
  return fpms.length === count * dpSize;
}

function slaContext(inputs: LoadInputs, n: number, role: Role): SlaContext {
  return {
    settings: inputs.settings,
    n,
    minEndpoint: resolveMinEndpoint(inputs.settings, role),
    kvHitRate: inputs.kvHitRate,
    acceptLength: clampAcceptLength(inputs.acceptLength, inputs.settings, inputs.caps.decode),
    groupAttentionDp: inputs.groupAttentionDp ?? false,
  };
}

const PRIORITY: Partial<Record<LoadReason, number>> = {
  scale_up: 4,
  scale_down_capped_by_throughput: 3,
  scale_down: 2,
  no_change: 1,
};

/**
 * Only a throughput floor that lifted an actual scale-down counts as "capped by throughput"; later
 * min-endpoint or budget lifts do not.
 */
function roleReason(final: number, original: number, postFloor: number, current: number): LoadReason {
  const floorCapped = postFloor > original && original < current;
  if (final > current) return "scale_up";
  if (final < current) return floorCapped ? "scale_down_capped_by_throughput" : "scale_down";
  return floorCapped ? "scale_down_capped_by_throughput" : "no_change";
}

/**
 * Disaggregated prefill + decode: either role scaling freezes both (the other role's load is about to
 * shift). Each side decides alone; no opinion keeps the current count; then throughput floors, endpoint
 * minimums, the ceiling fit when a floor lifted anything, and the budget guard.
 */
export function advanceLoadDisagg(inputs: LoadInputs): LoadOutcome {
  const { settings: s, workers: w } = inputs;
  const pFpm = present(inputs.fpmPrefill) ? inputs.fpmPrefill : null;
  const dFpm = present(inputs.fpmDecode) ? inputs.fpmDecode : null;
  if (pFpm === null && dFpm === null) return quiet("no_fpm_data", true);
  if (scalingInProgress(w, "prefill") || scalingInProgress(w, "decode"))
    return quiet("scaling_in_progress", true);
  const nP = w.readyPrefill ?? 0;
  const nD = w.readyDecode ?? 0;
  if ((pFpm !== null && !fpmMatchesWorkers(pFpm, nP)) || (dFpm !== null && !fpmMatchesWorkers(dFpm, nD))) {
    return quiet("worker_count_mismatch", true);
  }

  const easy = s.optimizationTarget !== "sla";
  const pMin = resolveMinEndpoint(s, "prefill");
  const dMin = resolveMinEndpoint(s, "decode");
  const metadataAvailable: RoleFlags = {};
  let p: RoleDecision | null = null;
  if (pFpm !== null) {
    const idle = idleSlaTarget(s, pFpm, nP, pMin);
    if (idle !== null) p = idleDecision(idle);
    else if (easy) {
      const caps = inputs.caps.prefill;
      if (nP > 0)
        metadataAvailable.prefill = s.optimizationTarget === "load" || (caps?.contextLength ?? 0) > 0;
      p = prefillEasyDecision(s, caps, pFpm, nP, pMin);
    } else {
      metadataAvailable.prefill = validEngineLimits(inputs.caps.prefill);
      p = prefillSlaDecision(
        inputs.perf.prefill,
        inputs.caps.prefill,
        pFpm,
        slaContext(inputs, nP, "prefill"),
      );
    }
  }
  let d: RoleDecision | null = null;
  if (dFpm !== null) {
    const idle = idleSlaTarget(s, dFpm, nD, dMin);
    if (idle !== null) d = idleDecision(idle);
    else if (easy) {
      metadataAvailable.decode = inputs.caps.decode.maxKvTokens > 0;
      d = decodeEasyDecision(s, inputs.caps.decode, dFpm, nD, dMin, false);
    } else {
      metadataAvailable.decode = validEngineLimits(inputs.caps.decode);
      d = decodeSlaDecision(inputs.perf.decode, inputs.caps.decode, dFpm, slaContext(inputs, nD, "decode"));
    }
  }

  const originalP = p?.desired ?? nP;
  const originalD = d?.desired ?? nD;
  const lb = inputs.lowerBound;
  const floorP = Math.max(originalP, lb?.prefill ?? originalP);
  const floorD = Math.max(originalD, lb?.decode ?? originalD);
  let finalP = Math.max(floorP, pMin);
  let finalD = Math.max(floorD, dMin);
  const pools = {
    currentPrefill: nP,
    currentDecode: nD,
    prefillCaps: inputs.caps.prefill,
    decodeCaps: inputs.caps.decode,
    prefillMin: pMin,
    decodeMin: dMin,
  };
  if (lb !== null && (floorP > originalP || floorD > originalD)) {
    [finalP, finalD] = fitDisaggThroughputCeiling(s, pools, finalP, finalD);
  }
  const budget = applyDisaggScalingBudget(s, pools, finalP, finalD);
  [finalP, finalD] = budget.value;

  let reasonPrefill = roleReason(finalP, originalP, floorP, nP);
  let reasonDecode = roleReason(finalD, originalD, floorD, nD);
  const pick = (PRIORITY[reasonDecode] ?? 0) > (PRIORITY[reasonPrefill] ?? 0) ? reasonDecode : reasonPrefill;
  let reason: LoadReason = budget.reason ?? pick;
  const estimates = { estimatedTtftMs: p?.estimateMs ?? null, estimatedItlMs: d?.estimateMs ?? null };

  if (finalP === nP && finalD === nD) {
    // Surface why a side is stalled (e.g. prefill insufficient_data) instead of a blanket no_change.
    const pWhy = p?.reason ?? null;
    const dWhy = d?.reason ?? null;
    if (pWhy !== null && pWhy !== "no_change") reasonPrefill = pWhy;
    if (dWhy !== null && dWhy !== "no_change") reasonDecode = dWhy;
    if (budget.reason === null) {
      const informative = [pWhy, dWhy].find((r) => r !== null && r !== "no_change");
      if (informative !== undefined && informative !== null) reason = informative;
    }
    return { decision: null, reason, reasonPrefill, reasonDecode, ...estimates, metadataAvailable };
  }
  return {
    decision: { numPrefill: finalP, numDecode: finalD },
    reason,
    reasonPrefill,
    reasonDecode,
    ...estimates,
    metadataAvailable,
  };
}

/**
 * Aggregated pool: easy mode uses one combined KV-pressure signal; SLA mode combines a TTFT and an ITL
 * signal — any scale-up wins, a scale-down needs both (or decode alone when the prefill signal is
 * unavailable), and a consolidation veto from either side holds the pool.
 */
export function advanceLoadAgg(inputs: LoadInputs): LoadOutcome {
  const { settings: s, workers: w } = inputs;
  const fpms = present(inputs.fpmDecode) ? inputs.fpmDecode : null;
  if (fpms === null) return quiet("no_fpm_data");
  const n = w.readyDecode ?? 0;
  if (scalingInProgress(w, "decode")) return quiet("scaling_in_progress");
  if (!fpmMatchesWorkers(fpms, n)) return quiet("worker_count_mismatch");
  const minEp = resolveMinEndpoint(s, "decode");

  // An idle pool takes the easy path's finish: floors, budget, and its reason.
  const idle = idleSlaTarget(s, fpms, n, minEp);
  if (idle !== null) return finishSingle(inputs, n, idle, { easy: true, refused: false }, null, null, {});

  if (s.optimizationTarget !== "sla") {
    const metadata: RoleFlags = { decode: inputs.caps.decode.maxKvTokens > 0 };
    const easy = decodeEasyDecision(s, inputs.caps.decode, fpms, n, minEp, true);
    if (easy.desired === null) return quiet(easy.reason ?? "no_change", false, metadata);
    return finishSingle(inputs, n, easy.desired, { easy: true, refused: false }, null, null, metadata);
  }

  const metadata: RoleFlags = { decode: validEngineLimits(inputs.caps.decode) };
  const model = inputs.perf.decode;
  if (model === null || !model.hasSufficientData()) return quiet("insufficient_data", false, metadata);
  const ctx = slaContext(inputs, n, "decode");
  const mbt = inputs.caps.decode.maxNumBatchedTokens;
  const p = mbt > 0 ? aggPrefillSlaDecision(model, mbt, fpms, ctx) : null;
  const d = aggDecodeSlaDecision(model, inputs.caps.decode, fpms, ctx);
  const refused =
    p?.reason === "scale_down_refused_consolidation" || d.reason === "scale_down_refused_consolidation";

  const pd = p?.desired ?? null;
  const dd = d.desired;
  let desired = n;
  if (pd !== null && pd > n) desired = pd;
  else if (dd !== null && dd > n) desired = dd;
  else if (pd === null && dd !== null && dd < n) desired = dd;
  else if (pd !== null && pd < n && dd !== null && dd < n) desired = Math.max(pd, dd);
  return finishSingle(
    inputs,
    n,
    desired,
    { easy: false, refused },
    p?.estimateMs ?? null,
    d.estimateMs,
    metadata,
  );
}

/**
 * Endpoint minimum, throughput floor, single budget guard, and the outcome's reason. Upstream's easy path
 * reports an unchanged pool as plain no_change; its SLA path keeps the veto / floor explanation.
 */
function finishSingle(
  inputs: LoadInputs,
  n: number,
  original: number,
  how: { readonly easy: boolean; readonly refused: boolean },
  estimatedTtftMs: number | null,
  estimatedItlMs: number | null,
  metadataAvailable: RoleFlags,
): LoadOutcome {
  const { settings: s } = inputs;
  const minEp = resolveMinEndpoint(s, "decode");
  let desired = Math.max(original, minEp);
  const lb = inputs.lowerBound?.decode ?? null;
  if (lb !== null) desired = Math.max(desired, lb);
  const budget = applySingleScalingBudget(s, inputs.caps.decode, n, desired, minEp);
  desired = budget.value;
  const floorCapped = desired > original && original < n;
  let reason: LoadReason;
  if (desired < n) reason = floorCapped ? "scale_down_capped_by_throughput" : "scale_down";
  else if (desired > n) reason = "scale_up";
  else if (how.easy) reason = "no_change";
  else if (how.refused && !floorCapped) reason = "scale_down_refused_consolidation";
  else reason = floorCapped ? "scale_down_capped_by_throughput" : "no_change";
  if (budget.reason !== null) reason = budget.reason;
  const decision = desired === n ? null : { numPrefill: null, numDecode: desired };
  return { decision, reason, estimatedTtftMs, estimatedItlMs, metadataAvailable };
}
