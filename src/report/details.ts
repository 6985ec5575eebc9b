/**
 * `--detail SECTIONS` (docs/output.md "Details"): the `details` block and, on the engine stack, the
 * top-level `memory_diagnostics` the reference writes beside the summary keys. Built from the
 * resolved run spec alone: each role's KV capacity estimate is the one `numGpuBlocks` came from.
 */
import { engineRoles, type RunSpec, type WorkerRoleSpec } from "../config/runSpec.js";
import type { DetailSection } from "../output/detailSections.js";
import type { Details, MemoryDiagnostics, MemoryRoleDiagnostics } from "../output/details.js";
import type { Prediction } from "../output/prediction.js";

/** Why a configured capacity has no estimate. */
const CONFIGURED_CAPACITY =
  "explicit KV capacity (kv_cache.capacity.type fixed or bytes): no memory estimate sized it";

/** Why fleetsim writes no section but `memory`. */
const NOT_PRODUCED = 'fleetsim does not produce this section (docs/output.md "Details")';

function roleMemory(role: WorkerRoleSpec): MemoryRoleDiagnostics {
  const scope = {
    scope: "capacity_estimate_per_rank",
    stage: "before_native_capacity_adjustments",
  } as const;
  const e = role.kvCapacityEstimate;
  if (e === undefined) return { ...scope, status: "unavailable", unavailable_reason: CONFIGURED_CAPACITY };
  return {
    ...scope,
    status: "available",
    source: "fleetsim",
    estimated_num_gpu_blocks: e.blocks,
    kv_size_per_token_bytes: e.kvBytesPerToken,
    kvcache_quant_mode: e.kvDtype,
    memory_breakdown: {
      weights_bytes: e.weightsBytes,
      activations_bytes: e.activationsBytes,
      runtime_overhead_bytes: e.runtimeOverheadBytes,
      comm_overhead_bytes: e.commOverheadBytes,
      cuda_graph_reserved_bytes: e.cudaGraphReservedBytes,
    },
    scheduler_block_size_tokens: e.blockSize,
    tolerance_adjusted: null,
    total_gpu_capacity_bytes: e.capacityBytes,
    total_kv_size_bytes: e.kvBudgetBytes,
    total_kv_size_tokens: e.tokens,
  };
}

/** Every role's capacity estimate (or why there is none). */
export function memoryDiagnostics(spec: RunSpec): MemoryDiagnostics {
  const out: MemoryDiagnostics = {};
  for (const [name, role] of engineRoles(spec.engine)) out[name] = roleMemory(role);
  return out;
}

/** The `details` block for `sections`. */
export function buildDetails(spec: RunSpec, sections: readonly DetailSection[]): Details {
  const details: Details = { schema_version: "1.0", sections: {}, skipped: {} };
  for (const section of sections) {
    if (section !== "memory") {
      details.skipped[section] = NOT_PRODUCED;
      continue;
    }
    const roles = memoryDiagnostics(spec);
    const entries = Object.entries(roles);
    const available = entries.filter(([, r]) => r.status === "available").length;
    if (available === 0) {
      // As the reference does when no role has an estimate: the section is skipped, role by role.
      details.skipped.memory = entries
        .map(([name, r]) => `${name}: ${r.status === "unavailable" ? r.unavailable_reason : ""}`)
        .join("; ");
      continue;
    }
    details.sections.memory = {
      roles,
      scope: "capacity_estimate_per_rank",
      status: available === entries.length ? "available" : "partial",
    };
  }
  return details;
}

/**
 * `prediction` with the requested detail: `details` always, and on the engine stack with `memory`
 * asked for, `memory_diagnostics` at the top level too (the reference's engine-stack layout).
 */
export function withDetails(
  prediction: Prediction,
  spec: RunSpec,
  sections: readonly DetailSection[],
): Prediction {
  if (sections.length === 0) return prediction;
  const details = buildDetails(spec, sections);
  const memory = spec.stack === "engine" && sections.includes("memory") ? memoryDiagnostics(spec) : null;
  return { ...prediction, details, ...(memory === null ? {} : { memory_diagnostics: memory }) };
}
