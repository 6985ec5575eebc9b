import { existsSync, readFileSync } from "node:fs";
import { besideModule } from "../util/packageRoot.js";
import { provenanceOf, type TableBackend, type TableProvenance } from "./backendTables.js";
import { gpuSpec, knownGpuIds, tableSystem } from "./catalog.js";
import { type CompactJson, decodeCompact } from "./compact.js";
import { HardwareError } from "./errors.js";
import type { OpPerfTables } from "./perfTables.js";
import { type ContextExtrapolation, moeDistributionOf } from "./tableData.js";
import { buildOpPerfTables } from "./tables.js";
import { RooflineRescaledTables } from "./variants.js";

/**
 * Type-only references to the committed tables: they make `tsc` ship the JSON files next to the
 * compiled module, while `readCompactJson` reads only the one asked for. Add a GPU here when
 * `scripts/calibrate.ts` (vLLM) or `scripts/derive-backend-tables.ts` (SGLang, TensorRT-LLM)
 * derives a new one.
 */
export type CommittedCalibration = [
  typeof import("./calibration/a100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/b200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/h100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/h200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/l40s.json", { with: { type: "json" }}),
  typeof import("./calibration/sglang/a100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/sglang/b200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/sglang/h100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/sglang/h200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/sglang/l40s.json", { with: { type: "json" }}),
  typeof import("./calibration/trtllm/a100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/trtllm/b200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/trtllm/h100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/trtllm/h200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/trtllm/l40s.json", { with: { type: "json" }}),
];

function compactUrl(gpu: string, backend: TableBackend): URL {
  const id = gpuSpec(tableSystem(gpu)).id;
  const file = backend === "vllm" ? `calibration/${id}.json` : `calibration/${backend}/${id}.json`;
  return besideModule(import.meta.url, "hardware", file);
}

/**
 * The committed compact table data of `gpu`: `src/hardware/calibration/<gpu>.json` (vLLM), or
 * `calibration/<backend>/<gpu>.json` for SGLang and TensorRT-LLM.
 */
export function readCompactJson(gpu: string, backend: TableBackend = "vllm"): CompactJson {
  const url = compactUrl(gpu, backend);
  const cached = parsed.get(url.href);
  if (cached !== undefined) return cached;
  if (!existsSync(url)) {
    throw new HardwareError(
      `no compact ${backend} op tables for '${gpu}' (have: ${knownGpuIds().join(", ")})`,
    );
  }
  const json = JSON.parse(readFileSync(url, "utf8")) as CompactJson;
  parsed.set(url.href, json);
  return json;
}

/** Files parsed in this process: a run reads one GPU's file for its timing and its warnings. */
const parsed = new Map<string, CompactJson>();

/** Whether `backend` has its own committed op tables for `gpu` (vLLM always has). */
export function hasCompactTables(gpu: string, backend: TableBackend): boolean {
  return backend === "vllm" || existsSync(compactUrl(gpu, backend));
}

/**
 * Op tables of a built-in GPU from the compact tables committed in the project — no perf-data
 * directory needed. Same interpolation as `loadParquetTables`; agreement in docs/perf-tables.md.
 * `backend` reads that backend's own tables where they exist (docs/backends.md "Timing"), else
 * vLLM's.
 */
export function loadCompactTables(
  gpu: string,
  balancedMoe = false,
  backend: TableBackend = "vllm",
  contextBeyond: ContextExtrapolation = "sqrt",
): OpPerfTables {
  return loadCompactTablesWithProvenance(gpu, balancedMoe, backend, contextBeyond).tables;
}

export function loadCompactTablesWithProvenance(
  gpu: string,
  balancedMoe = false,
  backend: TableBackend = "vllm",
  contextBeyond: ContextExtrapolation = "sqrt",
): { tables: OpPerfTables; provenance: TableProvenance } {
  const measured = tableSystem(gpu);
  const source = hasCompactTables(measured, backend) ? backend : "vllm";
  const data = moeDistributionOf(decodeCompact(readCompactJson(measured, source)), balancedMoe, gpu);
  // The committed tables of this build: their built grids may be kept between runs.
  const scope = `compact|${source}|${measured}|${data.perfDataVersion}|${gpu}|${balancedMoe ? "balanced" : "measured"}`;
  const tables = buildOpPerfTables(data, gpuSpec(measured), scope, contextBeyond);
  return {
    tables: measured === gpu ? tables : new RooflineRescaledTables(tables, gpuSpec(measured), gpuSpec(gpu)),
    provenance: provenanceOf(data),
  };
}
