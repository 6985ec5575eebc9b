/**
 * The planner-state wrappers around the GPU-budget math (`ai-dynamo/dynamo@6c21864:components/src/dynamo/planner/core/budget.py`, `core/state.py`):
 * resolve per-replica costs, reconcile endpoint minimums, and fit throughput-lifted proposals under the
 * ceiling only. Reusable by the throughput loop, which applies the same policy.
 */

import {
  fitPairUnderCeiling,
  type GuardResult,
  guardPairBudget,
  guardSingleScalingBudget,
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

/** The pools' (prefill, decode) GPUs per replica, or null when a pool's capabilities are unknown. */
function gpuPair(pools: DisaggPools): [number, number] | null {
  if (pools.prefillCaps === null || pools.decodeCaps === null) return null;
  return [pools.prefillCaps.gpuCostPerReplica, pools.decodeCaps.gpuCostPerReplica];
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
  const gpu = gpuPair(pools);
  if (gpu === null) return { value: [p, d], reason: null };
  const current = [pools.currentPrefill, pools.currentDecode] as const;
  const mins = [pools.prefillMin, pools.decodeMin] as const;
  return guardPairBudget(current, [p, d], gpu, [s.minGpuBudget, s.maxGpuBudget], mins);
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
  const gpu = gpuPair(pools);
  if (gpu === null) return [p, d];
  const current = [pools.currentPrefill, pools.currentDecode] as const;
  return fitPairUnderCeiling(current, [p, d], gpu, s.maxGpuBudget, [pools.prefillMin, pools.decodeMin]);
}
