/**
 * The planner-state wrappers around the GPU-budget math (`ai-dynamo/dynamo@6c21864:components/src/dynamo/planner/core/budget.py`, `core/state.py`):
 * resolve per-replica costs, reconcile endpoint minimums, and fit throughput-lifted proposals under the
 * ceiling only. Reusable by the throughput loop, which applies the same policy.
 */

import {
  fitDirectionalBudgetPair,
  type GuardResult,
  guardDisaggScalingBudget,
  guardSingleScalingBudget,
  proportionalClampPair,
} from "../budget.js";
import type { EngineCapabilities, PlannerSettings } from "../types.js";

/** Direction-preserving single-pool guard; no capabilities ⇒ no budget to apply. */
export function applySingleScalingBudget(
  s: PlannerSettings,
  caps: EngineCapabilities | null,
  current: number,
  desired: number,
  minEndpoint: number,
): GuardResult<number> {
  if (caps === null) return { value: desired, reason: null };
  return guardSingleScalingBudget(
    current,
    desired,
    caps.gpuCostPerReplica,
    s.minGpuBudget,
    s.maxGpuBudget,
    minEndpoint,
  );
}

export interface DisaggPools {
  readonly currentPrefill: number;
  readonly currentDecode: number;
  readonly prefillCaps: EngineCapabilities | null;
  readonly decodeCaps: EngineCapabilities | null;
  readonly prefillMin: number;
  readonly decodeMin: number;
}

/**
 * Full band for a disagg proposal. A pool below its endpoint minimum is explicit runtime policy and is
 * reconciled even if that needs a donor the scaling signal did not nominate.
 */
export function applyDisaggScalingBudget(
  s: PlannerSettings,
  pools: DisaggPools,
  p: number,
  d: number,
): GuardResult<[number, number]> {
  if (pools.prefillCaps === null || pools.decodeCaps === null) return { value: [p, d], reason: null };
  const pg = pools.prefillCaps.gpuCostPerReplica;
  const dg = pools.decodeCaps.gpuCostPerReplica;
  const { prefillMin: pmin, decodeMin: dmin } = pools;
  if (pools.currentPrefill < pmin || pools.currentDecode < dmin) {
    const value = proportionalClampPair(
      Math.max(p, pmin),
      Math.max(d, dmin),
      pg,
      dg,
      s.minGpuBudget,
      s.maxGpuBudget,
      pmin,
      dmin,
    );
    return { value, reason: "gpu_budget_reconcile" };
  }
  return guardDisaggScalingBudget(
    pools.currentPrefill,
    pools.currentDecode,
    p,
    d,
    pg,
    dg,
    s.minGpuBudget,
    s.maxGpuBudget,
    pmin,
    dmin,
  );
}

/**
 * Fit a throughput-bounded pair under the hard ceiling only: `min_gpu_budget` guards actual scale-downs
 * and is not demand, so it must never inflate a throughput bound.
 */
export function fitDisaggThroughputCeiling(
  s: PlannerSettings,
  pools: DisaggPools,
  p: number,
  d: number,
): [number, number] {
  if (pools.prefillCaps === null || pools.decodeCaps === null) return [p, d];
  const pg = pools.prefillCaps.gpuCostPerReplica;
  const dg = pools.decodeCaps.gpuCostPerReplica;
  const { prefillMin: pmin, decodeMin: dmin } = pools;
  if (pools.currentPrefill < pmin || pools.currentDecode < dmin) {
    return proportionalClampPair(
      Math.max(p, pmin),
      Math.max(d, dmin),
      pg,
      dg,
      -1,
      s.maxGpuBudget,
      pmin,
      dmin,
    );
  }
  return fitDirectionalBudgetPair(
    pools.currentPrefill,
    pools.currentDecode,
    p,
    d,
    pg,
    dg,
    -1,
    s.maxGpuBudget,
    pmin,
    dmin,
  );
}
