/**
 * `details` and `memory_diagnostics` (`fleetsim predict --detail SECTIONS`, docs/output.md
 * "Details"): the reference's `--detail` evidence blocks (aisimulate 0.13.0 `predict --detail
 * summary,memory,time,energy,source`). fleetsim produces the `memory` section, each role's KV
 * capacity estimate per rank; a requested section it does not produce is listed under `skipped`
 * with the reason, as the reference lists the evidence it lacks.
 */
import * as z from "zod";
import { DETAIL_SECTIONS } from "./detailSections.js";
import { engineRoleSchema } from "./run.js";

export const detailSectionSchema = z.enum(DETAIL_SECTIONS);

/** Where the estimate applies and which stage of it is reported (the reference's wording). */
const estimateScope = {
  scope: z.literal("capacity_estimate_per_rank"),
  stage: z.literal("before_native_capacity_adjustments"),
};

/** One role's KV capacity estimate, as the memory model sized it (`capacity.type: default`). */
const availableMemorySchema = z.strictObject({
  ...estimateScope,
  status: z.literal("available"),
  /** fleetsim's memory model (src/model/memory.ts); the reference writes `native`. */
  source: z.literal("fleetsim"),
  estimated_num_gpu_blocks: z.number(),
  kv_size_per_token_bytes: z.number(),
  kvcache_quant_mode: z.string(),
  memory_breakdown: z.strictObject({
    weights_bytes: z.number(),
    activations_bytes: z.number(),
    runtime_overhead_bytes: z.number(),
    comm_overhead_bytes: z.number(),
    cuda_graph_reserved_bytes: z.number(),
  }),
  scheduler_block_size_tokens: z.number(),
  /** Always null: fleetsim applies no tolerance adjustment to the estimate. */
  tolerance_adjusted: z.null(),
  total_gpu_capacity_bytes: z.number(),
  total_kv_size_bytes: z.number(),
  total_kv_size_tokens: z.number(),
});

/** A role whose capacity is configured (`fixed`, `bytes`): no estimate was made. */
const unavailableMemorySchema = z.strictObject({
  ...estimateScope,
  status: z.literal("unavailable"),
  unavailable_reason: z.string(),
});

export const memoryRoleDiagnosticsSchema = z.discriminatedUnion("status", [
  availableMemorySchema,
  unavailableMemorySchema,
]);
export type MemoryRoleDiagnostics = z.infer<typeof memoryRoleDiagnosticsSchema>;

/** Per role (`aggregated`, or `prefill` and `decode`). */
export const memoryDiagnosticsSchema = z.partialRecord(engineRoleSchema, memoryRoleDiagnosticsSchema);
export type MemoryDiagnostics = z.infer<typeof memoryDiagnosticsSchema>;

export const detailsSchema = z.strictObject({
  schema_version: z.literal("1.0"),
  sections: z.strictObject({
    memory: z
      .strictObject({
        roles: memoryDiagnosticsSchema,
        scope: z.literal("capacity_estimate_per_rank"),
        /** `available` when every role's estimate is. */
        status: z.enum(["available", "partial", "unavailable"]),
      })
      .optional(),
  }),
  /** A requested section fleetsim does not produce, with why. */
  skipped: z.partialRecord(detailSectionSchema, z.string()),
});
export type Details = z.infer<typeof detailsSchema>;
