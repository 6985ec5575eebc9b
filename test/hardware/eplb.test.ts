/**
 * `engine.enable_eplb` (docs/models.md "Expert load balance"): MoE layers priced on the tables
 * measured with balanced expert load (AIC's `balanced` workload) instead of power-law routing.
 */
import { describe, expect, it } from "vitest";
import { decodeCompact, encodeCompact } from "../../src/hardware/compact.js";
import { loadCompactTables, readCompactJson } from "../../src/hardware/compactTables.js";
import { HardwareError } from "../../src/hardware/errors.js";
import { HOST_TIME_KEYS } from "../../src/output/summary.js";
import { cli, predictExample } from "../helpers/cli.js";

describe("balanced MoE tables", () => {
  it("the committed H200 tables carry balanced rows for every power-law MoE shape", () => {
    const data = decodeCompact(readCompactJson("h200_sxm"));
    const key = (t: {
      dtype: string;
      hiddenSize: number;
      interSize: number;
      topK: number;
      numExperts: number;
      moeTp: number;
      moeEp: number;
    }) => [t.dtype, t.hiddenSize, t.interSize, t.topK, t.numExperts, t.moeTp, t.moeEp].join(" ");
    expect(data.moeDistribution).toBe("power_law_1.2");
    const balanced = new Set((data.moeBalanced ?? []).map(key));
    expect(balanced.size).toBeGreaterThan(100);
    for (const t of data.moe) expect(balanced.has(key(t))).toBe(true);
    // The compact form round-trips them.
    const again = decodeCompact(encodeCompact(data));
    expect(again.moeBalanced?.length).toBe(data.moeBalanced?.length);
    expect(again.moeBalanced?.[5].grid.latencyMs).toEqual(data.moeBalanced?.[5].grid.latencyMs);
  });

  it("prices an MoE layer on the balanced rows only when asked", () => {
    // Qwen3-30B-A3B's expert shape on H200, BF16, TP1/EP1, 4,096 tokens.
    const q = (t: ReturnType<typeof loadCompactTables>) =>
      t.moe(
        { dtype: "bfloat16", hiddenSize: 2048, interSize: 768, topK: 8, numExperts: 128, moeTp: 1, moeEp: 1 },
        4096,
      );
    const natural = q(loadCompactTables("h200_sxm"));
    const balanced = q(loadCompactTables("h200_sxm", true));
    // Measured (perf-data h200_sxm vllm moe_perf.parquet): power_law_1.2 0.857 ms, balanced 0.691 ms.
    expect(natural).toBeCloseTo(0.857, 2);
    expect(balanced).toBeCloseTo(0.691, 2);
  });

  it("a GPU whose tables have no balanced rows refuses instead of pricing power-law as balanced", () => {
    expect(() => loadCompactTables("a100_sxm", true)).toThrow(HardwareError);
    expect(() => loadCompactTables("a100_sxm", true)).toThrow(
      "engine.enable_eplb needs MoE tables measured with balanced expert load, and a100_sxm's tables have none",
    );
  });
});

describe("engine.enable_eplb in a run", () => {
  async function summary(model: string, eplb: boolean) {
    const r = await predictExample([`engine.model=${model}`, `engine.enable_eplb=${eplb}`]);
    expect(r.code).toBe(0);
    return r.doc?.summary;
  }

  it("changes an MoE model's latencies and leaves a dense model's untouched", async () => {
    const [moeOff, moeOn] = [
      await summary("Qwen/Qwen3-30B-A3B", false),
      await summary("Qwen/Qwen3-30B-A3B", true),
    ];
    expect(moeOn.completed_requests).toBe(315);
    expect(moeOn.mean_ttft_ms).not.toBe(moeOff.mean_ttft_ms);
    expect(moeOn.mean_itl_ms).not.toBe(moeOff.mean_itl_ms);
    const [denseOff, denseOn] = [await summary("Qwen/Qwen3-8B", false), await summary("Qwen/Qwen3-8B", true)];
    const hostFree = (x: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(x).filter(([k]) => !(HOST_TIME_KEYS as readonly string[]).includes(k)),
      );
    expect(hostFree(denseOn)).toEqual(hostFree(denseOff));
  });

  it("fleetsim estimate --enable-eplb says which expert load it priced", async () => {
    const args = [
      "estimate",
      "--model",
      "Qwen/Qwen3-30B-A3B",
      "--hardware",
      "h200_sxm",
      "--prefill-tokens",
      "4096",
    ];
    const off = await cli(...args, "--format", "json");
    const on = await cli(...args, "--enable-eplb", "--format", "json");
    expect(JSON.parse(off.out).moe_distribution).toBe("power_law");
    expect(JSON.parse(on.out).moe_distribution).toBe("balanced");
    expect(JSON.parse(on.out).total_ms).toBeLessThan(JSON.parse(off.out).total_ms);
    expect((await cli(...args, "--enable-eplb")).out).toContain("Expert load: balanced (EPLB)");
  });
});
