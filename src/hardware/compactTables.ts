import { existsSync, readFileSync } from "node:fs";
import { besideModule } from "../util/packageRoot.js";
import { gpuSpec, knownGpuIds, tableSystem } from "./catalog.js";
import { type CompactJson, decodeCompact } from "./compact.js";
import { HardwareError } from "./errors.js";
import type { OpPerfTables } from "./perfTables.js";
import { moeDistributionOf } from "./tableData.js";
import { buildOpPerfTables } from "./tables.js";
import { RooflineRescaledTables } from "./variants.js";

/**
 * Type-only references to the committed tables: they make `tsc` ship the JSON files next to the
 * compiled module, while `readCompactJson` reads only the one asked for. Add a GPU here when
 * `scripts/calibrate.ts` derives a new one.
 */
export type CommittedCalibration = [
  typeof import("./calibration/a100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/b200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/h100_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/h200_sxm.json", { with: { type: "json" }}),
  typeof import("./calibration/l40s.json", { with: { type: "json" }}),
];

/** The committed compact table data of `gpu` (`src/hardware/calibration/<gpu>.json`). */
export function readCompactJson(gpu: string): CompactJson {
  const spec = gpuSpec(tableSystem(gpu));
  const url = besideModule(import.meta.url, "hardware", `calibration/${spec.id}.json`);
  if (!existsSync(url)) {
    throw new HardwareError(`no compact op tables for '${gpu}' (have: ${knownGpuIds().join(", ")})`);
  }
  return JSON.parse(readFileSync(url, "utf8")) as CompactJson;
}

/**
 * Op tables of a built-in GPU from the compact tables committed in the project — no perf-data
 * directory needed. Same interpolation as `loadParquetTables`; agreement in docs/perf-tables.md.
 */
export function loadCompactTables(gpu: string, balancedMoe = false): OpPerfTables {
  const measured = tableSystem(gpu);
  const data = moeDistributionOf(decodeCompact(readCompactJson(measured)), balancedMoe, gpu);
  // The committed tables of this build: their built grids may be kept between runs.
  const scope = `compact|${measured}|${data.perfDataVersion}|${gpu}|${balancedMoe ? "balanced" : "measured"}`;
  const tables = buildOpPerfTables(data, gpuSpec(measured), scope);
  return measured === gpu ? tables : new RooflineRescaledTables(tables, gpuSpec(measured), gpuSpec(gpu));
}
