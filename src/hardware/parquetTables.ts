import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { provenanceOf, type TableBackend, type TableProvenance } from "./backendTables.js";
import { gpuSpec, tableSystem } from "./catalog.js";
import type { GpuSpec } from "./gpu.js";
import { readPerfRows, toTableData } from "./parquetData.js";
import type { OpPerfTables } from "./perfTables.js";
import { parseSystemYaml } from "./systemSpec.js";
import { type ContextExtrapolation, moeDistributionOf, type OpTableData } from "./tableData.js";
import { buildOpPerfTables } from "./tables.js";
import { GPU_VARIANTS, RooflineRescaledTables, variantSpec } from "./variants.js";

/** Every usable row of `<dir>/<gpu>/<backend>/<version>/*.parquet` (vLLM unless named) with the GPU's spec. */
export async function loadParquetTableData(
  dir: string,
  gpu: string,
  version?: string,
  backend: TableBackend = "vllm",
): Promise<{ data: OpTableData; spec: GpuSpec }> {
  const rows = await readPerfRows(dir, gpu, version, backend);
  const yaml = join(dir, gpu, "system.yaml");
  const spec = existsSync(yaml)
    ? parseSystemYaml(readFileSync(yaml, "utf8"), gpu, rows.device, rows.version, yaml)
    : { ...gpuSpec(gpu), perfDataVersion: rows.version };
  return { data: toTableData(rows), spec };
}

/**
 * The direct op-by-op interpolation of the silicon tables: reads an AIConfigurator
 * `systems/data`-style tree `<dir>/<gpu>/vllm/<version>/*.parquet` (`version` defaults to the only
 * one present; `<dir>/<gpu>/system.yaml` supplies the roofline used for SOL clamping, else the
 * built-in catalog) and interpolates every measured row. With `backend` SGLang or TensorRT-LLM it
 * reads `<dir>/<gpu>/<backend>/` where the tree has that folder (else vLLM's, as the compact
 * tables fall back). A memory variant (`variants.ts`) reads its base system's tree.
 */
export async function loadParquetTables(
  ...args: Parameters<typeof loadParquetTablesWithProvenance>
): Promise<OpPerfTables> {
  return (await loadParquetTablesWithProvenance(...args)).tables;
}

/** `loadParquetTables`, with what the tables it read were measured on (as the compact loader). */
export async function loadParquetTablesWithProvenance(
  dir: string,
  gpu: string,
  version?: string,
  balancedMoe = false,
  backend: TableBackend = "vllm",
  contextBeyond: ContextExtrapolation = "sqrt",
): Promise<{ tables: OpPerfTables; provenance: TableProvenance }> {
  const measured = tableSystem(gpu);
  const source = backend !== "vllm" && existsSync(join(dir, measured, backend)) ? backend : "vllm";
  const { data, spec } = await loadParquetTableData(dir, measured, version, source);
  const tables = buildOpPerfTables(moeDistributionOf(data, balancedMoe, gpu), spec, null, contextBeyond);
  // A memory variant reads its base system's tree and rescales it (variants.ts).
  return {
    provenance: provenanceOf(data),
    tables:
      measured === gpu
        ? tables
        : new RooflineRescaledTables(tables, spec, variantSpec(gpu, GPU_VARIANTS[gpu], spec)),
  };
}
