/**
 * `planner.retune_events[]` (docs/retune.md §10): one record per retune decision. Points are
 * shown by live names (`router_temperature`, `load_predictor`, …); the knob table that owns the
 * retunable fields decides which of them a point carries, so the maps are typed by value here.
 */
import * as z from "zod";

export const liveValueSchema = z.union([z.number(), z.string(), z.boolean()]);
export type LiveValue = z.infer<typeof liveValueSchema>;

const liveMap = z.record(z.string(), liveValueSchema).readonly();

/** A point as the records show it: `{router, planner}` keyed by live names. */
export const livePointSchema = z
  .strictObject({ router: z.record(z.string(), z.number()).readonly(), planner: liveMap })
  .readonly();

export const RETUNE_OUTCOMES = ["applied", "kept", "advisory", "busy", "stale", "timeout", "failed"] as const;

export const predictorPresweepSchema = z
  .strictObject({
    winner: z.string().nullable(),
    /** The winner's predictor fields, live names; null without a winner. */
    fields: liveMap.nullable(),
    /** Per candidate name; null = no finite loss. */
    losses: z.record(z.string(), z.number().nullable()).readonly(),
    eval_steps: z.number(),
    warmup_steps: z.number(),
    /** Host seconds (docs/metrics.md "Host-time keys"). */
    wall_s: z.number(),
  })
  .readonly();

export const retuneEventSchema = z
  .strictObject({
    decision_id: z.string(),
    outcome: z.enum(RETUNE_OUTCOMES),
    reason: z.string().nullable(),
    window_index: z.number(),
    window_start_s: z.number(),
    window_end_s: z.number(),
    as_of_s: z.number(),
    launched_at_s: z.number().nullable(),
    decided_at_s: z.number(),
    num_requests: z.number(),
    num_candidates: z.number(),
    previous: livePointSchema,
    chosen: livePointSchema.nullable(),
    planner_changes: liveMap,
    baseline_score: z.number().nullable(),
    best_score: z.number().nullable(),
    top: z.array(z.tuple([livePointSchema, z.number()]).readonly()).readonly(),
    /** Candidates that produced no score, with why. */
    failed_candidates: z.array(z.tuple([livePointSchema, z.string()]).readonly()).readonly(),
    predictor_presweep: predictorPresweepSchema.nullable(),
    predictor_warmup: z.number().nullable(),
    /** Host seconds the sweep took (docs/metrics.md "Host-time keys"). */
    sweep_wall_s: z.number().nullable(),
    decision_latency_s: z.number().nullable(),
  })
  .readonly();
export type RetuneEvent = z.infer<typeof retuneEventSchema>;
