/**
 * MHA decode attention on the HBM roofline where the op tables' grid breaks it
 * (src/timing/mhaDecodeRoofline.ts, docs/timing.md "MHA decode attention"); GQA grids, which never
 * break it, keep the tables.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import type { KvDtype } from "../../src/hardware/dtypes.js";
import type { AttentionHeads } from "../../src/hardware/perfTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { mhaDecodeRoofline, rooflineDecodeMs } from "../../src/timing/mhaDecodeRoofline.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";

const H100 = gpuSpec("h100_sxm");
const tables = loadCompactTables("h100_sxm");
/** The attention heads of a query, in the order the tables once took them. */
const attnHeads = (
  numHeads: number,
  numKvHeads: number,
  headDim: number,
  kvDtype: KvDtype,
): AttentionHeads => ({
  numHeads,
  numKvHeads,
  headDim,
  kvDtype,
});
const PAR = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };

describe("MHA decode attention", () => {
  it("flags the H100 MHA grid at 32 heads (cells faster than HBM), not the GQA one", () => {
    // Batch 8 × 1,024 tokens: 134 MB of K and V per layer, read in less than HBM allows.
    const bytes = 8 * 1024 * 2 * 32 * 128 * 2;
    expect(tables.generationAttention(attnHeads(32, 32, 128, "bfloat16"), 8, 1024)).toBeLessThan(
      (bytes / H100.memBandwidth) * 1000,
    );
    expect(mhaDecodeRoofline(tables, H100, 32, 32, 128, "bfloat16")).not.toBeNull();
    expect(mhaDecodeRoofline(tables, H100, 32, 8, 128, "bfloat16")).toBeNull();
    // An MHA shard of 8 heads holds the bound on H100: its grid stays.
    expect(mhaDecodeRoofline(tables, H100, 8, 8, 128, "bfloat16")).toBeNull();
  });

  it("is the grid's smallest cell plus the KV bytes at the bandwidth of its largest cell", () => {
    const r = mhaDecodeRoofline(tables, H100, 32, 32, 128, "bfloat16")!;
    expect(r.bytesPerToken).toBe(2 * 32 * 128 * 2);
    expect(r.fixedMs).toBeCloseTo(tables.generationAttention(attnHeads(32, 32, 128, "bfloat16"), 1, 128), 12);
    expect(rooflineDecodeMs(r, 128, 4096)).toBeCloseTo(
      tables.generationAttention(attnHeads(32, 32, 128, "bfloat16"), 128, 4096),
      9,
    );
    // The bandwidth the grid reaches with a large cache: within 85–100 % of the part's HBM.
    expect(r.bytesPerMs * 1000).toBeGreaterThan(0.85 * H100.memBandwidth);
    expect(r.bytesPerMs * 1000).toBeLessThanOrEqual(H100.memBandwidth);
    // Linear in batch × context: 0.113 ms per 700-token sequence over 32 layers.
    const perSequence = 32 * (rooflineDecodeMs(r, 23, 700) - rooflineDecodeMs(r, 22, 700));
    expect(perSequence).toBeGreaterThan(0.1);
    expect(perSequence).toBeLessThan(0.13);
  });

  it("prices Llama-2-7B's decode step with it, Llama-3.1-8B's from the tables", () => {
    const llama2 = new OpLevelTiming(resolveModel("meta-llama/Llama-2-7b-hf"), H100, tables, PAR);
    const r = mhaDecodeRoofline(tables, H100, 32, 32, 128, "bfloat16")!;
    const attn = llama2.explainDecode(22, 700).ops.find((o) => o.name === "generation_attention");
    expect(attn?.latencyMs).toBeCloseTo(32 * rooflineDecodeMs(r, 22, 700), 9);
    const llama3 = new OpLevelTiming(resolveModel("meta-llama/Llama-3.1-8B"), H100, tables, PAR);
    const gqa = llama3.explainDecode(22, 700).ops.find((o) => o.name === "generation_attention");
    expect(gqa?.latencyMs).toBeCloseTo(
      32 * tables.generationAttention(attnHeads(32, 8, 128, "bfloat16"), 22, 700),
      9,
    );
  });
});
