/**
 * DeepSeek-V3/R1 (docs/models.md "DeepSeek (MLA)"): multi-head latent attention, dense first
 * layers, shared + routed experts, wide expert parallelism — from the catalog through the memory
 * model and the op-level timing to replays, aggregated and disaggregated, on H200 and B200.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import type { ModelArchitecture } from "../../src/model/architecture.js";
import { lookupCatalog } from "../../src/model/catalog.js";
import { architectureFromHfConfig } from "../../src/model/hfConfig.js";
import { defaultKvCapacityBlocks, kvBytesPerToken, weightBreakdown } from "../../src/model/memory.js";
import { MlaAttention } from "../../src/timing/mlaAttention.js";
import { OpLevelTiming, type Parallelism, type PassEstimate } from "../../src/timing/opLevel.js";
import { sharedExpertStreamTokensOf } from "../../src/timing/timingSpec.js";
import { cli, predictExample, setFlags } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const V3 = lookupCatalog("deepseek-ai/DeepSeek-V3")!;

/** DeepSeek-V3's public config.json dimensions (huggingface.co/deepseek-ai/DeepSeek-V3), BF16. */
const V3_CONFIG = {
  architectures: ["DeepseekV3ForCausalLM"],
  first_k_dense_replace: 3,
  hidden_size: 7168,
  intermediate_size: 18432,
  kv_lora_rank: 512,
  max_position_embeddings: 163840,
  moe_intermediate_size: 2048,
  moe_layer_freq: 1,
  n_routed_experts: 256,
  n_shared_experts: 1,
  num_attention_heads: 128,
  num_experts_per_tok: 8,
  num_hidden_layers: 61,
  num_key_value_heads: 128,
  q_lora_rank: 1536,
  qk_nope_head_dim: 128,
  qk_rope_head_dim: 64,
  topk_method: "noaux_tc",
  v_head_dim: 128,
  vocab_size: 129280,
  tie_word_embeddings: false,
  torch_dtype: "bfloat16",
};

const par = (p: Partial<Parallelism> = {}): Parallelism => ({
  tensor: 8,
  pipeline: 1,
  attentionData: 1,
  moeTensor: 8,
  moeExpert: 1,
  ...p,
});

describe("DeepSeek-V3's memory", () => {
  it("counts the published 671 B parameters (BF16 config: two bytes each)", () => {
    const bf16 = architectureFromHfConfig("ds", V3_CONFIG, null, "test");
    expect(bf16.mla).not.toBeNull();
    const w = weightBreakdown(bf16, { tensor: 1, pipeline: 1 });
    // 671.0 B parameters, embedding and LM head included, the MTP module not (vLLM loads it only
    // for speculative decoding).
    expect(w.perGpuBytes / 2 / 1e9).toBeCloseTo(671.03, 1);
  });

  it("splits attention and dense MLPs over TP and the routed experts over moe_tensor × moe_expert", () => {
    const tp8 = weightBreakdown(V3, { tensor: 8, pipeline: 1 });
    const dp8 = weightBreakdown(V3, { tensor: 1, pipeline: 1, attentionData: 8, moeTensor: 1, moeExpert: 8 });
    expect(tp8.expertBytes).toBeCloseTo(dp8.expertBytes, -3);
    // Attention-DP replicates the attention weights on every rank; TP shards them (the replicated
    // latent down-projection excepted).
    expect(dp8.attentionBytes / tp8.attentionBytes).toBeGreaterThan(4);
    expect(dp8.attentionBytes / tp8.attentionBytes).toBeLessThan(8);
    expect(tp8.perGpuBytes / 1e9).toBeGreaterThan(80);
    expect(tp8.perGpuBytes / 1e9).toBeLessThan(90);
  });

  it("caches one latent plus the RoPE key per token and layer, the same on every TP rank", () => {
    // FP8 checkpoint → 1-byte KV (the reference's rule); 61 layers × (512 + 64).
    for (const tensor of [1, 2, 8]) expect(kvBytesPerToken(V3, { tensor, pipeline: 1 })).toBe(61 * 576);
  });

  it("sizes the KV cache of a wide-EP rank with its share of the experts", () => {
    const base = {
      model: V3,
      gpu: gpuSpec("h200_sxm"),
      pipeline: 1,
      blockSize: 64,
      memoryFraction: 0.9,
      maxNumTokens: 8192,
    };
    expect(() => defaultKvCapacityBlocks({ ...base, tensor: 1 })).toThrow(
      /no memory is left for the KV cache/,
    );
    const wide = defaultKvCapacityBlocks({
      ...base,
      tensor: 1,
      attentionData: 8,
      moeTensor: 1,
      moeExpert: 8,
    });
    expect(wide.blocks).toBeGreaterThan(1000);
  });
});

describe("MLA attention from the GQA tables", () => {
  const h200 = gpuSpec("h200_sxm");
  const tables = loadCompactTables("h200_sxm");
  const mla = new MlaAttention(V3.mla!, h200, tables, 16, "fp8");

  it("prices prefill as the MHA kernel scaled by its (qk + v) / 256 width", () => {
    const mha = tables.contextAttention(
      { numHeads: 16, numKvHeads: 16, headDim: 128, kvDtype: "bfloat16" },
      2,
      2048,
      0,
    );
    expect(mla.prefillMs(2, 2048, 0)).toBeCloseTo(mha * 1.25, 9);
  });

  it("prices decode by its roofline times the measured GQA kernel's utilisation", () => {
    // A long context is memory-bound: doubling it roughly doubles the cost.
    const a = mla.decodeMs(64, 8192);
    const b = mla.decodeMs(64, 16384);
    expect(b / a).toBeGreaterThan(1.6);
    expect(b / a).toBeLessThan(2.2);
    // The latent (576 values, 1 byte) is far smaller than Llama-70B's 8 KV heads × 128 × 2: MLA
    // decode reads less per token than GQA with the same query heads.
    const gqa = tables.generationAttention(
      { numHeads: 16, numKvHeads: 2, headDim: 128, kvDtype: "fp8" },
      64,
      8192,
    );
    expect(a).toBeGreaterThan(0);
    expect(a).toBeLessThan(gqa * 2);
  });
});

describe("DeepSeek-V3's forward pass", () => {
  const tables = loadCompactTables("h200_sxm");
  const timing = (m: ModelArchitecture, p: Parallelism) =>
    new OpLevelTiming(m, gpuSpec("h200_sxm"), tables, p);
  /** As a `vllm` role prices it: shared experts on a second stream in small passes. */
  const streamedTiming = (m: ModelArchitecture, p: Parallelism) =>
    new OpLevelTiming(m, gpuSpec("h200_sxm"), tables, p, undefined, null, { sharedExpertStreamTokens: 256 });

  it("runs MLA projections on every layer, dense MLPs on the first three and experts on the other 58", () => {
    const ops = new Map(
      timing(V3, par())
        .explainDecode(32, 2048)
        .ops.map((o) => [o.name, o.repeat]),
    );
    expect(ops.get("mla_down_gemm")).toBe(61);
    expect(ops.get("mla_bmm_pre")).toBe(61);
    expect(ops.get("generation_attention")).toBe(61);
    expect(ops.get("gate_up_gemm")).toBe(3);
    expect(ops.get("moe")).toBe(58);
    expect(ops.get("shared_gate_up_gemm")).toBe(58);
    expect(ops.has("qkv_gemm")).toBe(false);
    const prefill = new Map(
      timing(V3, par())
        .explainPrefill(1, 2048, 0)
        .ops.map((o) => [o.name, o.repeat]),
    );
    expect(prefill.get("kv_up_gemm")).toBe(61);
    expect(prefill.has("mla_bmm_pre")).toBe(false);
  });

  it("adds up its breakdown: a pass costs what its operations cost", () => {
    const t = timing(V3, par());
    expect(t.decodeMs(32, 0, 2048, 0)).toBeCloseTo(t.explainDecode(32, 2048).totalMs, 9);
    expect(t.prefillMs(1, 2048, 0)).toBeCloseTo(t.explainPrefill(1, 2048, 0).totalMs, 9);
  });

  it("prices the expert-parallel all-to-all only when attention-DP ranks hold different tokens", () => {
    const wide = timing(V3, par({ tensor: 1, attentionData: 8, moeTensor: 1, moeExpert: 8 }));
    const a2a = wide.explainDecode(16, 2048).ops.find((o) => o.name === "moe_all_to_all");
    expect(a2a?.repeat).toBe(116);
    // Dispatch (FP8) and combine (BF16) of 7/8 of 16 tokens × 8 experts × 7168 over NVLink, plus a
    // link latency per transfer, on each of 58 layers.
    const g = gpuSpec("h200_sxm");
    const remote = (16 * 8 * 7168 * 7) / 8;
    const expected = 58 * ((remote * 3) / g.intraNodeBandwidth + 2 * g.p2pLatencyS) * 1000;
    expect(a2a?.latencyMs).toBeCloseTo(expected, 9);
    const tp = timing(V3, par({ moeTensor: 1, moeExpert: 8 }));
    expect(tp.explainDecode(16, 2048).ops.some((o) => o.name === "moe_all_to_all")).toBe(false);
  });

  it("with attention DP and TP-sharded experts, gathers every rank's tokens into the expert group", () => {
    // vLLM's allgather_reducescatter path: per MoE layer, an all-reduce's worth of the DP ranks'
    // tokens (16 per rank × 2 ranks × 4096 hidden × 2 B) over the 2 GPUs, from the NCCL tables.
    const qwen = lookupCatalog("Qwen/Qwen3-30B-A3B")!;
    const dp = timing(qwen, par({ tensor: 1, attentionData: 2, moeTensor: 2, moeExpert: 1 }));
    const gather = dp.explainDecode(16, 1024).ops.find((o) => o.name === "moe_dp_gather");
    expect(gather?.repeat).toBe(48);
    const tables = loadCompactTables("h200_sxm");
    expect(gather?.latencyMs).toBeCloseTo(48 * tables.allReduce(2, 16 * 2 * qwen.hiddenSize * 2), 9);
    expect(dp.decodeMs(16, 0, 1024, 0)).toBeCloseTo(dp.explainDecode(16, 1024).totalMs, 9);
    // Expert parallelism moves tokens by all-to-all instead; without attention DP neither is priced.
    const ep = timing(qwen, par({ tensor: 1, attentionData: 2, moeTensor: 1, moeExpert: 2 }));
    expect(ep.explainDecode(16, 1024).ops.some((o) => o.name === "moe_dp_gather")).toBe(false);
    const tp = timing(qwen, par({ tensor: 2, moeTensor: 2 }));
    expect(tp.explainDecode(16, 1024).ops.some((o) => o.name === "moe_dp_gather")).toBe(false);
  });

  it("leaves GQA models' passes as they were (no MLA ops, no all-to-all without attention DP)", () => {
    const qwen = lookupCatalog("Qwen/Qwen3-30B-A3B")!;
    const names = timing(qwen, par({ tensor: 2, moeTensor: 2 }))
      .explainDecode(8, 1024)
      .ops.map((o) => o.name);
    expect(names).toEqual([
      "qkv_gemm",
      "proj_gemm",
      "router_gemm",
      "moe",
      "add_norm",
      "embedding",
      // Qwen3's per-head Q/K norm (timing/opLevel.ts QK_NORM_MS_PER_LAYER).
      "qk_norm",
      "all_reduce",
      "logits_gemm",
      "generation_attention",
    ]);
  });

  it("on vLLM hides the shorter of the shared and routed expert paths in passes of at most 256 tokens", () => {
    const p = par({ tensor: 8, moeTensor: 1, moeExpert: 8 });
    const inLine = timing(V3, p);
    const streamed = streamedTiming(V3, p);
    const ms = (e: PassEstimate, name: string) => e.ops.find((o) => o.name === name)?.latencyMs ?? 0;
    for (const batch of [1, 32, 256]) {
      const e = streamed.explainDecode(batch, 1024);
      const shared = ms(e, "shared_gate_up_gemm") + ms(e, "shared_down_gemm") + ms(e, "shared_act_gate");
      const routed = ms(e, "router_gemm") + ms(e, "moe");
      // The MoE layers cost the longer path: the overlap line takes back the shorter one.
      expect(ms(e, "shared_experts_overlap")).toBeCloseTo(-Math.min(shared, routed), 9);
      expect(e.totalMs).toBeCloseTo(inLine.explainDecode(batch, 1024).totalMs - Math.min(shared, routed), 9);
      expect(streamed.decodeMs(batch, 0, 1024, 0)).toBeCloseTo(e.totalMs, 9);
    }
    // Above vLLM's VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD the experts run in line.
    expect(streamed.explainDecode(257, 1024).ops.some((o) => o.name === "shared_experts_overlap")).toBe(
      false,
    );
    expect(streamed.prefillMs(1, 2048, 0)).toBe(inLine.prefillMs(1, 2048, 0));
    expect(streamed.prefillMs(1, 200, 0)).toBeLessThan(inLine.prefillMs(1, 200, 0));
    // SGLang and TRT-LLM are priced in line, as the reference prices them; a model without shared
    // experts has nothing to overlap.
    expect(sharedExpertStreamTokensOf("vllm")).toBe(256);
    expect(sharedExpertStreamTokensOf("sglang")).toBe(0);
    expect(sharedExpertStreamTokensOf("trtllm")).toBe(0);
    const qwen = lookupCatalog("Qwen/Qwen3-30B-A3B")!;
    const q = par({ tensor: 2, moeTensor: 2 });
    const qStreamed = streamedTiming(qwen, q);
    expect(qStreamed.decodeMs(8, 0, 1024, 0)).toBe(timing(qwen, q).decodeMs(8, 0, 1024, 0));
  });
});

describe("DeepSeek-V3 replays", () => {
  // The bundled sample trace: 315 requests over about two minutes.
  const MODEL = "engine.model=deepseek-ai/DeepSeek-V3";
  const TP8 = "engine.workers.aggregated.parallelism={replicas: 1, tensor: 8}";

  const MATRIX = [
    ["h200_sxm", "off"],
    ["h200_sxm", "on"],
    ["b200_sxm", "off"],
    ["b200_sxm", "on"],
  ] as const;
  const offload = (role: string, on: "on" | "off") =>
    `engine.workers.${role}.kv_cache.host_offload=${on === "on" ? "{num_host_blocks: 50000}" : "null"}`;
  const checkOffload = (doc: { kv_offload?: { stored_blocks: number } }, on: "on" | "off") => {
    if (on === "off") expect(doc.kv_offload).toBeUndefined();
    else expect(doc.kv_offload?.stored_blocks).toBeGreaterThan(0);
  };

  it.each(MATRIX)(
    "runs aggregated on %s at TP8 with host offload %s, every request completing",
    async (gpu, on) => {
      const r = await predictExample([MODEL, `engine.hardware=${gpu}`, TP8, offload("aggregated", on)]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const doc = r.doc;
      expect(doc.summary.completed_requests).toBe(315);
      expect(doc.run.topology.aggregated).toMatchObject({ tensor: 8, moe_tensor: 8, moe_expert: 1 });
      // 8 GPUs of 141 GB (H200) or 180 GB (B200) less ~84 GB of weights each, at 35 KB per token.
      expect(doc.run.topology.aggregated.kv_blocks).toBeGreaterThan(gpu === "h200_sxm" ? 15_000 : 30_000);
      checkOffload(doc, on);
    },
  );

  it.each(MATRIX)(
    "runs disaggregated on %s with a wide-EP-sized decode pool, prefill host offload %s",
    async (gpu, on) => {
      const out = tempDir();
      const r = await cli(
        "predict",
        "--stack",
        "dynamo",
        "-c",
        "examples/seed-disaggregated.yaml",
        ...setFlags(
          "traffic.source.paths=[sample_trace.jsonl]",
          MODEL,
          `engine.hardware=${gpu}`,
          "engine.workers.prefill.parallelism.tensor=8",
          "engine.workers.decode.parallelism={replicas: 1, tensor: 8, moe_tensor: 1, moe_expert: 8}",
          "planner.max_num_gpus=32",
        ),
        "--set",
        offload("prefill", on),
        "--output-dir",
        out,
      );
      expect(r.code).toBe(0);
      const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
      expect(doc.summary.completed_requests).toBe(315);
      expect(doc.run.topology.decode).toMatchObject({ tensor: 8, moe_tensor: 1, moe_expert: 8 });
      checkOffload(doc, on);
    },
  );

  it("speculates with its MTP head: one draft at 0.8 acceptance cuts the mean ITL, with host offload on", async () => {
    const run = async (speculation: string) => {
      const r = await predictExample([
        MODEL,
        TP8,
        `engine.speculation=${speculation}`,
        offload("aggregated", "on"),
      ]);
      expect(r.code).toBe(0);
      return r.doc.summary;
    };
    const plain = await run("null");
    const mtp = await run("{kind: mtp, num_speculative_tokens: 1, acceptance_rates: [0.8]}");
    expect(mtp.completed_requests).toBe(315);
    expect(mtp.spec_decode_mean_acceptance_length).toBeGreaterThan(1.75);
    expect(mtp.spec_decode_mean_acceptance_length).toBeLessThan(1.85);
    // 1.8 tokens per verify pass that costs a little more than a plain decode pass (MLA verify
    // rows, one MTP layer): measured 38.2 -> 23.0 ms on the sample trace.
    expect(mtp.mean_itl_ms).toBeLessThan(0.7 * plain.mean_itl_ms);
    expect(mtp.mean_itl_ms).toBeGreaterThan(0.5 * plain.mean_itl_ms);
  });
});
