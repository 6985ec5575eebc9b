import { existsSync } from "node:fs";
import { join } from "node:path";
import { filledGroupsUsed, type TableBackend } from "../hardware/backendTables.js";
import { tableSystem } from "../hardware/catalog.js";
import { hasCompactTables, readCompactJson } from "../hardware/compactTables.js";
import type { TimingSpec } from "./timingSpec.js";

type DefaultTiming = Extract<TimingSpec, { type: "default" }>;

/** Whether `backend` has its own op tables for the role's GPU (built in, or in the perf database). */
export function backendHasTables(spec: DefaultTiming, backend: TableBackend): boolean {
  const gpu = tableSystem(spec.gpu.id);
  if (spec.perfDatabase !== null) return existsSync(join(spec.perfDatabase, gpu, backend));
  return hasCompactTables(gpu, backend);
}

/**
 * Whose op tables price an op-level role of `backend` (docs/backends.md "Timing"): vLLM's, or with
 * `timing.op_tables: backend` the backend's own where the built-in tables (or the perf database,
 * `<dir>/<gpu>/<backend>/`) have them. The same rule `createTimingModel` loads by.
 */
export function tableBackendOf(spec: DefaultTiming, backend: TableBackend): TableBackend {
  if (backend === "vllm" || spec.opTables !== "backend") return "vllm";
  return backendHasTables(spec, backend) ? backend : "vllm";
}

/** The built-in tables' version of `backend` on the role's GPU, e.g. `0.5.9` (null with a perf database). */
export function tableVersionOf(spec: DefaultTiming, backend: TableBackend): string | null {
  if (spec.perfDatabase !== null) return null;
  return readCompactJson(tableSystem(spec.gpu.id), backend).perfDataVersion;
}

/**
 * The groups of a backend's built-in tables that came from vLLM's (`fillFromVllm`) and that this
 * role's model reads: its weight dtype's GEMM or MoE, or its KV dtype at its head dim.
 */
export function borrowedGroupsOf(spec: DefaultTiming, backend: TableBackend): string[] {
  if (backend === "vllm" || spec.perfDatabase !== null) return [];
  const m = spec.model;
  return filledGroupsUsed(readCompactJson(tableSystem(spec.gpu.id), backend), {
    weightDtype: m.weightDtype,
    kvDtype: m.kvDtype,
    headDim: m.headDim,
    moe: m.moe !== null,
  });
}
