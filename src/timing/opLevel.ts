import type { WeightDtype } from "../hardware/dtypes.js";
import type { GpuSpec } from "../hardware/gpu.js";
import type { MlaModuleTable } from "../hardware/mlaModule.js";
import type { AttentionHeads, OpPerfTables } from "../hardware/perfTables.js";
import type { MoeShape } from "../hardware/sol.js";
import type { MlaSpec, ModelArchitecture } from "../model/architecture.js";
import type { CudaGraphPadding } from "./cudaGraphs.js";
import type { HostOverhead } from "./hostOverhead.js";
import { type DecodeRoofline, mhaDecodeRoofline, rooflineDecodeMs } from "./mhaDecodeRoofline.js";
import { MlaAttention } from "./mlaAttention.js";
import type { PassShape } from "./passShape.js";
import type { TimingModel } from "./timingModel.js";
import type { BackendKernels, BlockFp8Kernel, DraftKind } from "./timingSpec.js";

/** How one logical worker's GPUs are split (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py` parallelism keys). */
export interface Parallelism {
  readonly tensor: number;
  readonly pipeline: number;
  /** Attention-DP ranks of the worker: their tokens meet in the shared MoE layers. */
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
}

/** One operation's contribution to a pass. */
export interface OpCost {
  readonly name: string;
  /** How many times it runs in the pass (layers of one pipeline stage × stages, …). */
  readonly repeat: number;
  /** Total latency of all repeats, ms. */
  readonly latencyMs: number;
}

/** Latency of one pass, with the per-operation breakdown. */
export interface PassEstimate {
  readonly totalMs: number;
  readonly ops: readonly OpCost[];
}

type GemmOp = {
  readonly name: string;
  readonly n: number;
  readonly k: number;
  readonly dtype: WeightDtype;
  readonly repeat: number;
};
type MemOp = {
  readonly name: string;
  readonly bytesPerToken: number;
  readonly repeat: number;
  /** Times it runs in one MTP draft step (one decoder layer plus the draft token's embedding). */
  readonly perDraftStep: number;
};

/**
 * The dtype whose GEMM cells price the model's linear layers: a block-scaled FP8 model on a
 * `per-tensor` backend (SGLang, TRT-LLM) takes the per-tensor FP8 cells where the tables have them.
 */
export function linearGemmDtype(
  weights: WeightDtype,
  kernel: BlockFp8Kernel,
  tables: OpPerfTables,
): WeightDtype {
  return weights === "fp8_block" && kernel === "per-tensor" && tables.hasGemm("fp8") ? "fp8" : weights;
}

/** Entries of `OpLevelTiming`'s decode-attention cache (a power of two). */
const DECODE_ATTN_SLOTS = 4096;

/**
 * Architectures whose attention normalizes Q and K per head (RMSNorm before RoPE) in every layer:
 * the Qwen3 family and MiniMax-M2, as AIConfigurator's model loader marks them (`use_qk_norm`,
 * `aisimulate_core/sdk/utils.py` in the aisimulate 0.13.0 wheels).
 */
const QK_NORM_ARCHITECTURES: ReadonlySet<string> = new Set([
  "Qwen3ForCausalLM",
  "Qwen3MoeForCausalLM",
  "MiniMaxM2ForCausalLM",
]);

/**
 * The Q/K norm's time per layer per pass when it runs as separate kernels: two small norm
 * kernels whose cost does not depend on the pass's tokens. Measured on the reference's op-level
 * estimator (docs/timing.md "Q/K norm"): Qwen3-8B's attention op minus Llama-3.1-8B's (the same
 * 32 × 8 × 128 heads) per layer is 0.02641 ms on H200 and B200, 0.02642 on H100, 0.02643 on
 * A100, 0.02647 on L40S, for decode batches 1…256 at contexts 128…32,768, prefills of
 * 128…32,768 tokens and TP 1, 2 and 4.
 */
export const QK_NORM_MS_PER_LAYER = 0.02641;

/**
 * Fixed time of a prefill pass's attention per layer beyond the attention kernel the context
 * tables measure: the small kernels around it (the rotary embedding and the KV-cache write of the
 * new tokens), which prefill runs outside CUDA graphs. Measured on the reference's op-level
 * estimator (docs/timing.md "Prefill attention's fixed part"): its context-attention op exceeds the
 * table's kernel by 0.0132 ms per layer per pass (0.0131–0.0133 ms) for Llama-3.1-8B and 70B,
 * TP 1 and 4, on H100, H200, B200, A100 and L40S, from 128 to 8,192 tokens and batches 1–8.
 */
export const PREFILL_ATTENTION_FIXED_MS_PER_LAYER = 0.0132;

/**
 * The op-level forward-pass model (`timing: {type: default}`, `ai-dynamo/aisimulate@2262f3f:docs/perf-model/methods/op-level.md`): a pass is the
 * sum over the operations of one forward pass — per layer add+norm, QKV GEMM, attention, output
 * GEMM, add+norm, gate/up GEMM (or router + fused MoE), activation, down GEMM and two tensor-parallel
 * all-reduces; once per pass the embedding (+ its all-reduce), the LM head on the last token of
 * each sequence, and the pipeline hand-offs — following AIConfigurator's LLAMA op list. Each op's
 * latency comes from silicon-measured tables (`OpPerfTables`); memory-bound elementwise ops use the
 * GPU's empirical bandwidth. Prefill and decode are priced separately and added, as the
 * reference's vLLM core does (`ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`).
 *
 * All layers of a pipeline stage run one after another, and the stages of one pass run in
 * sequence, so a pass costs all layers plus (pp − 1) point-to-point transfers.
 *
 * Speed: the attention-free part of a pass depends only on the token count, so it is memoized by
 * token count; attention is one table interpolation per pass.
 *
 * Speculative decoding (docs/speculation.md): a verify pass runs each speculating sequence's real
 * token and its draft tokens as decode positions — the GEMMs, MoE, norms and all-reduces at all
 * positions, the LM head on every position, decode attention with every position as a query row
 * over its sequence's context (AIConfigurator's `(nextn + 1)` decode batch) — plus the drafter's
 * own work: nothing for `ngram` (host-side lookup), one decoder layer, the LM head and one
 * layer's decode attention per draft step for `mtp`.
 */
export class OpLevelTiming implements TimingModel {
  private readonly layerGemms: GemmOp[] = [];
  private readonly tokenMemOps: MemOp[] = [];
  private readonly numLayers: number;
  private readonly headsPerGpu: number;
  private readonly kvHeadsPerGpu: number;
  /** The attention heads one GPU holds, as the tables price them (built once). */
  private readonly heads: AttentionHeads;
  private readonly hiddenBytesPerToken: number;
  private readonly logitsN: number;
  private readonly tokenCostCache = new Map<number, number>();
  /** Per-pass time of the layers' Q/K norms (0 for a model without them). */
  private readonly qkNormMs: number;
  private readonly logitsCache = new Map<number, number>();
  /**
   * Decode attention by (batch, context), direct-mapped (a colliding pair replaces the entry): a
   * pass's grid interpolation is the same pure function of its two arguments, and passes repeat
   * pairs often (a steady batch over contexts that move slowly).
   */
  private readonly decodeAttnKeys = new Float64Array(DECODE_ATTN_SLOTS).fill(-1);
  private readonly decodeAttnValues = new Float64Array(DECODE_ATTN_SLOTS);
  /** Latent attention (DeepSeek); null for MHA/GQA models. */
  private readonly mla: MlaAttention | null;
  /**
   * vLLM's measured MLA module (hardware/mlaModule.ts): where set, one layer's attention block
   * (projections, kernel, absorbed products) is priced whole from it, not op by op.
   */
  private readonly mlaModule: MlaModuleTable | null;
  /** MLA only: GEMMs that run on prefill tokens (kv_b up-projection) or decode rows (absorbed BMMs). */
  private readonly mlaPrefillGemms: GemmOp[] = [];
  private readonly mlaDecodeGemms: GemmOp[] = [];
  private readonly mlaDecodeGemmCache = new Map<number, number>();
  /** Layers with routed experts (every layer for Mixtral/Qwen3-MoE; DeepSeek's after the dense ones). */
  private readonly moeLayers: number;
  /** The MoE layer as the tables price it, built once (null: a dense model). */
  private readonly moeShape: MoeShape | null;
  private readonly draftLayerCache = new Map<number, number>();
  /** MHA only, where the op tables' decode-attention grid breaks the HBM bound (timing/mhaDecodeRoofline.ts). */
  private readonly decodeRoofline: DecodeRoofline | null;
  /** The shared experts' ops of one MoE layer (empty without shared experts). */
  private readonly sharedGemms: GemmOp[] = [];
  private sharedActBytesPerToken = 0;
  /**
   * The largest pass (tokens) whose shared experts run on a second stream beside the routed ones
   * (timing/timingSpec.ts `sharedExpertStreamTokensOf`); 0: never.
   */
  private readonly sharedExpertStreamTokens: number;

  constructor(
    private readonly model: ModelArchitecture,
    private readonly gpu: GpuSpec,
    private readonly tables: OpPerfTables,
    private readonly parallel: Parallelism,
    /** Host time outside kernels per non-empty pass (timing/hostOverhead.ts); none by default. */
    private readonly host: HostOverhead = { perPassMs: 0, perSequenceMs: 0 },
    /** How draft tokens are made when the worker speculates (null: it does not). */
    private readonly drafter: DraftKind | null = null,
    /** How the backend runs the kernels whose choice changes a pass's price (timing/timingSpec.ts). */
    kernels: Partial<BackendKernels> = {},
    /** vLLM's CUDA-graph padding of a pass's token count (timing/cudaGraphs.ts); null: none. */
    private readonly graphs: CudaGraphPadding | null = null,
  ) {
    const blockFp8Kernel = kernels.blockFp8 ?? "measured";
    const qkNormKernel = kernels.qkNorm ?? "separate";
    this.sharedExpertStreamTokens = kernels.sharedExpertStreamTokens ?? 0;
    this.mlaModule = model.mla === null ? null : (kernels.mlaModule ?? null);
    const tp = parallel.tensor;
    const h = model.hiddenSize;
    const hd = model.headDim;
    this.numLayers = model.numLayers;
    this.headsPerGpu = model.numHeads / tp;
    // KV heads are replicated when there are fewer of them than tensor-parallel ranks.
    this.kvHeadsPerGpu = Math.max(1, Math.floor(model.numKvHeads / tp));
    this.heads = {
      numHeads: this.headsPerGpu,
      numKvHeads: this.kvHeadsPerGpu,
      headDim: model.headDim,
      kvDtype: model.kvDtype,
    };
    this.hiddenBytesPerToken = h * 2;
    this.logitsN = Math.floor(model.vocabSize / tp);
    const L = model.numLayers;
    // Linear layers' GEMM cells; the MoE experts keep the model's dtype (`moeLayerMs`).
    const w = linearGemmDtype(model.weightDtype, blockFp8Kernel, tables);
    const mla = model.mla;
    this.moeLayers = model.moe === null ? 0 : model.moe.moeLayers;
    this.moeShape =
      model.moe === null
        ? null
        : {
            dtype: model.weightDtype,
            hiddenSize: h,
            interSize: model.moe.expertIntermediateSize,
            topK: model.moe.topK,
            numExperts: model.moe.numExperts,
            moeTp: parallel.moeTensor,
            moeEp: parallel.moeExpert,
          };
    this.qkNormMs =
      mla === null && qkNormKernel === "separate" && QK_NORM_ARCHITECTURES.has(model.architecture)
        ? L * QK_NORM_MS_PER_LAYER
        : 0;
    this.decodeRoofline =
      mla === null
        ? mhaDecodeRoofline(tables, gpu, this.headsPerGpu, this.kvHeadsPerGpu, hd, model.kvDtype)
        : null;
    if (mla === null) {
      this.mla = null;
      this.layerGemms.push({
        name: "qkv_gemm",
        n: (this.headsPerGpu + 2 * this.kvHeadsPerGpu) * hd,
        k: h,
        dtype: w,
        repeat: L,
      });
      this.layerGemms.push({ name: "proj_gemm", n: h, k: this.headsPerGpu * hd, dtype: w, repeat: L });
    } else {
      this.mla = new MlaAttention(mla, gpu, tables, this.headsPerGpu, model.kvDtype);
      // The measured module holds the projections: they are not priced again as GEMMs.
      if (this.mlaModule === null) this.pushMlaGemms(mla, L, w);
    }
    // add+norm reads and writes 2 × hidden activations (residual + normed), BF16.
    this.tokenMemOps.push({
      name: "add_norm",
      bytesPerToken: (2 * h + 2 * h) * 2,
      repeat: 2 * L,
      perDraftStep: 2,
    });
    this.tokenMemOps.push({ name: "embedding", bytesPerToken: h * 2, repeat: 1, perDraftStep: 1 });
    const denseLayers = L - this.moeLayers;
    if (denseLayers > 0) this.pushDenseMlp("", model.intermediateSize / tp, denseLayers, w);
    if (model.moe !== null) {
      this.layerGemms.push({
        name: "router_gemm",
        n: model.moe.numExperts,
        k: h,
        dtype: "bfloat16",
        repeat: this.moeLayers,
      });
      const shared = model.moe.sharedIntermediateSize;
      if (shared > 0) {
        this.pushDenseMlp("shared_", shared / tp, this.moeLayers, w);
        // The MLP's two GEMMs and its activation, just pushed.
        this.sharedGemms.push(...this.layerGemms.slice(-2));
        this.sharedActBytesPerToken = this.tokenMemOps[this.tokenMemOps.length - 1].bytesPerToken;
      }
    }
  }

  /** A gated MLP (gate+up GEMM, activation, down GEMM) of `inter` per rank on `repeat` layers. */
  private pushDenseMlp(prefix: string, inter: number, repeat: number, w: WeightDtype): void {
    const h = this.model.hiddenSize;
    this.layerGemms.push({ name: `${prefix}gate_up_gemm`, n: 2 * inter, k: h, dtype: w, repeat });
    this.layerGemms.push({ name: `${prefix}down_gemm`, n: h, k: inter, dtype: w, repeat });
    // One draft step is one average decoder layer (docs/speculation.md), so per-layer ops count repeat / L.
    this.tokenMemOps.push({
      name: `${prefix}act_gate`,
      bytesPerToken: (2 * inter + inter) * 2,
      repeat,
      perDraftStep: repeat / this.numLayers,
    });
  }

  /**
   * MLA's projections (AIC `sdk/models/deepseek.py`): the replicated down-projection of the hidden
   * state to the query and KV latents, the query up-projection and the output projection on every
   * token; the KV up-projection on prefill tokens; the absorbed W_UK / W_UV products (per-head
   * BMMs, priced as one GEMM of the same FLOPs and weight bytes, BF16 as vLLM keeps them) on
   * decode rows.
   */
  private pushMlaGemms(mla: MlaSpec, L: number, w: WeightDtype): void {
    const h = this.model.hiddenSize;
    const heads = this.headsPerGpu;
    const qHead = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
    this.layerGemms.push({
      name: "mla_down_gemm",
      n: mla.qLoraRank + mla.kvLoraRank + mla.qkRopeHeadDim,
      k: h,
      dtype: w,
      repeat: L,
    });
    this.layerGemms.push({
      name: "q_up_gemm",
      n: heads * qHead,
      k: mla.qLoraRank > 0 ? mla.qLoraRank : h,
      dtype: w,
      repeat: L,
    });
    this.layerGemms.push({ name: "proj_gemm", n: h, k: heads * mla.vHeadDim, dtype: w, repeat: L });
    this.mlaPrefillGemms.push({
      name: "kv_up_gemm",
      n: heads * (mla.qkNopeHeadDim + mla.vHeadDim),
      k: mla.kvLoraRank,
      dtype: w,
      repeat: L,
    });
    this.mlaDecodeGemms.push({
      name: "mla_bmm_pre",
      n: heads * mla.kvLoraRank,
      k: mla.qkNopeHeadDim,
      dtype: "bfloat16",
      repeat: L,
    });
    this.mlaDecodeGemms.push({
      name: "mla_bmm_post",
      n: heads * mla.vHeadDim,
      k: mla.kvLoraRank,
      dtype: "bfloat16",
      repeat: L,
    });
  }

  prefillMs(batchCount: number, meanIsl: number, meanPrefix: number): number {
    if (batchCount <= 0) return 0;
    const perRequestNew = meanIsl > meanPrefix ? meanIsl - meanPrefix : 0;
    if (perRequestNew === 0) return 0;
    const tokens = batchCount * perRequestNew;
    return (
      this.tokenCost(tokens) +
      this.logits(batchCount) +
      this.numLayers * this.prefillAttention(batchCount, perRequestNew, meanPrefix) +
      this.mlaPrefillGemmMs(tokens) +
      this.hostMs(batchCount)
    );
  }

  decodeMs(batch: number, _activeKvTokens: number, meanContext: number, _totalKvTokens: number): number {
    if (batch <= 0) return 0;
    const ms =
      this.tokenCost(batch) +
      this.logits(batch) +
      this.numLayers * this.decodeAttention(batch, Math.max(1, Math.round(meanContext))) +
      this.mlaDecodeGemmMs(batch) +
      this.hostMs(batch);
    // Token-emitting passes never collapse onto one timestamp (as the reference floors decode).
    return Math.max(ms, 1e-3);
  }

  /**
   * `passMs` of `count` plain decode passes (`TimingModel.decodeRunMs`): `decodeMs` of each, with
   * the terms that depend on the batch alone computed once and added in `decodeMs`'s order, so
   * every duration is the same double.
   */
  decodeRunMs(
    batch: number,
    firstActiveKvTokens: number,
    _totalKvTokens: number,
    count: number,
    out: Float64Array,
  ): void {
    if (batch <= 0) {
      out.fill(0, 0, count);
      return;
    }
    const tokensAndLogits = this.tokenCost(batch) + this.logits(batch);
    const mlaGemms = this.mlaDecodeGemmMs(batch);
    const host = this.hostMs(batch);
    const layers = this.numLayers;
    let activeKv = firstActiveKvTokens;
    for (let j = 0; j < count; j++) {
      const context = Math.max(1, Math.round(activeKv / batch));
      const ms = tokensAndLogits + layers * this.decodeAttention(batch, context) + mlaGemms + host;
      out[j] = Math.max(ms, 1e-3);
      activeKv += batch;
    }
  }

  /**
   * A decode pass in which `draftSequences` of the `batch` sequences verify `draftTokens` draft
   * tokens: `batch + draftTokens` positions through the layers, the LM head and decode attention
   * (each position a query row over the mean context), host time per sequence, and the drafts.
   */
  private verifyMs(batch: number, meanContext: number, draftSequences: number, draftTokens: number): number {
    const rows = batch + draftTokens;
    const context = Math.max(1, Math.round(meanContext));
    const ms =
      this.tokenCost(rows) +
      this.logits(rows) +
      this.numLayers * this.decodeAttention(rows, context) +
      this.mlaDecodeGemmMs(rows) +
      this.hostMs(batch) +
      this.draftMs(draftSequences, draftTokens, context);
    return Math.max(ms, 1e-3);
  }

  /**
   * The drafter's GPU time for `draftTokens` drafts of `draftSequences` sequences: none for
   * `ngram` (the lookup runs on the host, inside the per-sequence host overhead); for `mtp`, one
   * draft step per draft token of a sequence (the mean, rounded up), each one decoder layer at
   * one row per sequence, the LM head on those rows and one layer of decode attention.
   */
  private draftMs(draftSequences: number, draftTokens: number, context: number): number {
    if (this.drafter !== "mtp" || draftSequences <= 0 || draftTokens <= 0) return 0;
    const steps = Math.ceil(draftTokens / draftSequences);
    return (
      steps *
      (this.draftLayerMs(draftSequences) +
        this.logits(draftSequences) +
        this.decodeAttention(draftSequences, context) +
        this.mlaDecodeGemmMs(draftSequences) / this.numLayers)
    );
  }

  /**
   * A mixed pass: prefill of one batch plus decode of another, run as ONE forward pass, as vLLM
   * runs it: the GEMMs, norms, all-reduces and the MoE see all tokens of the pass at once (the
   * weights are read once), the LM head runs once over every sequence's last row, and the two
   * attention kernels and the per-pass overhead are added. The reference prices the halves as two
   * passes and adds them, which reads the weights twice (docs/timing.md, "Mixed passes").
   */
  passMs(pass: Readonly<PassShape>): number {
    const { prefillCount, meanIsl, meanPrefix, meanContext, draftSequences, draftTokens } = pass;
    const perRequestNew = prefillCount > 0 && meanIsl > meanPrefix ? meanIsl - meanPrefix : 0;
    const prefillRows = perRequestNew > 0 ? prefillCount : 0;
    const decodeRows = Math.max(pass.decodeBatch, 0);
    // Drafts ride decoding sequences only.
    const drafts = decodeRows > 0 && draftSequences > 0 && draftTokens > 0 ? draftTokens : 0;
    if (prefillRows === 0 && decodeRows === 0) return 0;
    if (prefillRows === 0) {
      return drafts === 0
        ? this.decodeMs(decodeRows, pass.activeKvTokens, meanContext, pass.totalKvTokens)
        : this.verifyMs(decodeRows, meanContext, draftSequences, drafts);
    }
    const L = this.numLayers;
    let ms =
      this.tokenCost(prefillRows * perRequestNew + decodeRows + drafts) +
      this.logits(prefillRows + decodeRows + drafts) +
      L * this.prefillAttention(prefillRows, perRequestNew, meanPrefix) +
      this.mlaPrefillGemmMs(prefillRows * perRequestNew) +
      this.hostMs(prefillRows + decodeRows);
    if (decodeRows > 0) {
      const context = Math.max(1, Math.round(meanContext));
      ms += L * this.decodeAttention(decodeRows + drafts, context);
      ms += this.mlaDecodeGemmMs(decodeRows + drafts);
      if (drafts > 0) ms += this.draftMs(draftSequences, drafts, context);
    }
    return ms;
  }

  /** Per-op breakdown of a prefill pass (for `fleetsim estimate`; not on the hot path). */
  explainPrefill(batchCount: number, newTokensPerRequest: number, prefix: number): PassEstimate {
    const attention = this.prefillAttention(batchCount, newTokensPerRequest, prefix);
    const tokens = batchCount * newTokensPerRequest;
    const name = this.mlaModule === null ? "context_attention" : "context_mla_module";
    return this.explain(batchCount, tokens, this.mlaPrefillGemms, name, attention);
  }

  /** Per-op breakdown of a decode pass. */
  explainDecode(batch: number, context: number): PassEstimate {
    const attention = this.decodeAttention(batch, context);
    const name = this.mlaModule === null ? "generation_attention" : "generation_mla_module";
    return this.explain(batch, batch, this.mlaDecodeGemms, name, attention);
  }

  /** A pass of `rows` sequences and `tokens` tokens, op by op; `attentionMs` is one layer's attention. */
  private explain(
    rows: number,
    tokens: number,
    mlaGemms: GemmOp[],
    attention: string,
    attentionMs: number,
  ): PassEstimate {
    const ops: OpCost[] = [];
    this.tokenOps(tokens, ops);
    ops.push({ name: "logits_gemm", repeat: 1, latencyMs: this.logits(rows) });
    ops.push(...this.gemmOps(mlaGemms, tokens));
    ops.push({ name: attention, repeat: this.numLayers, latencyMs: this.numLayers * attentionMs });
    return finish(ops, this.hostMs(rows));
  }

  /** Host time of a pass over `sequences` sequences. */
  private hostMs(sequences: number): number {
    return this.host.perPassMs + this.host.perSequenceMs * sequences;
  }

  /** Prefill attention of one layer: `rows` requests × `newTokens` over `prefix`. */
  private prefillAttention(rows: number, newTokens: number, prefix: number): number {
    if (this.mlaModule !== null) return this.mlaModule.prefillMs(rows, newTokens, prefix);
    if (this.mla !== null) return this.mla.prefillMs(rows, newTokens, prefix);
    return (
      this.tables.contextAttention(this.heads, rows, newTokens, prefix) + PREFILL_ATTENTION_FIXED_MS_PER_LAYER
    );
  }

  /** Decode attention of one layer: `batch` requests over `context` cached tokens. */
  private decodeAttention(batch: number, context: number): number {
    if (this.mla !== null && this.mlaModule === null) return this.mla.decodeMs(batch, context);
    // Integers: batch < 2^21 sequences, context < 2^31 tokens, so the key is exact.
    const key = batch * 2147483648 + context;
    const slot = (Math.imul(batch, 0x9e3779b1) ^ context) & (DECODE_ATTN_SLOTS - 1);
    if (this.decodeAttnKeys[slot] === key) return this.decodeAttnValues[slot];
    const ms = this.generationAttention(batch, context);
    this.decodeAttnKeys[slot] = key;
    this.decodeAttnValues[slot] = ms;
    return ms;
  }

  private generationAttention(batch: number, context: number): number {
    if (this.mlaModule !== null) return this.mlaModule.decodeMs(batch, context);
    if (this.decodeRoofline !== null) return rooflineDecodeMs(this.decodeRoofline, batch, context);
    return this.tables.generationAttention(this.heads, batch, context);
  }

  /** MLA's KV up-projection of `tokens` prefill tokens, all layers (0 without MLA). */
  private mlaPrefillGemmMs(tokens: number): number {
    if (this.mla === null || tokens <= 0) return 0;
    let sum = 0;
    for (const op of this.gemmOps(this.mlaPrefillGemms, tokens)) sum += op.latencyMs;
    return sum;
  }

  /** MLA's absorbed per-head products of `rows` decode rows, all layers (memoized; 0 without MLA). */
  private mlaDecodeGemmMs(rows: number): number {
    if (this.mla === null || rows <= 0) return 0;
    const cached = this.mlaDecodeGemmCache.get(rows);
    if (cached !== undefined) return cached;
    let sum = 0;
    for (const op of this.gemmOps(this.mlaDecodeGemms, rows)) sum += op.latencyMs;
    if (this.mlaDecodeGemmCache.size < 1 << 16) this.mlaDecodeGemmCache.set(rows, sum);
    return sum;
  }

  private gemmOps(gemms: readonly GemmOp[], tokens: number): OpCost[] {
    const t = this.tables;
    return gemms.map((g) => ({
      name: g.name,
      repeat: g.repeat,
      latencyMs: g.repeat * t.gemm(g.dtype, tokens, g.n, g.k),
    }));
  }

  /** Everything but attention and logits for `tokens` tokens in the pass (memoized). */
  private tokenCost(rawTokens: number): number {
    // The token-dependent ops run as the captured CUDA graph of the next size (attention does not).
    const tokens = this.graphs === null ? rawTokens : this.graphs.tokens(rawTokens);
    const cached = this.tokenCostCache.get(tokens);
    if (cached !== undefined) return cached;
    const sum = this.tokenOps(tokens, null);
    if (this.tokenCostCache.size < 1 << 16) this.tokenCostCache.set(tokens, sum);
    return sum;
  }

  /**
   * One MTP draft step's layer work for `tokens` rows (memoized): one decoder layer's GEMMs (or
   * router + MoE), its norms, activation and all-reduces, and the draft token's embedding. The
   * draft head's own input projection is left out (docs/speculation.md).
   */
  private draftLayerMs(tokens: number): number {
    const cached = this.draftLayerCache.get(tokens);
    if (cached !== undefined) return cached;
    const t = this.tables;
    const L = this.numLayers;
    let ms = 0;
    // A layer GEMM runs `repeat` times in a pass (L, or the dense / MoE layers of a model that has
    // both): the draft layer is the average decoder layer.
    for (const g of this.layerGemms) ms += (g.repeat / L) * t.gemm(g.dtype, tokens, g.n, g.k);
    const moe = this.model.moe;
    if (moe !== null) {
      ms += (this.moeLayers / L) * (this.moeLayerMs(tokens) - this.sharedExpertsHiddenMs(tokens));
      if (this.parallel.attentionData > 1 && this.parallel.moeExpert > 1) {
        ms += this.allToAllMs(tokens, moe.topK) / L;
      } else if (this.parallel.attentionData > 1) {
        ms += this.dpGatherMs(tokens) / L;
      }
    }
    for (const m of this.tokenMemOps) ms += m.perDraftStep * this.memOpMs(tokens * m.bytesPerToken);
    // The draft layer's own Q/K norm (one layer's share).
    ms += this.qkNormMs / L;
    const tp = this.parallel.tensor;
    if (tp > 1) ms += 3 * t.allReduce(tp, tokens * this.hiddenBytesPerToken);
    if (this.draftLayerCache.size < 1 << 16) this.draftLayerCache.set(tokens, ms);
    return ms;
  }

  /**
   * What one MoE layer saves when its shared experts run on a second stream beside the router and
   * the routed experts (passes of at most `sharedExpertStreamTokens` tokens): the layer then costs
   * the longer of the two paths, so the shorter one is hidden. 0 when the pass is larger, the model
   * has no shared experts or the backend runs them in line.
   */
  private sharedExpertsHiddenMs(tokens: number): number {
    if (this.sharedGemms.length === 0 || tokens <= 0 || tokens > this.sharedExpertStreamTokens) return 0;
    const t = this.tables;
    let shared = this.memOpMs(tokens * this.sharedActBytesPerToken);
    for (const g of this.sharedGemms) shared += t.gemm(g.dtype, tokens, g.n, g.k);
    const moe = this.model.moe!;
    const routed =
      t.gemm("bfloat16", tokens, moe.numExperts, this.model.hiddenSize) + this.moeLayerMs(tokens);
    return Math.min(shared, routed);
  }

  /** One MoE layer's fused experts for `tokens` tokens of each attention-DP rank. */
  private moeLayerMs(tokens: number): number {
    // Every attention-DP rank's tokens go through the shared experts; ranks are assumed
    // balanced (each rank is priced on its own batch).
    return this.tables.moe(this.moeShape!, tokens * this.parallel.attentionData);
  }

  private logits(rows: number): number {
    const cached = this.logitsCache.get(rows);
    if (cached !== undefined) return cached;
    // The LM head is not quantized in the supported checkpoints (modelopt excludes lm_head).
    const ms = this.tables.gemm("bfloat16", rows, this.logitsN, this.model.hiddenSize);
    this.logitsCache.set(rows, ms);
    return ms;
  }

  /**
   * The token-dependent ops of a pass of `tokens` tokens (everything but attention and logits):
   * their latencies summed in the order listed and, when `ops` is given, each op listed there too
   * (`explain`). One path for the price and its breakdown; the price (`tokenCost`) makes no object
   * per op.
   */
  private tokenOps(tokens: number, ops: OpCost[] | null): number {
    const t = this.tables;
    let sum = 0;
    for (const g of this.layerGemms) {
      const ms = g.repeat * t.gemm(g.dtype, tokens, g.n, g.k);
      sum += ms;
      if (ops !== null) ops.push({ name: g.name, repeat: g.repeat, latencyMs: ms });
    }
    const moe = this.model.moe;
    if (moe !== null) {
      const p = this.parallel;
      const moeMs = this.moeLayers * this.moeLayerMs(tokens);
      sum += moeMs;
      if (ops !== null) ops.push({ name: "moe", repeat: this.moeLayers, latencyMs: moeMs });
      if (p.attentionData > 1 && p.moeExpert > 1) {
        const ms = this.allToAllMs(tokens, moe.topK);
        sum += ms;
        if (ops !== null) ops.push({ name: "moe_all_to_all", repeat: 2 * this.moeLayers, latencyMs: ms });
      } else if (p.attentionData > 1) {
        const ms = this.dpGatherMs(tokens);
        sum += ms;
        if (ops !== null) ops.push({ name: "moe_dp_gather", repeat: this.moeLayers, latencyMs: ms });
      }
      const hidden = this.sharedExpertsHiddenMs(tokens);
      if (hidden > 0) {
        const ms = -this.moeLayers * hidden;
        sum += ms;
        if (ops !== null) ops.push({ name: "shared_experts_overlap", repeat: this.moeLayers, latencyMs: ms });
      }
    }
    for (const m of this.tokenMemOps) {
      const ms = m.repeat * this.memOpMs(tokens * m.bytesPerToken);
      sum += ms;
      if (ops !== null) ops.push({ name: m.name, repeat: m.repeat, latencyMs: ms });
    }
    if (this.qkNormMs > 0 && tokens > 0) {
      sum += this.qkNormMs;
      if (ops !== null) ops.push({ name: "qk_norm", repeat: this.numLayers, latencyMs: this.qkNormMs });
    }
    const tp = this.parallel.tensor;
    if (tp > 1) {
      const bytes = tokens * this.hiddenBytesPerToken;
      // Two all-reduces per layer (after attention and after the MLP) plus one after the embedding.
      const repeat = 2 * this.numLayers + 1;
      const ms = repeat * t.allReduce(tp, bytes);
      sum += ms;
      if (ops !== null) ops.push({ name: "all_reduce", repeat, latencyMs: ms });
    }
    const pp = this.parallel.pipeline;
    if (pp > 1) {
      const bytes = tokens * this.hiddenBytesPerToken;
      const g = this.gpu;
      const bw = pp * tp <= g.gpusPerNode ? g.intraNodeBandwidth : g.interNodeBandwidth;
      const ms = (pp - 1) * (bytes / bw + g.p2pLatencyS) * 1000;
      sum += ms;
      if (ops !== null) ops.push({ name: "pipeline_p2p", repeat: pp - 1, latencyMs: ms });
    }
    return sum;
  }

  /**
   * With attention DP and the experts tensor-sharded over the worker's `tensor × attention_data`
   * GPUs (no expert parallelism), every MoE layer needs every rank's tokens on every GPU: vLLM
   * all-gathers the hidden states across the DP ranks before the fused experts and
   * reduce-scatters the partial outputs after them (its `allgather_reducescatter` path). An
   * all-gather plus a reduce-scatter move what one all-reduce of the gathered message moves, so
   * the pair is priced as an all-reduce of `tokens × attention_data` BF16 hidden rows over the
   * group, from the measured NCCL tables; all MoE layers of one pass.
   */
  private dpGatherMs(tokens: number): number {
    const p = this.parallel;
    const width = p.tensor * p.attentionData;
    return this.moeLayers * this.tables.allReduce(width, tokens * p.attentionData * this.hiddenBytesPerToken);
  }

  /**
   * Expert-parallel dispatch and combine of one pass, all MoE layers, when attention-DP ranks hold
   * different tokens (with attention TP only, every rank holds every token and the combine is the
   * all-reduce already priced). Each rank sends each of its tokens to its top-k experts' ranks and
   * receives the results back: (EP − 1) / EP of tokens · top-k · hidden, FP8 out (vLLM's DeepEP
   * dispatch quantizes) and BF16 back, over NVLink within a node and the scale-out link beyond.
   * No table measures it: a bandwidth-plus-latency estimate (docs/models.md "Wide expert parallelism").
   */
  private allToAllMs(tokens: number, topK: number): number {
    const p = this.parallel;
    const g = this.gpu;
    const ep = p.moeExpert;
    const width = p.tensor * p.attentionData;
    const bw = width * p.pipeline <= g.gpusPerNode ? g.intraNodeBandwidth : g.interNodeBandwidth;
    const remote = (tokens * topK * this.model.hiddenSize * (ep - 1)) / ep;
    const dispatch = (remote * 1) / bw + g.p2pLatencyS;
    const combine = (remote * 2) / bw + g.p2pLatencyS;
    return this.moeLayers * (dispatch + combine) * 1000;
  }

  /** A memory-bound op moving `bytes`: empirical bandwidth plus a constant launch latency. */
  private memOpMs(bytes: number): number {
    const g = this.gpu;
    return (bytes / (g.memBandwidth * g.memBandwidthScaling) + g.memConstantLatencyS) * 1000;
  }
}

function finish(ops: OpCost[], overheadMs: number): PassEstimate {
  if (overheadMs > 0) ops.push({ name: "host_overhead", repeat: 1, latencyMs: overheadMs });
  let total = 0;
  for (const op of ops) total += op.latencyMs;
  return { totalMs: total, ops };
}
