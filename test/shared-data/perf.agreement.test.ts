/**
 * Compact tables (committed JSON) vs the direct op-by-op interpolation of the parquet tables, on
 * the catalog's dense models at TP 1/2/4/8 (src/hardware/agreement.ts): GEMM shapes for
 * m = 1…16,384, decode attention for batch 1…256 × kv 512…32,768, prefill isl 128…16,384 with
 * prefix 0…32k, all-reduce, and the MoE layers of Qwen3-30B-A3B/235B-A22B and Mixtral-8x22B. Brief: MAPE ≤ 2–3 %, worst ≤ 10 %; the compact encoding does far
 * better, and the test holds it to MAPE ≤ 0.5 % and worst ≤ 2 %.
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { type AgreementRow, agreementQueries, compareTables } from "../../src/hardware/agreement.js";
import { measuredGpuIds } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { loadParquetTableData } from "../../src/hardware/parquetTables.js";
import { buildOpPerfTables } from "../../src/hardware/tables.js";
import { PERF_DATA } from "./data.js";

const MAX_MAPE = 0.005;
const MAX_WORST = 0.02;

describe("compact vs parquet op tables", () => {
  const results = new Map<string, AgreementRow[]>();

  beforeAll(async () => {
    if (!existsSync(PERF_DATA)) {
      throw new Error(
        `missing ${PERF_DATA}: the shared perf-data folder must sit beside the repo (../shared)`,
      );
    }
    for (const gpu of measuredGpuIds()) {
      const { data, spec } = await loadParquetTableData(PERF_DATA, gpu);
      results.set(
        gpu,
        compareTables(buildOpPerfTables(data, spec), loadCompactTables(gpu), agreementQueries(data)),
      );
    }
    const pct = (x: number): string => `${(x * 100).toFixed(2)} %`.padStart(8);
    const lines = ["gpu       op          points     MAPE    worst  worst at"];
    for (const [gpu, rows] of results) {
      for (const r of rows) {
        lines.push(
          `${gpu.padEnd(9)} ${r.kind.padEnd(10)} ${String(r.points).padStart(7)} ${pct(r.mape)} ${pct(r.worst)}  ${r.worstAt}`,
        );
      }
    }
    console.log(lines.join("\n"));
  }, 300_000);

  for (const gpu of measuredGpuIds()) {
    it(`${gpu}: MAPE ≤ ${MAX_MAPE * 100} % and worst ≤ ${MAX_WORST * 100} % for every op kind`, () => {
      const rows = results.get(gpu) ?? [];
      expect(rows.map((r) => r.kind).sort()).toEqual(["allreduce", "context", "gemm", "generation", "moe"]);
      for (const r of rows) {
        expect(r.points).toBeGreaterThan(200);
        expect(r.mape, `${gpu} ${r.kind} MAPE`).toBeLessThanOrEqual(MAX_MAPE);
        expect(r.worst, `${gpu} ${r.kind} worst at ${r.worstAt}`).toBeLessThanOrEqual(MAX_WORST);
      }
    });
  }
});
