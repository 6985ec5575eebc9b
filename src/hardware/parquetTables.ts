import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gpuSpec, tableSystem } from "./catalog.js";
import type { GpuSpec } from "./gpu.js";
import { readPerfRows, toTableData } from "./parquetData.js";
import type { OpPerfTables } from "./perfTables.js";
import { parseSystemYaml } from "./systemSpec.js";
import { moeDistributionOf, type OpTableData } from "./tableData.js";
import { buildOpPerfTables } from "./tables.js";
import { GPU_VARIANTS, RooflineRescaledTables, variantSpec } from "./variants.js";

/** Every usable row of `<dir>/<gpu>/vllm/<version>/*.parquet` with the GPU's spec. */
export async function loadParquetTableData(
  dir: string,
  gpu: string,
  version?: string,
): Promise<{ data: OpTableData; spec: GpuSpec }> {
  const rows = await readPerfRows(dir, gpu, version);
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
 * built-in catalog) and interpolates every measured row. A memory variant (`variants.ts`) reads
 * its base system's tree.
 */
export async function loadParquetTables(
  dir: string,
  gpu: string,
  version?: string,
  balancedMoe = false,
): Promise<OpPerfTables> {
  const measured = tableSystem(gpu);
  const { data, spec } = await loadParquetTableData(dir, measured, version);
  const tables = buildOpPerfTables(moeDistributionOf(data, balancedMoe, gpu), spec);
  // A memory variant reads its base system's tree and rescales it (variants.ts).
  return measured === gpu
    ? tables
    : new RooflineRescaledTables(tables, spec, variantSpec(gpu, GPU_VARIANTS[gpu], spec));
}
