/**
 * One per-request record (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`): a line of requests.jsonl, and an element of
 * `prediction.per_request` with `--capture-per-request`.
 */
import * as z from "zod";

const ms = z.number().nullable();

export const routingEntrySchema = z.strictObject({
  pool: z.enum(["agg", "prefill", "decode"]),
  outcome: z.literal("immediate"),
  queue_entered_at_ms: z.number(),
  released_at_ms: z.number(),
  queue_wait_ms: z.number(),
  logical_worker_id: z.number(),
  dp_rank: z.number(),
  /** Prompt tokens the router's index says the chosen worker already held. */
  reported_overlap_tokens: z.number(),
});
export type RoutingEntry = z.infer<typeof routingEntrySchema>;

export const admissionEntrySchema = z.strictObject({
  admission_ordinal: z.number(),
  pool_admission_ordinal: z.number(),
  pool: z.enum(["agg", "prefill"]),
  at_ms: z.number(),
  reused_input_tokens: z.number(),
  is_readmission: z.boolean(),
});
export type AdmissionEntry = z.infer<typeof admissionEntrySchema>;

export const perRequestRecordSchema = z.strictObject({
  request_id: z.string().optional(),
  session_id: z.string(),
  turn_index: z.number(),
  uuid: z.string(),
  arrival_time_ms: z.number(),
  dispatched_at_ms: ms,
  first_admit_ms: ms,
  terminal_time_ms: z.number(),
  first_token_ms: ms,
  last_token_ms: ms,
  ttft_ms: ms,
  ttst_ms: ms,
  e2e_latency_ms: ms,
  /** That request's TPOT: (last − first)/(n − 1), n ≥ 2. */
  itl_ms: ms,
  input_length: z.number(),
  requested_output_length: z.number(),
  output_length: z.number(),
  reused_input_tokens: z.number(),
  prefill_worker_idx: z.number().nullable(),
  decode_worker_idx: z.number().nullable(),
  /** Disaggregated hand-off timeline (null in an aggregated deployment). */
  prefill_admit_ms: ms,
  source_held_ms: ms,
  destination_reserved_ms: ms,
  destination_activated_ms: ms,
  decode_admit_ms: ms,
  source_released_ms: ms,
  decode_reused_input_tokens: z.number().nullable(),
  prefill_route_overlap_tokens: z.number().nullable(),
  decode_route_overlap_tokens: z.number().nullable(),
  /** fleetsim extension: prompt tokens whose KV was moved to the decode worker. */
  transferred_tokens: z.number().nullable(),
  routing_history: z.array(routingEntrySchema),
  admission_history: z.array(admissionEntrySchema),
  admission_count: z.number(),
  readmission_count: z.number(),
  terminal_status: z.string(),
});
export type PerRequestRecord = z.infer<typeof perRequestRecordSchema>;
