import { describe, expect, it } from "vitest";
import type { GpuSpec } from "../../src/hardware/gpu.js";
import { lookupCatalog } from "../../src/model/catalog.js";
import { ModelError } from "../../src/model/errors.js";
import {
  activationBytes,
  defaultKvCapacityBlocks,
  kvBytesPerToken,
  ncclBytes,
  weightBreakdown,
  weightBytesPerGpu,
} from "../../src/model/memory.js";

/** h200_sxm as its system.yaml states it (the fields capacity sizing reads are exact). */
const H200: GpuSpec = {
  id: "h200_sxm",
  device: "NVIDIA H200",
  memCapacityBytes: 151_397_597_184,
  memBandwidth: 4.8e12,
  memBandwidthScaling: 0.8,
  memConstantLatencyS: 3e-6,
  bf16Flops: 989e12,
  fp8Flops: 1978e12,
  powerW: 700,
  smVersion: 90,
  gpusPerNode: 8,
  intraNodeBandwidth: 450e9,
  interNodeBandwidth: 50e9,
  pcieBandwidth: 64e9,
  p2pLatencyS: 1e-5,
  ncclMemBytes: { "1": 0, "2": 358_612_992, "4": 411_041_792, "8": 411_041_792 },
  otherMemBytes: 3_758_096_384,
  perfDataVersion: "0.24.0",
};

const model = (id: string) => lookupCatalog(id)!;
const one = { tensor: 1, pipeline: 1 };

describe("kvBytesPerToken", () => {
  it("is 2 · layers · kv_heads/TP · head_dim · bytes", () => {
    const llama = model("meta-llama/Llama-3.1-8B");
    expect(kvBytesPerToken(llama, one)).toBe(131_072);
    expect(kvBytesPerToken(llama, { tensor: 2, pipeline: 1 })).toBe(65_536);
    expect(kvBytesPerToken(llama, { tensor: 8, pipeline: 1 })).toBe(16_384);
    expect(kvBytesPerToken(model("nvidia/Llama-3.1-8B-Instruct-FP8"), one)).toBe(65_536);
    expect(kvBytesPerToken(model("Qwen/Qwen3-32B"), one)).toBe(262_144);
    expect(kvBytesPerToken(model("Qwen/Qwen3-32B-FP8"), one)).toBe(131_072);
  });

  it("replicates KV heads when TP exceeds them (ceil(kv_heads / TP))", () => {
    // Qwen3-30B-A3B has 4 KV heads: TP 8 keeps one whole head per GPU.
    const qwen = model("Qwen/Qwen3-30B-A3B");
    expect(kvBytesPerToken(qwen, { tensor: 4, pipeline: 1 })).toBe(2 * 48 * 1 * 128 * 2);
    expect(kvBytesPerToken(qwen, { tensor: 8, pipeline: 1 })).toBe(2 * 48 * 1 * 128 * 2);
    expect(kvBytesPerToken(model("meta-llama/Llama-3.1-405B"), { tensor: 16, pipeline: 1 })).toBe(
      2 * 126 * 128 * 2,
    );
  });

  it("counts every layer on every pipeline rank, as the reference does", () => {
    const llama = model("meta-llama/Llama-3.1-8B");
    expect(kvBytesPerToken(llama, { tensor: 1, pipeline: 2 })).toBe(131_072);
  });

  it("rejects a TP that does not divide the heads", () => {
    expect(() => kvBytesPerToken(model("meta-llama/Llama-3.1-8B"), { tensor: 3, pipeline: 1 })).toThrow(
      /32 attention heads cannot be split over tensor=3/,
    );
    expect(() => kvBytesPerToken(model("meta-llama/Llama-3.1-8B"), { tensor: 0, pipeline: 1 })).toThrow(
      ModelError,
    );
  });
});

describe("weightBytesPerGpu", () => {
  it("Llama-3.1-8B BF16 on one GPU: AIConfigurator's 16,059,990,016 bytes", () => {
    // 32 layers × (q 4096² + k,v 2·4096·1024 + o 4096² + MLP 3·4096·14336) × 2 + embedding + lm_head.
    expect(weightBytesPerGpu(model("meta-llama/Llama-3.1-8B"), one)).toBe(16_059_990_016);
  });

  it("Qwen3-32B-FP8 on one GPU: the worked example's 34,317,271,040 bytes (FP8 linears, BF16 embed/head)", () => {
    const b = weightBreakdown(model("Qwen/Qwen3-32B-FP8"), one);
    expect(b.perGpuBytes).toBe(34_317_271_040);
    expect(b.embeddingBytes).toBe(151_936 * 5120 * 2);
    expect(b.lmHeadBytes).toBe(151_936 * 5120 * 2);
    expect(b.attentionBytes + b.mlpBytes).toBe(
      64 * (5120 * (8192 + 2 * 1024) + 8192 * 5120 + 3 * 5120 * 25600),
    );
  });

  it("shards by TP (KV projections replicated past the KV head count) and splits by PP", () => {
    const llama = model("meta-llama/Llama-3.1-70B");
    const tp1 = weightBreakdown(llama, one);
    const tp2 = weightBreakdown(llama, { tensor: 2, pipeline: 1 });
    expect(tp2.mlpBytes).toBe(tp1.mlpBytes / 2);
    expect(tp2.embeddingBytes).toBe(tp1.embeddingBytes / 2);
    expect(weightBytesPerGpu(llama, { tensor: 1, pipeline: 2 })).toBe(tp1.perGpuBytes / 2);
    // TP 16 > 8 KV heads: each GPU keeps one whole KV head, not half of one.
    const tp16 = weightBreakdown(llama, { tensor: 16, pipeline: 1 });
    expect(tp16.attentionBytes).toBe(80 * (8192 * (512 + 2 * 128) + 8192 * 512) * 2);
  });

  it("MoE: BF16 router replicated, experts over EP × MoE-TP, no LM head (reference op graph)", () => {
    const qwen = model("Qwen/Qwen3-30B-A3B");
    const b = weightBreakdown(qwen, one);
    expect(b.routerBytes).toBe(48 * 128 * 2048 * 2);
    expect(b.expertBytes).toBe(48 * 2048 * 768 * 128 * 2 * 3);
    expect(b.mlpBytes).toBe(0);
    expect(b.lmHeadBytes).toBe(0);
    expect(b.perGpuBytes).toBe(60_441_493_504);

    const tp4 = weightBreakdown(qwen, { tensor: 4, pipeline: 1 });
    expect(tp4).toMatchObject({
      moeTensor: 4,
      moeExpert: 1,
      routerBytes: b.routerBytes,
      expertBytes: b.expertBytes / 4,
    });
    const ep4 = weightBreakdown(qwen, { tensor: 4, pipeline: 1, moeExpert: 4 });
    expect(ep4).toMatchObject({ moeTensor: 1, moeExpert: 4, expertBytes: b.expertBytes / 4 });
    expect(() => weightBreakdown(qwen, { tensor: 4, pipeline: 1, moeTensor: 2, moeExpert: 4 })).toThrow(
      /moe_tensor \(2\) × moe_expert \(4\) must equal tensor × attention_data \(4\)/,
    );
    expect(() => weightBreakdown(qwen, { tensor: 4, pipeline: 1, moeExpert: 3 })).toThrow(/does not divide/);
  });
});

describe("activationBytes", () => {
  it("2 · tokens · heads · head_dim · coefficient, floored at 70 MiB", () => {
    expect(activationBytes(model("Qwen/Qwen3-32B-FP8"), 1, 8192)).toBe(1_476_395_008);
    expect(activationBytes(model("meta-llama/Llama-3.1-8B"), 1, 8192)).toBe(738_197_504);
    expect(activationBytes(model("meta-llama/Llama-3.1-8B"), 2, 8192)).toBe(2 * 8192 * 4096 * 6.5);
    expect(activationBytes(model("meta-llama/Llama-3.1-8B"), 16, 8192)).toBe(2 * 8192 * 4096 * 5);
    // MoE family coefficient 22 at TP 1; h is heads × head_dim (4096), not hidden_size (2048).
    expect(activationBytes(model("Qwen/Qwen3-30B-A3B"), 1, 8192)).toBe(2 * 8192 * 4096 * 22);
    expect(activationBytes(model("meta-llama/Llama-3.1-8B"), 1, 1)).toBe(70 * 1024 * 1024);
  });

  it("has no entry for TP 3, 5, 6, 7 (neither does the reference)", () => {
    expect(() => activationBytes(model("mistralai/Mixtral-8x22B-v0.1"), 6, 8192)).toThrow(/tensor=6 has no/);
  });
});

describe("ncclBytes", () => {
  it("reads nccl_mem[min(TP, 8)]", () => {
    const m = model("meta-llama/Llama-3.1-405B");
    expect(ncclBytes(m, H200, 1)).toBe(0);
    expect(ncclBytes(m, H200, 2)).toBe(358_612_992);
    expect(ncclBytes(m, H200, 16)).toBe(411_041_792);
    expect(ncclBytes(m, { ...H200, ncclMemBytes: {} }, 1)).toBe(0);
  });
});

describe("defaultKvCapacityBlocks", () => {
  const base = { ...one, gpu: H200, blockSize: 64, memoryFraction: 0.9, maxNumTokens: 8192 };

  it("reproduces the reference's worked example: Qwen3-32B-FP8 on one H200 → 11,528 blocks", () => {
    const { blocks, breakdown } = defaultKvCapacityBlocks({ ...base, model: model("Qwen/Qwen3-32B-FP8") });
    expect(blocks).toBe(11_528);
    expect(breakdown).toEqual({
      capacityBytes: 151_397_597_184,
      memoryFraction: 0.9,
      weightsBytes: 34_317_271_040,
      activationsBytes: 1_476_395_008,
      runtimeOverheadBytes: 3_758_096_384,
      commOverheadBytes: 0,
      cudaGraphReservedBytes: 0,
      nonKvBytes: 39_551_762_432,
      kvBudgetBytes: 96_706_075_033,
      kvBytesPerToken: 131_072,
      kvDtype: "fp8",
      tokens: 737_808,
      blockSize: 64,
      blocks: 11_528,
    });
  });

  it("deducts NCCL buffers at TP > 1 and the CUDA-graph reservation", () => {
    const m = model("meta-llama/Llama-3.1-8B");
    const tp2 = defaultKvCapacityBlocks({ ...base, model: m, tensor: 2 }).breakdown;
    expect(tp2.commOverheadBytes).toBe(358_612_992);
    expect(tp2.kvBudgetBytes).toBe(
      Math.floor(
        151_397_597_184 * 0.9 - (tp2.weightsBytes + tp2.activationsBytes + 3_758_096_384 + 358_612_992),
      ),
    );
    const plain = defaultKvCapacityBlocks({ ...base, model: m }).breakdown;
    const graphs = defaultKvCapacityBlocks({ ...base, model: m, cudaGraphReservedBytes: 1 << 30 }).breakdown;
    expect(plain.kvBudgetBytes - graphs.kvBudgetBytes).toBe(1 << 30);
    expect(graphs.tokens).toBe(Math.floor(graphs.kvBudgetBytes / 131_072));
  });

  it("refuses weights that do not fit, saying what to change", () => {
    const run = () =>
      defaultKvCapacityBlocks({ ...base, model: model("meta-llama/Llama-3.1-405B"), tensor: 4 });
    expect(run).toThrow(ModelError);
    expect(run).toThrow(
      /^meta-llama\/Llama-3\.1-405B \(BF16\) needs 202\.9 GB of weights per GPU at tensor=4, pipeline=1; h200_sxm has 141\.0 GiB/,
    );
    expect(run).toThrow(/no memory is left for the KV cache; raise tensor or pipeline$/);
    // Eight GPUs of tensor parallelism fit it.
    expect(
      defaultKvCapacityBlocks({ ...base, model: model("meta-llama/Llama-3.1-405B"), tensor: 8 }).blocks,
    ).toBeGreaterThan(0);
  });

  it("refuses a budget smaller than one block", () => {
    const m = model("meta-llama/Llama-3.1-8B");
    const weights = weightBytesPerGpu(m, one);
    const tight = {
      ...H200,
      otherMemBytes: 0,
      memCapacityBytes: Math.ceil((weights + 738_197_504 + 1_000_000) / 0.9),
    };
    expect(() => defaultKvCapacityBlocks({ ...base, model: m, gpu: tight })).toThrow(
      /less than one block of 64/,
    );
  });

  it("validates its inputs", () => {
    const m = model("meta-llama/Llama-3.1-8B");
    expect(() => defaultKvCapacityBlocks({ ...base, model: m, blockSize: 0 })).toThrow(/block_size/);
    expect(() => defaultKvCapacityBlocks({ ...base, model: m, memoryFraction: 1.5 })).toThrow(
      /memory_fraction/,
    );
    expect(() => defaultKvCapacityBlocks({ ...base, model: m, maxNumTokens: 0 })).toThrow(
      /max_batched_tokens/,
    );
    expect(() => defaultKvCapacityBlocks({ ...base, model: m, cudaGraphReservedBytes: -1 })).toThrow(
      /cuda_graph/,
    );
  });
});
