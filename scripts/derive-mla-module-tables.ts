/**
 * Derives `src/hardware/calibration/mla/vllm.json`, vLLM's whole-module MLA timings
 * (src/hardware/mlaModule.ts), from AIConfigurator's published perf data
 * (`aic-core/src/aiconfigurator_core/systems/data/<gpu>/mla/vllm/0.24.0/mla_{generation,context}_module_perf.parquet`).
 *
 *   node --import tsx scripts/derive-mla-module-tables.ts --aic <ai-dynamo/aiconfigurator git dir> \
 *     [--ref HEAD] [--out src/hardware]
 *
 * The git dir may be a bare mirror or a checkout (files are read with `git show <ref>:<path>`).
 * Which rows: decode, the one attention backend the table has for the KV dtype (FlashMLA for an
 * FP8 cache on Hopper, FlashAttention-MLA for BF16, FlashInfer-MLA on B200, Triton-MLA on L40S);
 * prefill, every backend's rows together, since vLLM runs short prompts on the MLA decode kernel
 * and longer ones on FlashAttention and the collection measured each length on the one it ran
 * (FlashMLA up to 128 tokens, FlashAttention from 256 on H100/H200 with an FP8 cache), taking
 * FlashAttention's where two measure the same cell (TRT-LLM's ragged kernel on B200 too). Those
 * are the rows the reference's vLLM DeepSeek model reads (found by querying it at grid points,
 * docs/conformance.md "Forward-pass estimates"). A cell
 * the collection skipped (the largest batches at the longest lengths) is filled in proportion to
 * the batch from the largest measured batch below it at the same length.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type {
  MlaModuleFileJson,
  MlaModuleGridJson,
  MlaModuleVariantJson,
} from "../src/hardware/mlaModule.js";
import { type Row, readRows } from "../src/hardware/parquetData.js";
import { AIC_DATA, aicSourceFromArgs } from "./aicSource.js";

const { commit, out, git } = aicSourceFromArgs("derive-mla-module-tables.ts");
const VERSION = "0.24.0";
/** The built-in GPUs whose vLLM tables have the modules (A100's have no MLA rows). */
const GPUS = ["b200_sxm", "h100_sxm", "h200_sxm", "l40s"] as const;
const KV_DTYPES = ["bfloat16", "fp8"] as const;
const GEMM_DTYPES = ["bfloat16", "fp8_block"] as const;
const PREFERRED_KERNEL = "FLASH_ATTN";

const sorted = (xs: Iterable<number>): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** The (heads × batch × length) grid of `rows`, holes filled in proportion to the batch. */
function grid(all: readonly Row[], lengthKey: "step" | "isl"): MlaModuleGridJson {
  // One row per cell: FlashAttention's where another kernel measured the same cell too.
  const byCell = new Map<string, Row>();
  for (const r of all) {
    const k = `${r["num_heads"]}|${r["batch_size"]}|${r[lengthKey]}`;
    const had = byCell.get(k);
    if (had === undefined || r["kernel_source"] === PREFERRED_KERNEL) byCell.set(k, r);
  }
  const rows = [...byCell.values()];
  const heads = sorted(rows.map((r) => Number(r["num_heads"])));
  const batch = sorted(rows.map((r) => Number(r["batch_size"])));
  const length = sorted(rows.map((r) => Number(r[lengthKey])));
  const cell = new Map<string, number>();
  for (const r of rows) {
    cell.set(`${r["num_heads"]}|${r["batch_size"]}|${r[lengthKey]}`, Number(r["latency"]));
  }
  const ms = heads.map(() => batch.map(() => length.map(() => Number.NaN)));
  heads.forEach((h, i) => {
    length.forEach((s, k) => {
      batch.forEach((b, j) => {
        const v = cell.get(`${h}|${b}|${s}`);
        if (v !== undefined) ms[i]![j]![k] = v;
        else if (j > 0 && Number.isFinite(ms[i]![j - 1]![k]))
          ms[i]![j]![k] = (ms[i]![j - 1]![k]! * b) / batch[j - 1]!;
      });
    });
    // A length the smallest batches never measured: in proportion to the length from below.
    batch.forEach((_b, j) => {
      length.forEach((s, k) => {
        if (!Number.isFinite(ms[i]![j]![k]) && k > 0)
          ms[i]![j]![k] = (ms[i]![j]![k - 1]! * s) / length[k - 1]!;
      });
    });
  });
  for (const plane of ms) {
    for (const row of plane) {
      row.forEach((v, k) => {
        if (!Number.isFinite(v)) throw new Error(`unfillable cell in a ${lengthKey} grid at index ${k}`);
        row[k] = Math.round(v * 1e5) / 1e5;
      });
    }
  }
  const kernels = [...new Set(rows.map((r) => String(r["kernel_source"])))].sort();
  return { kernel: kernels.join("+"), heads, batch, length, ms };
}

const tmp = mkdtempSync(join(tmpdir(), "fleetsim-mla-module-"));
try {
  const read = async (gpu: string, phase: "generation" | "context"): Promise<Row[]> => {
    const path = `${AIC_DATA}/${gpu}/mla/vllm/${VERSION}/mla_${phase}_module_perf.parquet`;
    const file = join(tmp, `${gpu}-${phase}.parquet`);
    writeFileSync(file, git(["show", `${commit}:${path}`]));
    return readRows(file);
  };
  const gpus: Record<string, MlaModuleVariantJson[]> = {};
  for (const gpu of GPUS) {
    const gen = await read(gpu, "generation");
    const ctx = await read(gpu, "context");
    const variants: MlaModuleVariantJson[] = [];
    for (const kvDtype of KV_DTYPES) {
      for (const gemmDtype of GEMM_DTYPES) {
        const g = gen.filter((r) => r["kv_cache_dtype"] === kvDtype && r["gemm_type"] === gemmDtype);
        const c = ctx.filter((r) => r["kv_cache_dtype"] === kvDtype && r["gemm_type"] === gemmDtype);
        if (g.length === 0 || c.length === 0) continue;
        if (new Set(g.map((r) => r["kernel_source"])).size !== 1) {
          throw new Error(`${gpu}: more than one decode kernel for KV ${kvDtype}, GEMM ${gemmDtype}`);
        }
        variants.push({ kvDtype, gemmDtype, generation: grid(g, "step"), context: grid(c, "isl") });
        console.log(
          `${gpu} kv ${kvDtype} gemm ${gemmDtype}: ${g.length} decode rows (${g[0]!["kernel_source"]}), ${c.length} prefill rows`,
        );
      }
    }
    gpus[gpu] = variants;
  }
  const table: MlaModuleFileJson = {
    source: `ai-dynamo/aiconfigurator@${commit.slice(0, 8)}:${AIC_DATA}/<gpu>/mla/vllm/${VERSION}/mla_{generation,context}_module_perf.parquet`,
    note: "Derived by scripts/derive-mla-module-tables.ts; ms per layer; read by src/hardware/mlaModule.ts.",
    gpus,
  };
  const dir = join(out, "calibration", "mla");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "vllm.json");
  writeFileSync(file, `${JSON.stringify(table)}\n`);
  // Keep the file as the project's formatter writes it, so `biome check` stays clean.
  execFileSync(resolve("node_modules/.bin/biome"), ["format", "--write", file], { stdio: "ignore" });
  console.log(`wrote ${file}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
