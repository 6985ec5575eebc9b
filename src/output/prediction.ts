/**
 * The prediction.json contract (`ai-dynamo/aisimulate@f045228:crates/core/src/replay/canonical.rs` plus the fleetsim extensions `run` and
 * `timeseries`; docs/output.md): the strict schema of the whole document, from which the types
 * the writers build come. An unknown key or a missing required key fails `predictionSchema`.
 */
import * as z from "zod";
import { detailsSchema, memoryDiagnosticsSchema } from "./details.js";
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

/**
 * The reference's engine-stack layout: its `ReplayReport` serialized flat, every summary key at the
 * top level of the document (`ai-dynamo/aisimulate@73f0fb9:python/aisimulate/src/aisimulate/runner.py`).
 * fleetsim's engine-stack runs write them there too, beside `summary` (docs/output.md "Layout"), so
 * that a script written for either reads the file; Dynamo-stack runs write `summary` only, as the
 * reference's Dynamo stack does.
 */
const flatSummaryShape = Object.fromEntries(
  Object.entries(predictionSummarySchema.shape).map(([key, field]) => [key, field.optional()]),
) as {
  [K in keyof typeof predictionSummarySchema.shape]: z.ZodOptional<(typeof predictionSummarySchema.shape)[K]>;
};

/** The summary keys a document holds at its top level, by key. */
function flatSummaryKeys(doc: Record<string, unknown>): string[] {
  return Object.keys(predictionSummarySchema.shape).filter((key) => key in doc);
}

export const predictionSchema = z
  .strictObject({
    ...flatSummaryShape,
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
    /** Only with `--detail` (docs/output.md "Details"). */
    details: detailsSchema.optional(),
    /** Only with `--detail memory` on the engine stack: each role's KV capacity estimate. */
    memory_diagnostics: memoryDiagnosticsSchema.optional(),
  })
  .superRefine((doc, ctx) => {
    // The flat keys are the summary's, all or none: never a second, different summary.
    const flat = flatSummaryKeys(doc);
    if (flat.length === 0) return;
    const summary = doc.summary as Record<string, unknown>;
    const top = doc as Record<string, unknown>;
    for (const key of Object.keys(summary)) {
      if (!(key in top))
        ctx.addIssue({ code: "custom", path: [key], message: `missing beside summary.${key}` });
      else if (JSON.stringify(top[key]) !== JSON.stringify(summary[key]))
        ctx.addIssue({ code: "custom", path: [key], message: `differs from summary.${key}` });
    }
    for (const key of flat)
      if (!(key in summary)) ctx.addIssue({ code: "custom", path: [key], message: `not in summary` });
  });
export type Prediction = z.infer<typeof predictionSchema>;
