/**
 * The recommendation.json contract (`ai-dynamo/aisimulate@ea68be2:python/aisimulate/src/aisimulate/recommend.py`, the reference's `SweepResult`, schema 1.1):
 * the complete candidate ledger in evaluation order, the counts of the whole run, the selection
 * views (`top_n` best first for a scalar target, `pareto_front` for `pareto`), and the run's
 * provenance. Deterministic: no host time, no absolute path written by fleetsim itself (docs/recommend.md).
 */
import * as z from "zod";

export const CANDIDATE_STATUSES = [
  "feasible",
  "infeasible",
  "unsupported",
  "timed_out",
  "failed",
  "resource_limited",
] as const;

export const REASON_CATEGORIES = [
  "gpu_budget",
  "kv_capacity",
  "sla_constraint",
  "backend_topology",
  "runtime_timeout",
  "candidate_materialization",
  "replay_runtime",
  "runner_contract",
  "invalid_metrics",
  "no_samples",
  "parallel_projection",
  "adapter_constraint",
  "resource_limit",
  "unknown",
] as const;

const json = z.record(z.string(), z.unknown());

export const candidateRecordSchema = z.strictObject({
  /** `candidate-NNNNNN`, in evaluation order. */
  candidate_id: z.string().regex(/^candidate-[0-9]{6,}$/),
  status: z.enum(CANDIDATE_STATUSES),
  /** The study's deployment mode and the suggestion's value of every searched dimension. */
  config: json,
  /** The concrete `fleetsim predict` input (what recommendations/NNNN.yaml holds). */
  prediction_config: json.nullable(),
  /**
   * GPUs of the deployment as configured (a Planner's starting GPUs), or null when not known; what
   * `min_gpus` ranks by, as the reference's `used_gpus`.
   */
  used_gpus: z.number().int().min(0).nullable(),
  /** The most GPUs provisioned at once during the replay (fleetsim extension); null when not replayed. */
  peak_gpus: z.number().int().min(0).nullable(),
  /** The time average of the provisioned GPUs (gpu_hours over the duration; fleetsim extension). */
  mean_gpus: z.number().min(0).nullable(),
  /** Larger is better (minimised targets negated); the first objective's raw value for Pareto. */
  score: z.number().nullable(),
  /** The prediction summary of a replayed candidate without its host-time keys; empty otherwise. */
  metrics: z.record(z.string(), z.number()),
  /** Pareto objectives in natural units; null for a scalar target. */
  objectives: z.record(z.string(), z.number()).nullable(),
  reason_category: z.enum(REASON_CATEGORIES).nullable(),
  reason: z.string().nullable(),
  provenance: json,
});
export type CandidateRecordDocument = z.infer<typeof candidateRecordSchema>;

export const recommendationSchema = z.strictObject({
  schema_version: z.literal("1.1"),
  candidate_retention: z.literal("all"),
  counts: z.strictObject({
    /** feasible + infeasible + timed_out + failed. */
    evaluated: z.number().int(),
    feasible: z.number().int(),
    infeasible: z.number().int(),
    unsupported: z.number().int(),
    timed_out: z.number().int(),
    failed: z.number().int(),
    /** Not run: their replay would not fit the host memory budget (counted apart from evaluated). */
    resource_limited: z.number().int(),
    /** Trials served by the result cache (a repeated configuration). */
    cache_hits: z.number().int(),
    /** Trials consumed: every ledger row plus every cache hit. */
    trials: z.number().int(),
  }),
  candidates: z.array(candidateRecordSchema),
  views: z.strictObject({
    top_n: z.array(z.string()),
    pareto_front: z.array(z.string()),
  }),
  provenance: json,
});
export type RecommendationDocument = z.infer<typeof recommendationSchema>;

/** recommendation.csv columns, in order (`ai-dynamo/aisimulate@ea68be2:python/aisimulate/src/aisimulate/recommend.py`). */
export const RECOMMENDATION_CSV_COLUMNS = [
  "schema_version",
  "candidate_id",
  "status",
  "reason_category",
  "reason",
  "used_gpus",
  "score",
  "config_json",
  "prediction_config_json",
  "metrics_json",
  "objectives_json",
  "provenance_json",
  "is_top_n",
  "is_pareto",
  // fleetsim's columns after the reference's.
  "peak_gpus",
  "mean_gpus",
] as const;
