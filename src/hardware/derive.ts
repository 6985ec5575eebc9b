import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type CompactJson, compactTableData, encodeCompact } from "./compact.js";
import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";
import { readPerfRows, resolveVersion, toTableData } from "./parquetData.js";
import { parseSystemYaml } from "./systemSpec.js";

/** Everything `scripts/calibrate.ts` writes: `gpus.json` and `calibration/<gpu>.json`. */
export interface Calibration {
  readonly gpus: Readonly<Record<string, GpuSpec>>;
  readonly tables: Readonly<Record<string, CompactJson>>;
}

/** GPU ids of a perf-data tree: directories with a `system.yaml` and a `vllm/` folder. */
export function perfDataGpus(dir: string): string[] {
  if (!existsSync(dir)) throw new HardwareError(`perf-data directory ${dir} does not exist`);
  return readdirSync(dir)
    .filter((d) => existsSync(join(dir, d, "system.yaml")) && existsSync(join(dir, d, "vllm")))
    .sort();
}

/** Derives one GPU's spec and compact tables from `<dir>/<gpu>/`. */
export async function deriveGpu(dir: string, gpu: string): Promise<{ spec: GpuSpec; table: CompactJson }> {
  const version = resolveVersion(dir, gpu);
  const rows = await readPerfRows(dir, gpu, version);
  const yaml = join(dir, gpu, "system.yaml");
  const spec = parseSystemYaml(readFileSync(yaml, "utf8"), gpu, rows.device, version, yaml);
  return { spec, table: encodeCompact(compactTableData(toTableData(rows), spec)) };
}

/** Derives the GPU catalog and compact tables of every GPU in a perf-data tree. */
export async function deriveCalibration(dir: string): Promise<Calibration> {
  const gpus: Record<string, GpuSpec> = {};
  const tables: Record<string, CompactJson> = {};
  for (const gpu of perfDataGpus(dir)) {
    const d = await deriveGpu(dir, gpu);
    gpus[gpu] = d.spec;
    tables[gpu] = d.table;
  }
  return { gpus, tables };
}
