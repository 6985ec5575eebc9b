/**
 * The prediction.json contract (`ai-dynamo/aisimulate@f045228:crates/core/src/replay/canonical.rs` plus the fleetsim extensions `run` and
 * `timeseries`; docs/output.md): the strict schema of the whole document, from which the types
 * the writers build come. An unknown key or a missing required key fails `predictionSchema`.
 */
import * as z from "zod";
import { g3OffloadSchema, kvOffloadSchema } from "./kvOffload.js";
import { perRequestRecordSchema } from "./perRequest.js";
import { plannerReportSchema } from "./planner.js";
import { runInfoSchema } from "./run.js";
import { predictionSummarySchema } from "./summary.js";
import { timeseriesSchema } from "./timeseries.js";

export const coverageSchema = z.strictObject({
  capture_per_request: z.boolean(),
  capture_planner_details: z.boolean(),
  capture_canonical_evidence: z.boolean(),
  per_request_records: z.number(),
});
export type Coverage = z.infer<typeof coverageSchema>;

export const predictionSchema = z.strictObject({
  summary: predictionSummarySchema,
  /** Planner details; null with `planner.policy: disabled`. */
  planner: plannerReportSchema.nullable(),
  /** Filled only with `--capture-per-request`; otherwise null (as the reference writes it). */
  per_request: z.array(perRequestRecordSchema).nullable(),
  coverage: coverageSchema,
  /** fleetsim extension: what was simulated (docs/metrics.md "What was simulated"). */
  run: runInfoSchema,
  /** fleetsim extension: bucketed latency, throughput and worker state over time (docs/metrics.md). */
  timeseries: timeseriesSchema,
  /** fleetsim extension, only with a host KV tier: what it did (docs/offload.md). */
  kv_offload: kvOffloadSchema.optional(),
  g3_offload: g3OffloadSchema.optional(),
});
export type Prediction = z.infer<typeof predictionSchema>;
