/**
 * `prediction.summary` (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`; every key defined in docs/metrics.md): flat numbers,
 * each key listed once here, and the reference's four non-numeric keys (provenance, eviction, power). The distribution families (`{mean,…,std}_<name>`) are spelled out by
 * `SUMMARY_STAT_NAMES` × `SUMMARY_DISTRIBUTIONS`, so adding a statistic or a distribution is one
 * entry.
 */
import * as z from "zod";

/** Statistic names in serialization order (the `{mean,…,std}_<name>` families of `ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`). */
export const SUMMARY_STAT_NAMES = [
  "mean",
  "min",
  "max",
  "median",
  "p75",
  "p90",
  "p95",
  "p99",
  "std",
] as const;
export type SummaryStatName = (typeof SUMMARY_STAT_NAMES)[number];

/** The distributions summarised by one family of statistics each. */
export const SUMMARY_DISTRIBUTIONS = [
  "ttft_ms",
  "ttst_ms",
  "tpot_ms",
  "itl_ms",
  "e2e_latency_ms",
  "output_token_throughput_per_user",
] as const;
export type SummaryDistribution = (typeof SUMMARY_DISTRIBUTIONS)[number];

/** The keys of one distribution's family: `mean_ttft_ms`, …, `std_ttft_ms`. */
export type StatKey<N extends SummaryDistribution> = `${SummaryStatName}_${N}`;

/** Keys every run writes (besides the distribution families). */
const ALWAYS = [
  "num_requests",
  "completed_requests",
  "total_input_tokens",
  "total_output_tokens",
  "duration_ms",
  "wall_time_ms",
  "request_throughput_rps",
  "input_throughput_tok_s",
  "output_throughput_tok_s",
  "total_throughput_tok_s",
  "prefill_worker_seconds",
  "decode_worker_seconds",
  "prefill_gpus_per_worker",
  "decode_gpus_per_worker",
  "gpu_hours",
  "failed_requests",
  "rejected_requests",
  "timed_out_requests",
  "processed_tokens",
  "processed_tokens_per_s",
  "processed_output_tokens_per_s",
  "committed_prefill_tokens",
  "prefix_cache_reused_ratio",
  "first_admission_prefix_cache_reused_ratio",
  "num_ttft_samples",
  "num_tpot_samples",
  "num_e2e_latency_samples",
  "saturated",
  "saturation_backlog_growth",
  "saturation_window_ms",
  "backlog_at_last_arrival",
] as const;

/** Keys written only when `evaluation.sla` sets a threshold (goodput). */
const WITH_SLA = [
  "goodput_completed_requests",
  "goodput_request_throughput_rps",
  "goodput_output_throughput_tok_s",
] as const;

/**
 * fleetsim extension (docs/cost.md): the run priced at `cost.usd_per_gpu_hour`, written when every
 * GPU system of the run has a price; the per-unit keys only when their unit count is positive
 * (output tokens; good requests, which need an SLA).
 */
const COST = ["cost_usd", "cost_per_million_output_tokens_usd", "cost_per_good_request_usd"] as const;
export type CostKey = (typeof COST)[number];

/**
 * fleetsim extension (docs/speculation.md): speculative decoding's counters, written only when
 * `engine.speculation` is set, named after vLLM's `spec_decode` metrics.
 */
const SPECULATION = [
  "spec_decode_num_drafts",
  "spec_decode_num_draft_tokens",
  "spec_decode_num_accepted_tokens",
  "spec_decode_mean_acceptance_length",
  "spec_decode_draft_acceptance_rate",
] as const;
export type SpeculationKey = (typeof SPECULATION)[number];

/** Summary keys that depend on host speed; they are the only keys that differ between two runs. */
export const HOST_TIME_KEYS = [
  "wall_time_ms",
  "processed_tokens_per_s",
  "processed_output_tokens_per_s",
] as const satisfies readonly (typeof ALWAYS)[number][];

/**
 * What priced one role's passes, as the reference names it (`prediction_provenance.<role>`):
 * the op-level estimator on measured tables (`timing_source: aic`, their version), or configured
 * `fixed` / built-in `polynomial` timing, which reads no performance data.
 */
export const roleProvenanceSchema = z.strictObject({
  estimator: z.enum(["op_level", "fixed", "polynomial"]),
  timing_source: z.enum(["aic", "configured", "built_in"]),
  data_version: z.string().nullable(),
  data_version_unavailable_reason: z.string().nullable(),
  /** Written (null) for op-level roles only, as the reference does. */
  data_identity: z.null().optional(),
});
export type RoleProvenance = z.infer<typeof roleProvenanceSchema>;

/**
 * A role's KV-cache precision as the reference reports it (`kv_cache_precision.<role>`): the
 * dtype its memory estimate used, and whether the checkpoint declares it (`checkpoint`) or it
 * follows from the weights (`aisimulate_policy`: FP8 weights imply an FP8 KV cache).
 */
export const kvCachePrecisionSchema = z.strictObject({
  dtype: z.enum(["bfloat16", "fp8"]),
  source: z.enum(["checkpoint", "aisimulate_policy"]),
});
export type KvCachePrecision = z.infer<typeof kvCachePrecisionSchema>;

/**
 * The non-numeric summary keys aisimulate 0.13 writes (docs/metrics.md "Provenance,
 * eviction and power"), written by every run.
 */
const REFERENCE_NON_NUMERIC = {
  /** The prefix cache evicts the least recently used block first (vLLM and SGLang cores alike). */
  kv_eviction_policy: z.literal("lru"),
  /** Mean active power per GPU: null, as the reference writes it below 90 % energy coverage. */
  power_w: z.null(),
  /** Share of the priced latency with energy evidence: 0 with op-level timing, null otherwise. */
  power_coverage: z.literal(0).nullable(),
  /** Per role, what priced its passes. */
  prediction_provenance: z.record(z.string(), roleProvenanceSchema),
  /**
   * Per role whose KV capacity is the memory estimate under op-level timing, the KV dtype that
   * estimate used; absent when no role has one (as the reference omits it).
   */
  kv_cache_precision: z.record(z.string(), kvCachePrecisionSchema).optional(),
};
export type ReferenceNonNumericKey = keyof typeof REFERENCE_NON_NUMERIC;
/** Summary keys whose values are not numbers (the rest of the summary is numbers only). */
export const NON_NUMERIC_SUMMARY_KEYS = Object.keys(
  REFERENCE_NON_NUMERIC,
) as readonly ReferenceNonNumericKey[];

type Shape = { [K in (typeof ALWAYS)[number] | StatKey<SummaryDistribution>]: z.ZodNumber } & {
  [K in (typeof WITH_SLA)[number] | CostKey | SpeculationKey]: z.ZodOptional<z.ZodNumber>;
};

function shape(): Shape {
  const out: Record<string, z.ZodType> = {};
  for (const k of ALWAYS) out[k] = z.number();
  for (const d of SUMMARY_DISTRIBUTIONS) for (const s of SUMMARY_STAT_NAMES) out[`${s}_${d}`] = z.number();
  for (const k of WITH_SLA) out[k] = z.number().optional();
  for (const k of COST) out[k] = z.number().optional();
  for (const k of SPECULATION) out[k] = z.number().optional();
  return out as Shape;
}

/** The summary's numbers (what the metrics fold; every consumer that ranks or compares reads these). */
export const summarySchema = z.strictObject(shape());
export type Summary = z.infer<typeof summarySchema>;

/** `prediction.summary` as written: the numbers and the reference's non-numeric keys. */
export const predictionSummarySchema = summarySchema.extend(REFERENCE_NON_NUMERIC);
export type PredictionSummary = z.infer<typeof predictionSummarySchema>;
export type ReferenceSummaryKeys = Pick<PredictionSummary, ReferenceNonNumericKey>;

/** One distribution's statistics, as its family of summary keys. */
export type StatKeys<N extends SummaryDistribution> = { [K in StatKey<N>]: number };
