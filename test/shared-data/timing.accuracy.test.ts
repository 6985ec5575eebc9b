/**
 * Accuracy of the shipped (compact, calibrated) op tables against a direct op-by-op interpolation
 * of the silicon-measured parquet tables in ../shared/perf-data, through the same op-level model:
 * prefill 128…16,384 new tokens with 0…32k prefix, decode batch 1…256 × context 512…32,768.
 * Issue 3 acceptance: MAPE ≤ 5 % and worst case ≤ 15 % per model/GPU.
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { loadParquetTables } from "../../src/hardware/parquetTables.js";
import type { OpPerfTables } from "../../src/hardware/perfTables.js";
import type { ModelArchitecture } from "../../src/model/architecture.js";
import { resolveModel } from "../../src/model/resolve.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { PERF_DATA } from "./data.js";

interface Case {
  readonly model: string;
  readonly gpu: string;
  readonly tensor: number;
}

const CASES: Case[] = [];
for (const gpu of ["h100_sxm", "h200_sxm", "b200_sxm"]) {
  CASES.push({ model: "meta-llama/Llama-3.1-8B", gpu, tensor: 1 });
  CASES.push({ model: "nvidia/Llama-3.1-8B-Instruct-FP8", gpu, tensor: 1 });
}
for (const tensor of [4, 8]) CASES.push({ model: "meta-llama/Llama-3.1-70B", gpu: "h200_sxm", tensor });
for (const tensor of [1, 2]) CASES.push({ model: "Qwen/Qwen3-32B", gpu: "h200_sxm", tensor });

const PREFILL_NEW = [128, 512, 2048, 8192, 16384];
const PREFILL_PREFIX = [0, 1024, 8192, 32768];
const DECODE_BATCH = [1, 4, 16, 64, 256];
const DECODE_CONTEXT = [512, 2048, 8192, 32768];

function timing(model: ModelArchitecture, gpu: string, tensor: number, tables: OpPerfTables): OpLevelTiming {
  return new OpLevelTiming(model, gpuSpec(gpu), tables, {
    tensor,
    pipeline: 1,
    attentionData: 1,
    moeTensor: 1,
    moeExpert: 1,
  });
}

interface Row {
  name: string;
  points: number;
  mape: number;
  worst: number;
  worstAt: string;
}

const rows: Row[] = [];

describe("op-level timing: compact calibrated tables vs direct silicon-table interpolation", () => {
  const parquet = new Map<string, OpPerfTables>();

  beforeAll(async () => {
    expect(
      existsSync(PERF_DATA),
      `missing ${PERF_DATA}: the shared data folder must sit beside the repo`,
    ).toBe(true);
    for (const gpu of new Set(CASES.map((c) => c.gpu)))
      parquet.set(gpu, await loadParquetTables(PERF_DATA, gpu));
  }, 300_000);

  for (const c of CASES) {
    it(`${c.model} on ${c.gpu} TP${c.tensor}: MAPE ≤ 5 %, worst ≤ 15 %`, () => {
      const model = resolveModel(c.model);
      const fast = timing(model, c.gpu, c.tensor, loadCompactTables(c.gpu));
      const direct = timing(model, c.gpu, c.tensor, parquet.get(c.gpu)!);
      let sum = 0;
      let n = 0;
      let worst = 0;
      let worstAt = "";
      const add = (est: number, ref: number, at: string): void => {
        const err = Math.abs(est - ref) / ref;
        sum += err;
        n++;
        if (err > worst) {
          worst = err;
          worstAt = at;
        }
      };
      for (const isl of PREFILL_NEW) {
        for (const prefix of PREFILL_PREFIX) {
          add(
            fast.prefillMs(1, isl + prefix, prefix),
            direct.prefillMs(1, isl + prefix, prefix),
            `prefill ${isl}+${prefix}`,
          );
        }
      }
      for (const b of DECODE_BATCH) {
        for (const ctx of DECODE_CONTEXT) {
          add(
            fast.decodeMs(b, b * ctx, ctx, 1e9),
            direct.decodeMs(b, b * ctx, ctx, 1e9),
            `decode b${b} ctx${ctx}`,
          );
        }
      }
      const row = {
        name: `${c.model} ${c.gpu} TP${c.tensor}`,
        points: n,
        mape: (100 * sum) / n,
        worst: 100 * worst,
        worstAt,
      };
      rows.push(row);
      expect(row.mape).toBeLessThanOrEqual(5);
      expect(row.worst).toBeLessThanOrEqual(15);
    });
  }

  it("prints the accuracy table", () => {
    const lines = rows.map(
      (r) =>
        `${r.name.padEnd(50)} ${String(r.points).padStart(4)} ${r.mape.toFixed(2).padStart(7)} % ${r.worst.toFixed(2).padStart(7)} %  (${r.worstAt})`,
    );
    console.log(
      `${"case".padEnd(50)} ${"pts".padStart(4)} ${"MAPE".padStart(9)} ${"worst".padStart(9)}\n${lines.join("\n")}`,
    );
    expect(rows).toHaveLength(CASES.length);
  });
});
