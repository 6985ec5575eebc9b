/**
 * `prediction.planner` (the `planner` key of `ai-dynamo/aisimulate@f045228:crates/core/src/replay/canonical.rs`; `ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py`): the run's
 * Planner configuration and pipeline (`metadata`), every tick's input, decision and diagnostics,
 * the scaling events, the worker lifecycle, and with retune its decisions. Null with
 * `planner.policy: disabled`.
 */
import * as z from "zod";
import { type PlannerConfigPayload, plannerConfigPayloadShape } from "../knobs/planner.js";
import { retuneEventSchema } from "./retune.js";

const PLANNER_COMPONENTS = ["agg", "prefill", "decode"] as const;
const plannerModeSchema = z.enum(["agg", "disagg"]);

/** What a lifecycle operation does to one worker, in the order a worker goes through them. */
export const LIFECYCLE_TRANSITIONS = [
  "worker_starting",
  "worker_ready",
  "worker_draining",
  "worker_removed",
] as const;
export type LifecycleTransition = (typeof LIFECYCLE_TRANSITIONS)[number];

/** One replica change (`ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py` `ScalingEvent`). */
export const scalingEventSchema = z.strictObject({
  at_s: z.number(),
  component: z.enum(PLANNER_COMPONENTS),
  from_count: z.number(),
  to_count: z.number(),
  reason: z.enum(["scale_up", "scale_down"]),
});
export type ScalingEvent = z.infer<typeof scalingEventSchema>;

/** One lifecycle operation: what a scaling action (or a completed startup/drain) did to workers. */
export const lifecycleOperationSchema = z.strictObject({
  at_ms: z.number(),
  pool: z.enum(PLANNER_COMPONENTS),
  cause: z.enum(["scale_up", "scale_down", "startup_complete", "drain_complete"]),
  transitions: z.array(
    z.strictObject({ worker_id: z.number(), transition: z.enum(LIFECYCLE_TRANSITIONS), at_ms: z.number() }),
  ),
});
export type LifecycleOperation = z.infer<typeof lifecycleOperationSchema>;

/** How the Planner's performance model was seeded (docs/planner.md "What runs"). */
export const bootstrapInfoSchema = z.strictObject({
  status: z.enum(["installed", "not_required", "not_configured_load_only", "session_failed_load_only"]),
  benchmark_granularity: z.number().optional(),
  prefill_fpm_count: z.number().optional(),
  decode_fpm_count: z.number().optional(),
  fpm_sha256: z.string().optional(),
});
export type BootstrapInfo = z.infer<typeof bootstrapInfoSchema>;

/**
 * The PlannerConfig this run started with, in its field names (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`): one field per
 * row of the knob table (knobs/planner.ts) plus the derived settings, so adding a knob adds it
 * here too.
 */
export const plannerConfigPayloadSchema = z.strictObject(plannerConfigPayloadShape());
export type { PlannerConfigPayload };

export const plannerMetadataSchema = z.strictObject({
  mode: plannerModeSchema,
  advisory: z.boolean(),
  /** sha256 of the canonical JSON of `planner_config`. */
  planner_config_digest: z.string(),
  planner_config: plannerConfigPayloadSchema,
  builtin_plugin_ids: z.array(z.string()),
  plugin_pipeline: z.array(z.string()),
  pipeline_schema_version: z.string(),
  scale_interval_seconds: z.number(),
  bootstrap: bootstrapInfoSchema,
  details_captured: z.boolean(),
});
export type PlannerMetadata = z.infer<typeof plannerMetadataSchema>;

/**
 * One forward pass's metrics as Dynamo's `ForwardPassMetrics` serializes them (`FPM_VERSION` 1,
 * `dynamo/common/forward_pass_metrics.py` in the ai-dynamo wheel; the reference's ticks carry this
 * record): what the pass scheduled and what was left queued, with each population's count, sum and
 * variance. `wall_time` is simulated seconds (0: an idle heartbeat). Worker ids are strings, as
 * Dynamo's are; `counter_id` is 0 (no counter in a replay).
 */
export const fpmMetricsSchema = z.strictObject({
  version: z.literal(1),
  worker_id: z.string(),
  dp_rank: z.number(),
  counter_id: z.number(),
  wall_time: z.number(),
  scheduled_requests: z.strictObject({
    num_prefill_requests: z.number(),
    sum_prefill_tokens: z.number(),
    /** Cached prefix tokens of the scheduled prompts. */
    sum_prefill_kv_tokens: z.number(),
    var_prefill_length: z.number(),
    num_decode_requests: z.number(),
    sum_decode_kv_tokens: z.number(),
    var_decode_kv_tokens: z.number(),
  }),
  queued_requests: z.strictObject({
    num_prefill_requests: z.number(),
    sum_prefill_tokens: z.number(),
    var_prefill_length: z.number(),
    num_decode_requests: z.number(),
    sum_decode_kv_tokens: z.number(),
    var_decode_kv_tokens: z.number(),
  }),
});
export type FpmMetrics = z.infer<typeof fpmMetricsSchema>;

export const fpmObservationSchema = z.strictObject({
  worker_id: z.string(),
  dp_rank: z.number(),
  metrics: fpmMetricsSchema,
});
export type FpmObservation = z.infer<typeof fpmObservationSchema>;

/** A pool's workers by state at a tick. */
export const poolTopologySchema = z.strictObject({
  active: z.array(z.number()).readonly(),
  active_count: z.number(),
  starting: z.array(z.number()).readonly(),
  starting_count: z.number(),
  draining: z.array(z.number()).readonly(),
  draining_count: z.number(),
});
export type PoolTopologyRecord = z.infer<typeof poolTopologySchema>;

const optNum = z.number().nullable().optional();
const roleFlags = z
  .strictObject({ prefill: z.boolean().optional(), decode: z.boolean().optional() })
  .optional();
const optText = z.string().nullable().optional();

/** `TickDiagnostics` (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`) in snake_case; a field is absent when the tick did not compute it. */
export const tickDiagnosticsSchema = z.strictObject({
  estimated_ttft_ms: optNum,
  estimated_itl_ms: optNum,
  predicted_num_req: optNum,
  predicted_isl: optNum,
  predicted_osl: optNum,
  predicted_kv_hit_rate: optNum,
  engine_rps_prefill: optNum,
  engine_rps_decode: optNum,
  throughput_lower_bound_prefill: optNum,
  throughput_lower_bound_decode: optNum,
  load_decision_reason: optText,
  load_decision_reason_prefill: optText,
  load_decision_reason_decode: optText,
  throughput_decision_reason: optText,
  throughput_decision_reason_prefill: optText,
  throughput_decision_reason_decode: optText,
  /** Per role whose load decision ran this tick: whether its engine metadata was there. */
  load_metadata_available: roleFlags,
  /** Per role the throughput loop sized this tick: whether its engine metadata was there. */
  throughput_metadata_available: roleFlags,
  /**
   * The plugin pipeline's outcome (`dynamo/planner/plugins/orchestrator/pipeline.py`): fleetsim's
   * Planner has no plugins, so every tick applies, and nothing is overridden, held over, reconciled
   * or audited (the lists hold nothing).
   */
  execute_action: z.literal("apply").optional(),
  short_circuit_reason: z.literal("").optional(),
  audit_events: z.array(z.never()).readonly().optional(),
  held_over_plugins: z.array(z.never()).readonly().optional(),
  plugin_overrides: z.array(z.never()).readonly().optional(),
  reconcile_reasons: z.strictObject({}).optional(),
});
export type TickDiagnosticsRecord = z.infer<typeof tickDiagnosticsSchema>;

const routerParameters = z.record(z.string(), z.number()).readonly();

/** Dynamo's `ScheduledTick`: which loops a tick runs and what it reads (in a replay the two clocks agree). */
const scheduledTickSchema = z.strictObject({
  at_s: z.number(),
  at_monotonic_s: z.number(),
  run_load_scaling: z.boolean(),
  run_throughput_scaling: z.boolean(),
  need_traffic_metrics: z.boolean(),
  use_full_traffic_metrics: z.boolean(),
  traffic_metrics_duration_s: z.number(),
  need_worker_states: z.boolean(),
  need_worker_fpm: z.boolean(),
});

/** One Planner tick (`ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py`): what it saw, what it decided, what the replay did with it. */
export const plannerTickSchema = z.strictObject({
  ordinal: z.number(),
  at_ms: z.number(),
  scheduled_tick: scheduledTickSchema,
  input: z.strictObject({
    now_s: z.number(),
    /** Offered load since the previous traffic tick; null when this tick reads none. */
    traffic: z
      .strictObject({
        duration_s: z.number(),
        num_req: z.number(),
        isl: z.number(),
        osl: z.number(),
        kv_hit_rate: z.number().nullable(),
        accept_length: z.number().nullable(),
      })
      .nullable(),
    worker_counts: z.strictObject({
      ready_num_prefill: z.number().nullable(),
      ready_num_decode: z.number().nullable(),
      expected_num_prefill: z.number().nullable(),
      expected_num_decode: z.number().nullable(),
      prefill_scaling_in_progress: z.boolean(),
      decode_scaling_in_progress: z.boolean(),
      /** Requested but not yet provisioned: 0, since a replay provisions a scale-up at once. */
      pending_num_prefill: z.number(),
      pending_num_decode: z.number(),
    }),
    fpm_observations: z.strictObject({
      /** null in an aggregated deployment. */
      prefill: z.array(fpmObservationSchema).nullable(),
      decode: z.array(fpmObservationSchema).nullable(),
    }),
  }),
  topology: z.strictObject({ prefill: poolTopologySchema.nullable(), decode: poolTopologySchema.nullable() }),
  effects: z.strictObject({
    scale_to: z
      .strictObject({ num_prefill: z.number().nullable(), num_decode: z.number().nullable() })
      .nullable(),
    /** The tick that follows, as it will be scheduled. */
    next_tick: scheduledTickSchema,
    diagnostics: tickDiagnosticsSchema,
    /** Limits on draining a batch of workers at once: none without plugins. */
    batch_drain_limits: z.array(z.never()).readonly().optional(),
  }),
  runtime_decision: z.strictObject({
    target_prefill: z.number().nullable(),
    target_decode: z.number().nullable(),
    next_tick_ms: z.number(),
    /** With retune: the desired router parameters per worker type (live names); else null. */
    router_parameters: z.record(z.string(), routerParameters).readonly().nullable(),
  }),
  /** With retune: each router's revision and parameters before this tick's update (docs/retune.md §10). */
  router_policies: z
    .array(z.strictObject({ worker_type: z.string(), revision: z.number(), parameters: routerParameters }))
    .readonly()
    .optional(),
  /** With `retune.planner`: the retunable Planner fields this tick ran with (live names). */
  retune_planner_fields: z
    .record(z.string(), z.union([z.number(), z.string(), z.boolean()]))
    .readonly()
    .optional(),
});
export type PlannerTick = z.infer<typeof plannerTickSchema>;

export const plannerReportSchema = z.strictObject({
  metadata: plannerMetadataSchema,
  scaling_events: z.array(scalingEventSchema),
  lifecycle_operations: z.array(lifecycleOperationSchema).readonly(),
  ticks: z.array(plannerTickSchema),
  total_ticks: z.number(),
  /** The HTML report the library API wrote for this run, else null (`fleetsim predict` writes null). */
  html_report_path: z.string().nullable(),
  /** Advisory mode only: the changes the Planner recommended and did not apply. */
  recommended_scaling_events: z.array(scalingEventSchema).optional(),
  /** `planner.retune` set: every recorded decision (docs/retune.md §10). */
  retune_events: z.array(retuneEventSchema).readonly().optional(),
});
export type PlannerReport = z.infer<typeof plannerReportSchema>;
