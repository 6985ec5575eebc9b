/**
 * Derives `src/hardware/gpus.json` (GpuSpec per GPU, from `<gpu>/system.yaml`) and the compact op
 * tables `src/hardware/calibration/<gpu>.json` from an AIConfigurator-format perf-data tree, then
 * prints how closely the compact tables follow the parquet tables on the agreement grid.
 *
 *   node --import tsx scripts/calibrate.ts [--perf-data ../shared/perf-data] [--out src/hardware]
 *
 * The derivation lives in src/hardware/derive.ts; test/shared-data/perf.calibration.test.ts re-runs it and
 * compares with the committed files.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { agreementQueries, compareTables } from "../src/hardware/agreement.js";
import { decodeCompact } from "../src/hardware/compact.js";
import { deriveCalibration } from "../src/hardware/derive.js";
import { loadParquetTableData } from "../src/hardware/parquetTables.js";
import { buildOpPerfTables } from "../src/hardware/tables.js";

const { values } = parseArgs({
  options: {
    "perf-data": { type: "string", default: "../shared/perf-data" },
    out: { type: "string", default: "src/hardware" },
  },
});
const perfData = resolve(values["perf-data"] ?? "../shared/perf-data");
const out = resolve(values.out ?? "src/hardware");

const started = Date.now();
const { gpus, tables } = await deriveCalibration(perfData);
mkdirSync(join(out, "calibration"), { recursive: true });
const files = [join(out, "gpus.json")];
writeFileSync(files[0], `${JSON.stringify(gpus, null, 2)}\n`);
for (const [gpu, table] of Object.entries(tables)) {
  const file = join(out, "calibration", `${gpu}.json`);
  writeFileSync(file, `${JSON.stringify(table, null, 2)}\n`);
  files.push(file);
}
// Keep the files as the project's formatter writes them, so `biome check` stays clean.
execFileSync(resolve("node_modules/.bin/biome"), ["format", "--write", ...files], { stdio: "ignore" });
console.log(
  `derived ${Object.keys(gpus).length} GPUs from ${perfData} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);

const pct = (x: number): string => `${(x * 100).toFixed(2)} %`;
console.log("\ncompact vs parquet (agreement grid)");
console.log("gpu       | size KiB | op         | points | MAPE    | worst   | worst at");
for (const [gpu, table] of Object.entries(tables)) {
  const size = JSON.stringify(table, null, 2).length / 1024;
  const { data, spec } = await loadParquetTableData(perfData, gpu);
  const rows = compareTables(
    buildOpPerfTables(data, spec),
    buildOpPerfTables(decodeCompact(table), spec),
    agreementQueries(data),
  );
  for (const r of rows) {
    console.log(
      `${gpu.padEnd(9)} | ${size.toFixed(0).padStart(8)} | ${r.kind.padEnd(10)} | ${String(r.points).padStart(6)} | ` +
        `${pct(r.mape).padStart(7)} | ${pct(r.worst).padStart(7)} | ${r.worstAt}`,
    );
  }
}
