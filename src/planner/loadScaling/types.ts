/**
 * Inputs, outcomes and small shared helpers of the reactive load-scaling loop (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`).
 */

import type { BudgetReason } from "../budget.js";
import type { QueryPerfModel } from "../perfModel/index.js";
import type {
  EngineCapabilities,
  ForwardPassMetrics,
  PlannerMode,
  PlannerSettings,
  ScalingDecision,
  WorkerCounts,
} from "../types.js";

/** Diagnostic reasons of `ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py` (gates, outcomes, budget overrides). */
export type LoadReason =
  | "disabled"
  | "scaling_in_progress"
  | "no_fpm_data"
  | "worker_count_mismatch"
  | "insufficient_data"
  | "scale_down_refused_consolidation"
  | "scale_up"
  | "scale_down"
  | "scale_down_capped_by_throughput"
  | "no_change"
  | BudgetReason;

export type Role = "prefill" | "decode";

export interface LoadInputs {
  readonly settings: PlannerSettings;
  readonly mode: PlannerMode;
  readonly workers: WorkerCounts;
  /** Latest FPM per (worker, rank) of ready prefill workers; null/empty = none. */
  readonly fpmPrefill: readonly ForwardPassMetrics[] | null;
  /** Latest FPM per (worker, rank) of ready decode workers (agg: all workers). */
  readonly fpmDecode: readonly ForwardPassMetrics[] | null;
  readonly caps: { readonly prefill: EngineCapabilities | null; readonly decode: EngineCapabilities };
  /** SLA target only; agg puts its model in `decode`. Easy targets ignore them. */
  readonly perf: { readonly prefill: QueryPerfModel | null; readonly decode: QueryPerfModel | null };
  /** Last observed router KV-hit rate (null = none yet → no discount). */
  readonly kvHitRate: number | null;
  /** Last observed speculative accept length (clamped here to [1, nextn+1]). */
  readonly acceptLength: number;
  /** Throughput lower bounds; null when throughput scaling is off (a null role bound = no floor). */
  readonly lowerBound: { readonly prefill: number | null; readonly decode: number | null } | null;
  /** Query whole attention-DP workers as one group (default: one group per (worker, rank)). */
  readonly groupAttentionDp?: boolean;
}

export interface LoadOutcome {
  /** Absolute targets; null when nothing changes. */
  readonly decision: ScalingDecision | null;
  readonly reason: LoadReason;
  readonly reasonPrefill?: LoadReason;
  readonly reasonDecode?: LoadReason;
  /** Max over engines of the estimated TTFT / ITL, when computed this tick. */
  readonly estimatedTtftMs: number | null;
  readonly estimatedItlMs: number | null;
  /**
   * Per role whose decision ran this tick, whether the engine metadata it needs was there
   * (`load_metadata_available`); a role stopped by a gate, or stepped down because its pool was
   * idle, has no entry.
   */
  readonly metadataAvailable: RoleFlags;
}

/** A boolean per role, only for the roles a tick set it for. */
export type RoleFlags = Partial<Record<Role, boolean>>;

/** One role's raw load signal before floors and budget. */
export interface RoleDecision {
  /** Desired replicas; null = no opinion (keep current). */
  readonly desired: number | null;
  /** Why there is no opinion (or, agg, why a scale-down was vetoed); null when a target was produced. */
  readonly reason: LoadReason | null;
  /** Max of the per-engine estimates in ms (SLA target only). */
  readonly estimateMs: number | null;
}

/**
 * `has_valid_engine_limits`: the perf model can price an engine unless a limit it reads is known
 * and not positive (`dynamo/planner/core/perf_model/ais_adapter.py` in ai-dynamo 1.6.0.dev20261023,
 * `_limit_values`).
 */
export function validEngineLimits(caps: EngineCapabilities | null): boolean {
  return caps !== null && caps.maxNumBatchedTokens > 0 && caps.maxNumSeqs > 0 && caps.maxKvTokens > 0;
}

/** `resolve_min_endpoint`: the role override, else `min_endpoint`. */
export function resolveMinEndpoint(
  s: Pick<PlannerSettings, "minEndpoint" | "prefillMinEndpoint" | "decodeMinEndpoint">,
  role: Role,
): number {
  const override = role === "prefill" ? s.prefillMinEndpoint : s.decodeMinEndpoint;
  return override ?? s.minEndpoint;
}

/**
 * Speculative-decode accept length in [1, nextn+1]; 1 without speculation or for a non-finite value.
 * The worker's advertised depth wins over the configured fallback.
 */
export function clampAcceptLength(
  acceptLength: number,
  s: PlannerSettings,
  decode: EngineCapabilities,
): number {
  const nextn =
    decode.speculativeNextn > 0 ? decode.speculativeNextn : Math.max(0, Math.trunc(s.speculativeNextn));
  if (nextn <= 0 || !Number.isFinite(acceptLength)) return 1;
  return Math.min(Math.max(acceptLength, 1), nextn + 1);
}
