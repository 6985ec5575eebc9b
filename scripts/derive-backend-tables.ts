/**
 * Derives the compact op tables of the SGLang and TensorRT-LLM backends,
 * `src/hardware/calibration/<backend>/<gpu>.json`, from AIConfigurator's published perf data
 * (`aic-core/src/aiconfigurator_core/systems/data/<gpu>/<op>/<backend>/<version>/*.parquet`),
 * then prints how closely the compact tables follow the parquet rows on the agreement grid.
 *
 *   node --import tsx scripts/derive-backend-tables.ts --aic <ai-dynamo/aiconfigurator git dir> \
 *     [--ref HEAD] [--out src/hardware]
 *
 * The git dir may be a bare mirror or a checkout (files are read with `git show <ref>:<path>`).
 * For each backend and built-in measured GPU it takes the first version of
 * `BACKEND_TABLE_VERSIONS` (src/hardware/backendTables.ts) with GEMM, attention and MoE tables,
 * compacts them as `scripts/calibrate.ts` does the vLLM tables, and fills what they lack from the
 * committed vLLM tables of the same GPU (`fillFromVllm`). docs/backends.md "Timing" keeps the
 * printed agreement.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { agreementQueries, compareTables } from "../src/hardware/agreement.js";
import {
  BACKEND_LABEL,
  BACKEND_TABLE_VERSIONS,
  fillFromVllm,
  type OtherBackend,
} from "../src/hardware/backendTables.js";
import { gpuSpec, measuredGpuIds } from "../src/hardware/catalog.js";
import { compactTableData, decodeCompact, encodeCompact } from "../src/hardware/compact.js";
import { readCompactJson } from "../src/hardware/compactTables.js";
import { readPerfRows, toTableData } from "../src/hardware/parquetData.js";
import { buildOpPerfTables } from "../src/hardware/tables.js";
import { AIC_DATA, aicSourceFromArgs } from "./aicSource.js";

const { commit, out, git } = aicSourceFromArgs("derive-backend-tables.ts");
const DATA = AIC_DATA;

/** Files the derivation reads, by op folder, as AIC lays them out. */
const REQUIRED = [
  ["gemm", "gemm_perf.parquet"],
  ["attention", "context_attention_perf.parquet"],
  ["attention", "generation_attention_perf.parquet"],
  ["moe", "moe_perf.parquet"],
] as const;
const OPTIONAL = [["comm", "custom_allreduce_perf.parquet"]] as const;

const tmp = mkdtempSync(join(tmpdir(), "fleetsim-backend-tables-"));
const written: string[] = [];
const report: string[] = [];
try {
  for (const backend of Object.keys(BACKEND_TABLE_VERSIONS) as OtherBackend[]) {
    for (const gpu of measuredGpuIds()) {
      const listing = new Set(
        git(["ls-tree", "-r", "--name-only", commit, "--", `${DATA}/${gpu}/`])
          .toString()
          .split("\n")
          .filter((l) => l !== ""),
      );
      const path = (op: string, version: string, file: string): string =>
        `${DATA}/${gpu}/${op}/${backend}/${version}/${file}`;
      const version = BACKEND_TABLE_VERSIONS[backend].find((v) =>
        REQUIRED.every(([op, file]) => listing.has(path(op, v, file))),
      );
      if (version === undefined) {
        report.push(
          `${backend} ${gpu}: no full table set among ${BACKEND_TABLE_VERSIONS[backend].join(", ")}`,
        );
        continue;
      }
      // Lay the files out as a perf-data tree (`<gpu>/<backend>/<version>/`), which readPerfRows reads.
      const dir = join(tmp, gpu, backend, version);
      mkdirSync(dir, { recursive: true });
      for (const [op, file] of [...REQUIRED, ...OPTIONAL]) {
        if (listing.has(path(op, version, file))) {
          writeFileSync(join(dir, file), git(["show", `${commit}:${path(op, version, file)}`]));
        }
      }
      // NCCL all-reduce: the fallback where a GPU has no custom all-reduce rows (newest collection).
      const nccl = [...listing].filter(
        (l) => l.startsWith(`${DATA}/${gpu}/comm/nccl/`) && l.endsWith("/nccl_perf.parquet"),
      );
      nccl.sort();
      if (nccl.length > 0)
        writeFileSync(join(tmp, gpu, "nccl_perf.parquet"), git(["show", `${commit}:${nccl.at(-1)}`]));

      const rows = await readPerfRows(tmp, gpu, version, backend);
      const spec = gpuSpec(gpu);
      const full = toTableData(rows);
      const merged = fillFromVllm(compactTableData(full, spec), decodeCompact(readCompactJson(gpu)));
      const json = encodeCompact(
        merged,
        `Derived by scripts/derive-backend-tables.ts from ai-dynamo/aiconfigurator@${commit} ` +
          `(${DATA}/${gpu}/*/${backend}/${version}), ${BACKEND_LABEL[backend]} ${version}; ` +
          "groups it lacks from the vLLM tables (filledFromVllm); format in docs/perf-tables.md.",
      );
      const file = join(out, "calibration", backend, `${gpu}.json`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
      written.push(file);
      const sizeKiB = JSON.stringify(json, null, 2).length / 1024;
      const agreement = compareTables(
        buildOpPerfTables(full, spec),
        buildOpPerfTables(decodeCompact(json), spec),
        agreementQueries(full),
      );
      for (const r of agreement) {
        report.push(
          `| ${backend} | ${version} | ${gpu} | ${sizeKiB.toFixed(0)} | ${r.kind} | ${r.points} | ` +
            `${(r.mape * 100).toFixed(2)} % | ${(r.worst * 100).toFixed(2)} % |`,
        );
      }
      report.push(
        `| ${backend} | ${version} | ${gpu} | | filled from vLLM: ${merged.filledFromVllm?.join(", ") || "none"} | | | |`,
      );
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
// Keep the files as the project's formatter writes them, so `biome check` stays clean.
if (written.length > 0) {
  execFileSync(resolve("node_modules/.bin/biome"), ["format", "--write", ...written], { stdio: "ignore" });
}
console.log(`derived ${written.length} backend tables from ai-dynamo/aiconfigurator@${commit}\n`);
console.log("| backend | version | GPU | size KiB | op | points | MAPE | worst |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const line of report) console.log(line);
