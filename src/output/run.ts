/**
 * `prediction.run` (a fleetsim extension, docs/metrics.md "What was simulated"): the deployment,
 * router, Planner and traffic a prediction describes. Deterministic: no host time, no absolute path.
 */
import * as z from "zod";

export const ENGINE_ROLES = ["aggregated", "prefill", "decode"] as const;
export const engineRoleSchema = z.enum(ENGINE_ROLES);

export const RETUNE_OBJECTIVES = [
  "Goodput",
  "GoodputPerGPU",
  "Throughput",
  "ThroughputPerGPU",
  "ThroughputPerUser",
  "TTFT",
  "E2ELatency",
] as const;
export const retuneObjectiveSchema = z.enum(RETUNE_OBJECTIVES);

/** One worker role as configured (`engine.workers.<role>`). */
export const runRoleSchema = z.strictObject({
  /** Workers at the start of the run. */
  replicas: z.number(),
  tensor: z.number(),
  pipeline: z.number(),
  attention_data: z.number(),
  moe_tensor: z.number(),
  moe_expert: z.number(),
  /** GPUs one worker occupies (the factor of `gpu_hours`). */
  gpus_per_worker: z.number(),
  /** The role's GPU system (a P/D role may override `engine.hardware`). */
  hardware: z.string(),
  /**
   * What its timing rests on (docs/perf-tables.md "Derived systems"): `calibrated` = the system's
   * own measured op tables; `estimated` = `base`'s tables rescaled by the roofline. Null when the
   * role's timing is not op-level (`polynomial` and `fixed` do not read the op tables).
   */
  hardware_data: z
    .strictObject({
      tier: z.enum(["calibrated", "estimated"]),
      base: z.string().nullable(),
      basis: z.string(),
    })
    .nullable(),
  /** `default` (op-level), `polynomial` or `fixed`. */
  timing: z.enum(["default", "polynomial", "fixed"]),
  max_batched_tokens: z.number(),
  max_sequences: z.number(),
  /** Engine KV block size, tokens. */
  block_size: z.number(),
  /** KV cache blocks per attention-DP rank. */
  kv_blocks: z.number(),
  prefix_caching: z.boolean(),
  startup_seconds: z.number(),
  /**
   * The backend whose op tables price the passes, when that is not `backend`: an SGLang or
   * TRT-LLM role on a GPU (or perf database) without that backend's op tables is priced from the
   * vLLM tables (docs/backends.md "Timing"); absent otherwise.
   */
  timing_backend: z.literal("vllm").optional(),
});
export type RunRole = z.infer<typeof runRoleSchema>;

export const runRouterSchema = z.strictObject({
  policy: z.enum(["round_robin", "kv_router"]),
  /** kv_router only. */
  overlap_score_credit: z.number().optional(),
  prefill_load_scale: z.number().optional(),
  temperature: z.number().optional(),
  prefill_load_model: z.enum(["none", "aic"]).optional(),
});
export type RunRouter = z.infer<typeof runRouterSchema>;

export const runPlannerSchema = z.strictObject({
  target: z.string(),
  /** The GPU budget (`max_num_gpus`); null = no ceiling (-1). */
  max_num_gpus: z.number().nullable(),
  /** null = no floor (-1). */
  min_num_gpus: z.number().nullable(),
  enable_load_scaling: z.boolean(),
  enable_throughput_scaling: z.boolean(),
  advisory: z.boolean(),
  /** `planner.retune`: the objective its scores are in, the window and the sweep's processes; null = no retune. */
  retune: z
    .strictObject({
      objective: retuneObjectiveSchema,
      interval_seconds: z.number(),
      max_parallel: z.number(),
    })
    .nullable(),
});
export type RunPlanner = z.infer<typeof runPlannerSchema>;

export const runTrafficSchema = z.strictObject({
  /** `synthetic` (`synthetic-shared-prefix`, `synthetic-session`), or the trace format (`traffic.source.format`). */
  source: z.enum([
    "synthetic",
    "synthetic-shared-prefix",
    "synthetic-session",
    "mooncake",
    "mooncake-delta",
    "agentic_mooncake",
    "applied_compute_agentic",
    "dynamo",
    "weka",
  ]),
  /** The trace's file name (the first file of a Dynamo trace in shards); null for synthetic traffic. */
  trace: z.string().nullable(),
  /** Trace files read (0 for synthetic traffic). */
  files: z.number(),
  /** Synthetic only: fixed prompt and output lengths, or their nominal means when sampled; per turn for sessions. */
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  /** synthetic-session only. */
  turns: z.number().optional(),
  /** Open-loop staged loads only: how many stages. */
  stages: z.number().optional(),
  /** Requests the run replays (trace rows read, or synthetic requests generated). */
  requests: z.number(),
  sessions: z.number(),
  load: z.string(),
  /** trace_timestamps: timestamps ÷ speedup. */
  speedup: z.number().optional(),
  requests_per_second: z.number().optional(),
  /** synthetic-session open loop: the rate of first turns. */
  sessions_per_second: z.number().optional(),
  /** poisson only. */
  seed: z.number().optional(),
  concurrency: z.number().optional(),
  /** concurrency only, when set: sessions of the warm-up phase (`traffic.load.warmup_sessions`). */
  warmup_sessions: z.number().optional(),
  /** `traffic.stop.max_virtual_time_seconds`, or null. */
  max_virtual_time_seconds: z.number().nullable(),
});
export type RunTraffic = z.infer<typeof runTrafficSchema>;

export const runInfoSchema = z.strictObject({
  stack: z.enum(["dynamo", "engine"]),
  mode: z.enum(["aggregated", "disaggregated"]),
  model: z.string(),
  hardware: z.string(),
  backend: z.string(),
  /** Roles by name: `aggregated`, or `prefill` and `decode`. */
  topology: z.strictObject({
    aggregated: runRoleSchema.optional(),
    prefill: runRoleSchema.optional(),
    decode: runRoleSchema.optional(),
  }),
  /** Σ replicas × gpus_per_worker at the start. */
  starting_gpus: z.number(),
  router: runRouterSchema,
  /** null = fixed replicas (no Planner). */
  planner: runPlannerSchema.nullable(),
  traffic: runTrafficSchema,
  /** `evaluation.sla` thresholds that are set; null = no SLA (no goodput keys). */
  sla: z
    .strictObject({
      ttft_ms: z.number().optional(),
      itl_ms: z.number().optional(),
      e2e_ms: z.number().optional(),
    })
    .nullable(),
  /** `client:` (docs/client.md), only when it adds overhead or sets a timeout. */
  client: z
    .strictObject({
      request_ms: z.number(),
      response_ms: z.number(),
      timeout_seconds: z.number().nullable(),
      /** The calibration profile applied (`client.profile`, docs/calibrate.md), by name. */
      profile: z.string().optional(),
    })
    .optional(),
  /** `engine.speculation` as resolved (docs/speculation.md), only when the workers speculate. */
  speculation: z
    .strictObject({
      kind: z.enum(["ngram", "mtp"]),
      num_speculative_tokens: z.number(),
      acceptance_rates: z.array(z.number()),
      seed: z.number(),
    })
    .optional(),
  /** The GPU-hour price of each GPU system the run provisions, USD (docs/cost.md); absent when one has none. */
  cost: z.strictObject({ usd_per_gpu_hour: z.record(z.string(), z.number()) }).optional(),
});
export type RunInfo = z.infer<typeof runInfoSchema>;
