/**
 * Memory variants of a measured GPU (src/hardware/variants.ts): the A100-SXM4-40GB reuses the
 * 80 GB card's op tables, rescaled by the roofline, so bandwidth-bound ops slow by
 * 2,039 / 1,555 GB/s and compute-bound ones do not change.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";

const RATIO = 2039 / 1555;

describe("GPU memory variants", () => {
  const base = loadCompactTables("a100_sxm");
  const v40 = loadCompactTables("a100_sxm_40gb");

  it("has the 40 GB card's memory and bandwidth, and the 80 GB card's compute and links", () => {
    const a = gpuSpec("a100_sxm");
    const b = gpuSpec("a100_sxm_40gb");
    expect(b.memCapacityBytes).toBe(40 * 2 ** 30);
    expect(b.memBandwidth).toBe(1_555e9);
    expect(b.bf16Flops).toBe(a.bf16Flops);
    expect(b.intraNodeBandwidth).toBe(a.intraNodeBandwidth);
    expect(v40.gpu).toBe("a100_sxm_40gb");
  });

  it("slows a decode-sized GEMM by the bandwidth ratio and leaves a prefill-sized one", () => {
    expect(v40.gemm("bfloat16", 1, 28672, 4096) / base.gemm("bfloat16", 1, 28672, 4096)).toBeCloseTo(
      RATIO,
      3,
    );
    expect(v40.gemm("bfloat16", 8192, 28672, 4096)).toBeCloseTo(base.gemm("bfloat16", 8192, 28672, 4096), 6);
  });

  it("slows decode attention by the bandwidth ratio; prefill attention and all-reduce are unchanged", () => {
    const g = (t: typeof base) =>
      t.generationAttention({ numHeads: 8, numKvHeads: 1, headDim: 128, kvDtype: "bfloat16" }, 64, 4096);
    expect(g(v40) / g(base)).toBeCloseTo(RATIO, 3);
    expect(
      v40.contextAttention({ numHeads: 8, numKvHeads: 1, headDim: 128, kvDtype: "bfloat16" }, 1, 2048, 0),
    ).toBe(
      base.contextAttention({ numHeads: 8, numKvHeads: 1, headDim: 128, kvDtype: "bfloat16" }, 1, 2048, 0),
    );
    expect(v40.allReduce(8, 1 << 20)).toBe(base.allReduce(8, 1 << 20));
  });

  it("prices a Llama-3.3-70B TP8 decode step ~25–31 % slower than on the 80 GB card", () => {
    const model = resolveModel("meta-llama/Llama-3.3-70B-Instruct");
    const par = { tensor: 8, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };
    const t80 = new OpLevelTiming(model, gpuSpec("a100_sxm"), base, par);
    const t40 = new OpLevelTiming(model, gpuSpec("a100_sxm_40gb"), v40, par);
    const r = t40.decodeMs(8, 8 * 1000, 1000, 1e6) / t80.decodeMs(8, 8 * 1000, 1000, 1e6);
    // All-reduces and launch latencies do not scale, so the step slows by less than the ratio.
    expect(r).toBeGreaterThan(1.1);
    expect(r).toBeLessThan(RATIO);
  });
});
