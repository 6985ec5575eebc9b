/**
 * How fast is a block-scaled FP8 GEMM on each backend at decode sizes? Compares, cell by cell on
 * the grid points both tables measure, AIConfigurator's TensorRT-LLM GEMM table (`fp8_block`,
 * TRT-LLM's own block-scale kernel) with the vLLM op tables fleetsim prices from (their per-tensor
 * `fp8` and `fp8_block` cells). docs/models.md "Block-scaled FP8 GEMMs" keeps the printed table.
 *
 *   node --import tsx scripts/compare-block-fp8-kernels.ts \
 *     --aic <ai-dynamo/aiconfigurator git dir> [--perf-data ../shared/perf-data] [--trtllm 1.2.0rc5]
 *
 * The TRT-LLM tables are read from the git dir's HEAD
 * (`aic-core/src/aiconfigurator_core/systems/data/<gpu>/gemm/trtllm/<version>/gemm_perf.parquet`).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Row, readRows, resolveVersion } from "../src/hardware/parquetData.js";

const { values } = parseArgs({
  options: {
    aic: { type: "string" },
    "perf-data": { type: "string", default: "../shared/perf-data" },
    trtllm: { type: "string", default: "1.2.0rc5" },
  },
});
if (values.aic === undefined) {
  console.error(
    "usage: compare-block-fp8-kernels.ts --aic <aiconfigurator git dir> [--perf-data DIR] [--trtllm VERSION]",
  );
  process.exit(2);
}
const GPUS = ["h100_sxm", "h200_sxm", "b200_sxm"] as const;
/** Decode-size token counts (rows of the GEMM), and the smallest weight shape compared. */
const M_BUCKETS: readonly (readonly [number, number])[] = [
  [1, 8],
  [9, 32],
  [33, 128],
  [129, 512],
];
const MIN_NK = 1024;

const key = (r: Row): string => `${r["m"]}|${r["n"]}|${r["k"]}`;

function cells(rows: readonly Row[], dtype: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r["gemm_dtype"] === dtype) out.set(key(r), Number(r["latency"]));
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const tmp = mkdtempSync(join(tmpdir(), "fleetsim-blockfp8-"));
try {
  console.log(
    `| GPU | m | cells | TRT-LLM fp8_block µs (median) | ÷ vLLM per-tensor fp8 (median, p10–p90) | ÷ vLLM fp8_block (median) |`,
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const gpu of GPUS) {
    const path = `aic-core/src/aiconfigurator_core/systems/data/${gpu}/gemm/trtllm/${values.trtllm}/gemm_perf.parquet`;
    const file = join(tmp, `${gpu}.parquet`);
    writeFileSync(
      file,
      execFileSync("git", ["-C", resolve(values.aic), "show", `HEAD:${path}`], { maxBuffer: 1 << 28 }),
    );
    const trt = cells(await readRows(file), "fp8_block");
    const dir = resolve(values["perf-data"]);
    const version = resolveVersion(dir, gpu);
    const vllmRows = await readRows(join(dir, gpu, "vllm", version, "gemm_perf.parquet"));
    const perTensor = cells(vllmRows, "fp8");
    const vllmBlock = cells(vllmRows, "fp8_block");
    for (const [lo, hi] of M_BUCKETS) {
      const t: number[] = [];
      const vsPerTensor: number[] = [];
      const vsBlock: number[] = [];
      for (const [k, ms] of trt) {
        const [m, n, kk] = k.split("|").map(Number) as [number, number, number];
        if (m < lo || m > hi || n < MIN_NK || kk < MIN_NK) continue;
        const p = perTensor.get(k);
        const b = vllmBlock.get(k);
        if (p === undefined || b === undefined) continue;
        t.push(ms * 1000);
        vsPerTensor.push(ms / p);
        vsBlock.push(ms / b);
      }
      if (t.length === 0) continue;
      const sorted = [...vsPerTensor].sort((a, b) => a - b);
      const q = (f: number): number => sorted[Math.min(sorted.length - 1, Math.floor(f * sorted.length))]!;
      console.log(
        `| ${gpu} | ${lo}–${hi} | ${t.length} | ${median(t).toFixed(1)} | ${median(vsPerTensor).toFixed(2)} (${q(0.1).toFixed(2)}–${q(0.9).toFixed(2)}) | ${median(vsBlock).toFixed(2)} |`,
      );
    }
  }
  const head = execFileSync("git", ["-C", resolve(values.aic), "rev-parse", "--short=8", "HEAD"])
    .toString()
    .trim();
  console.log(
    `\nTRT-LLM ${values.trtllm} tables of ${resolve(values.aic)} (HEAD ${head}); vLLM tables of ${resolve(values["perf-data"])}; shapes with n, k ≥ ${MIN_NK}.`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
