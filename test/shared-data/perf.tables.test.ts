/**
 * The op tables against the measured rows: exact hits, interpolation between measured points,
 * AIC's prefix rule, degenerate queries, errors, and query speed. Needs ../shared/perf-data
 * (npm run test:shared); the GPU catalog without it: test/hardware/gpu.catalog.test.ts.
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import type { KvDtype, WeightDtype } from "../../src/hardware/dtypes.js";
import { HardwareError } from "../../src/hardware/errors.js";
import type { GpuSpec } from "../../src/hardware/gpu.js";
import { type PerfRows, readPerfRows } from "../../src/hardware/parquetData.js";
import { loadParquetTables } from "../../src/hardware/parquetTables.js";
import type { AttentionHeads, OpPerfTables } from "../../src/hardware/perfTables.js";
import { gemmSolMs, generationAttentionSolMs } from "../../src/hardware/sol.js";
import { PERF_DATA } from "./data.js";

const GPU = "h200_sxm";

/** Deterministic sample of `n` items. */
function sample<T>(xs: readonly T[], n: number): T[] {
  const step = Math.max(1, Math.floor(xs.length / n));
  return xs.filter((_, i) => i % step === 0).slice(0, n);
}

const num = (v: unknown): number => v as number;
/** The attention heads of a query, in the order the tables once took them. */
const attn = (numHeads: number, numKvHeads: number, headDim: number, kvDtype: KvDtype): AttentionHeads => ({
  numHeads,
  numKvHeads,
  headDim,
  kvDtype,
});

describe(`op tables on ${GPU}`, () => {
  let rows: PerfRows;
  let parquet: OpPerfTables;
  let compact: OpPerfTables;
  let spec: GpuSpec;

  beforeAll(async () => {
    expect(
      existsSync(PERF_DATA),
      `missing ${PERF_DATA}: the shared perf-data folder must sit beside the repo`,
    ).toBe(true);
    rows = await readPerfRows(PERF_DATA, GPU);
    parquet = await loadParquetTables(PERF_DATA, GPU);
    compact = loadCompactTables(GPU);
    spec = gpuSpec(GPU);
  }, 120_000);

  it("GEMM: exact hits return the measured latency (cells at or above the roofline)", () => {
    const hits = sample(
      rows.gemm.filter((r) => ["bfloat16", "fp8", "fp8_block"].includes(r["gemm_dtype"] as string)),
      2000,
    );
    let checked = 0;
    for (const r of hits) {
      const [d, m, n, k, lat] = [
        r["gemm_dtype"] as WeightDtype,
        num(r["m"]),
        num(r["n"]),
        num(r["k"]),
        num(r["latency"]),
      ];
      const expected = Math.max(lat, gemmSolMs(spec, d, m, n, k));
      expect(parquet.gemm(d, m, n, k)).toBe(expected);
      expect(compact.gemm(d, m, n, k) / expected - 1).toBeLessThan(0.0021);
      checked++;
    }
    expect(checked).toBe(hits.length);
  });

  it("attention, all-reduce and MoE: exact hits return the measured latency", () => {
    const full = (r: PerfRows["contextAttention"][number]): boolean => num(r["window_size"]) === 0;
    for (const r of sample(rows.contextAttention.filter(full), 500)) {
      const heads = attn(
        num(r["num_heads"]),
        num(r["num_key_value_heads"]),
        num(r["head_dim"]),
        r["kv_cache_dtype"] as KvDtype,
      );
      expect(parquet.contextAttention(heads, num(r["batch_size"]), num(r["isl"]), 0)).toBe(num(r["latency"]));
    }
    for (const r of sample(rows.generationAttention.filter(full), 500)) {
      const [b, kv, h, nkv, hd, dt] = [
        num(r["batch_size"]),
        num(r["step"]),
        num(r["num_heads"]),
        num(r["num_key_value_heads"]),
        num(r["head_dim"]),
        r["kv_cache_dtype"] as KvDtype,
      ];
      const expected = Math.max(num(r["latency"]), generationAttentionSolMs(spec, b, kv, h, nkv, hd, dt));
      expect(parquet.generationAttention(attn(h, nkv, hd, dt), b, kv)).toBe(expected);
    }
    for (const r of rows.customAllReduce.filter((x) => x["backend"] === "vllm_graph")) {
      // message_size counts BF16 elements; the interface takes bytes.
      expect(parquet.allReduce(num(r["num_gpus"]), num(r["message_size"]) * 2)).toBe(num(r["latency"]));
    }
    const moe = sample(
      rows.moe.filter(
        (r) =>
          r["distribution"] === "power_law_1.2" &&
          ["bfloat16", "fp8", "fp8_block"].includes(r["moe_dtype"] as string),
      ),
      500,
    );
    for (const r of moe) {
      const got = parquet.moe(
        {
          dtype: r["moe_dtype"] as WeightDtype,
          hiddenSize: num(r["hidden_size"]),
          interSize: num(r["inter_size"]),
          topK: num(r["topk"]),
          numExperts: num(r["num_experts"]),
          moeTp: num(r["moe_tp_size"]),
          moeEp: num(r["moe_ep_size"]),
        },
        num(r["num_tokens"]),
      );
      expect(got).toBe(num(r["latency"]));
    }
  });

  it("interpolation between two measured points lies between them", () => {
    // GEMM along m (n, k on the grid), decode attention along kv, prefill along isl.
    const m1 = 512;
    const m2 = 513;
    for (const [n, k] of [
      [4096, 4096],
      [6144, 4096],
      [51200, 8192],
    ]) {
      for (const [a, b] of [
        [1024, 1025],
        [1025, 1280],
        [m1, m2],
        [4353, 8192],
      ]) {
        const va = parquet.gemm("bfloat16", a, n, k);
        const vb = parquet.gemm("bfloat16", b, n, k);
        const mid = parquet.gemm("bfloat16", (a + b) / 2, n, k);
        expect(mid).toBeGreaterThanOrEqual(Math.min(va, vb));
        expect(mid).toBeLessThanOrEqual(Math.max(va, vb));
      }
    }
    for (const [a, b] of [
      [1023, 2047],
      [4095, 8191],
    ]) {
      const va = parquet.generationAttention(attn(32, 8, 128, "bfloat16"), 16, a);
      const vb = parquet.generationAttention(attn(32, 8, 128, "bfloat16"), 16, b);
      const mid = parquet.generationAttention(attn(32, 8, 128, "bfloat16"), 16, 3000);
      if (a === 1023) {
        expect(mid).toBeGreaterThan(vb);
      } else {
        expect(mid).toBeLessThan(va);
      }
    }
    const p1 = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 4096, 0);
    const p2 = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 6144, 0);
    const pm = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 5000, 0);
    expect(pm).toBeGreaterThan(p1);
    expect(pm).toBeLessThan(p2);
  });

  it("prefix: full causal attention over prefix + new tokens, keeping the new rows' share (AIC)", () => {
    const full = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 2, 8192, 0);
    const withPrefix = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 2, 4096, 4096);
    expect(withPrefix).toBeCloseTo(full * (1 - 0.25), 12);
    const shortAlone = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 2, 4096, 0);
    expect(withPrefix).toBeGreaterThan(shortAlone);
  });

  it("degenerate queries cost nothing; one GPU needs no all-reduce", () => {
    expect(parquet.gemm("bfloat16", 0, 4096, 4096)).toBe(0);
    expect(parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 0, 100)).toBe(0);
    expect(parquet.generationAttention(attn(32, 8, 128, "bfloat16"), 0, 100)).toBe(0);
    expect(parquet.allReduce(1, 1 << 20)).toBe(0);
    expect(
      parquet.moe(
        { dtype: "bfloat16", hiddenSize: 2048, interSize: 768, topK: 8, numExperts: 128, moeTp: 1, moeEp: 1 },
        0,
      ),
    ).toBe(0);
  });

  it("extrapolates beyond the grid instead of clamping", () => {
    // vocab GEMM wider than the widest measured n (65,536): proportional in n.
    const wide = parquet.gemm("bfloat16", 64, 128256, 4096);
    expect(wide).toBeCloseTo((parquet.gemm("bfloat16", 64, 65536, 4096) * 128256) / 65536, 12);
    // 64k tokens of GEMM: linear in FLOPs beyond m = 32,768.
    expect(parquet.gemm("fp8", 65536, 4096, 4096)).toBeCloseTo(
      2 * parquet.gemm("fp8", 32768, 4096, 4096),
      12,
    );
    // Prefill longer than the longest measured isl keeps growing superlinearly.
    const a = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 16384, 0);
    const b = parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 32768, 0);
    expect(b / a).toBeGreaterThan(3);
    // All-reduce across two nodes is slower than within one.
    expect(parquet.allReduce(16, 1 << 24)).toBeGreaterThan(parquet.allReduce(8, 1 << 24));
  });

  it("answers unmeasured head configurations and MoE shapes from the nearest measured one", () => {
    // 40 heads / 5 KV heads: nearest measured KV-head count is 4 → 32/4 (same GQA ratio) × 5/4.
    const routed = parquet.generationAttention(attn(40, 5, 128, "bfloat16"), 8, 4096);
    const ref = parquet.generationAttention(attn(32, 4, 128, "bfloat16"), 8, 4096);
    expect(routed).toBeCloseTo((ref * 5) / 4, 12);
    // Head dim 96 (unmeasured) → nearest measured 128, × 96/128.
    const hd96 = parquet.contextAttention(attn(32, 8, 96, "bfloat16"), 1, 2048, 0);
    expect(hd96).toBeCloseTo(
      (parquet.contextAttention(attn(32, 8, 128, "bfloat16"), 1, 2048, 0) * 96) / 128,
      12,
    );
    const moe = parquet.moe(
      { dtype: "bfloat16", hiddenSize: 2048, interSize: 1024, topK: 8, numExperts: 128, moeTp: 1, moeEp: 1 },
      256,
    );
    expect(moe).toBeGreaterThan(0);
    expect(Number.isFinite(moe)).toBe(true);
  });

  it("reports unanswerable queries as HardwareError", () => {
    expect(() => parquet.allReduce(3, 1024)).toThrow(HardwareError);
    expect(() => parquet.gemm("nvfp4" as WeightDtype, 1, 1024, 1024)).toThrow(HardwareError);
    expect(() => parquet.generationAttention(attn(8, 16, 128, "bfloat16"), 1, 128)).toThrow(HardwareError);
  });

  it("queries are fast (typed-array grids, no allocation)", () => {
    const t0 = performance.now();
    let acc = 0;
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      acc += compact.gemm("bfloat16", 1 + (i % 8000), 6144, 4096);
      acc += compact.generationAttention(attn(32, 8, 128, "bfloat16"), 1 + (i % 200), 100 + i);
    }
    const perQuery = ((performance.now() - t0) * 1000) / (2 * n);
    console.log(`op-table query: ${perQuery.toFixed(3)} µs`);
    expect(acc).toBeGreaterThan(0);
    expect(perQuery).toBeLessThan(5);
  });
});

describe("GPU catalog: parquet tables", () => {
  it("an unknown GPU or perf-data version is a HardwareError that lists what exists", async () => {
    await expect(loadParquetTables(PERF_DATA, "h300")).rejects.toThrow(HardwareError);
    await expect(loadParquetTables(PERF_DATA, "h200_sxm", "9.9.9")).rejects.toThrow(/available: 0.24.0/);
  });
});
