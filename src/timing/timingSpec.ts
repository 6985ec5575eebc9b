import type { GpuSpec } from "../hardware/gpu.js";
import type { MlaModuleTable } from "../hardware/mlaModule.js";
import type { ModelArchitecture } from "../model/architecture.js";

/**
 * Forward-pass timing provider of one worker role (`ai-dynamo/aisimulate@a71c2e8:crates/core/src/engine/timing.rs`, `ai-dynamo/aisimulate@4c80077:crates/core/src/engine/common/perf_model.rs`). Defined here,
 * beside the models it selects, so that timing/ does not depend on config/ (RunSpec uses it).
 */
export type TimingSpec =
  | { readonly type: "polynomial" }
  | { readonly type: "fixed"; readonly prefillMs: number; readonly decodeMs: number }
  | {
      /** Op-level model over silicon-measured op tables (`ai-dynamo/aisimulate@2262f3f:docs/perf-model/methods/op-level.md`). */
      readonly type: "default";
      readonly model: ModelArchitecture;
      readonly gpu: GpuSpec;
      /** An AIConfigurator-format perf-data tree to read instead of the built-in tables. */
      readonly perfDatabase: string | null;
      /** `timing.host_overhead`: null fields take the defaults of `timing/hostOverhead.ts`. */
      readonly hostOverhead: { readonly perPassMs: number | null; readonly perSequenceMs: number | null };
      /**
       * `engine.enable_eplb`: the MoE layers are priced on the tables measured with balanced
       * expert load instead of power-law routing (docs/models.md "Expert load balance"). Absent = false.
       */
      readonly balancedMoe?: boolean;
      /**
       * `timing.op_tables`: `backend` prices an SGLang or TRT-LLM role from that backend's own
       * op tables where the built-in tables (or the perf database) have them; absent = the vLLM
       * tables (docs/backends.md "Timing").
       */
      readonly opTables?: "backend";
      /** `timing.mixed_passes: additive`: a mixed pass costs a prefill pass plus a decode pass (absent: one pass). */
      readonly mixedPasses?: "additive";
      /** `timing.context_attention_extrapolation: quadratic`: the reference's rule beyond the tables' longest sequence (absent: √). */
      readonly contextExtrapolation?: "quadratic";
      /** `timing.cuda_graph_padding: false`: a vLLM role's passes priced unpadded (absent: padded, timing/cudaGraphs.ts). */
      readonly cudaGraphPadding?: false;
    };

/**
 * How a speculating worker drafts its tokens (docs/speculation.md): `ngram` looks them up in the
 * sequence on the host (no GPU work); `mtp` runs a one-layer draft head of the target model once
 * per draft token (multi-token prediction / EAGLE-style heads; fleetsim extension).
 */
export type DraftKind = "ngram" | "mtp";

/** What a timing model needs of its worker role: the parallel layout and the scheduling mode. */
export interface TimedRole {
  readonly tensor: number;
  readonly pipeline: number;
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  /** vLLM `--async-scheduling` hides the host overhead behind the previous pass. */
  readonly asyncScheduling: boolean;
  /** `engine.speculation` (its drafter prices the draft work of a pass); absent or null = off. */
  readonly speculation?: { readonly kind: DraftKind } | null;
  /**
   * `engine.backend`; absent = `vllm`. It picks the kernel that prices a block-scaled FP8 linear
   * layer (`blockFp8Kernel`).
   */
  readonly backend?: "vllm" | "sglang" | "trtllm";
  /** The scheduler's limits, which set a vLLM role's CUDA-graph capture sizes (timing/cudaGraphs.ts); absent: no padding. */
  readonly maxSequences?: number;
  readonly maxBatchedTokens?: number;
}

/**
 * Which cells price a block-scaled FP8 (`fp8_block`) linear layer (docs/models.md "Block-scaled
 * FP8 GEMMs"): `measured` = the op tables' `fp8_block` cells, the kernel vLLM ran when the tables
 * were collected; `per-tensor` = the per-tensor FP8 cells of the same shape, for a backend whose
 * own block-scale kernel runs at about their speed (SGLang's DeepGEMM: its published times are at
 * or below them; TRT-LLM: AIConfigurator's TRT-LLM GEMM tables measure its block-scale kernel at
 * 0.97–1.14× them on H100/H200, 1.1–1.5× on B200), where the tables' `fp8_block` cells are 3–12×
 * slower at decode sizes. MoE experts are priced from the MoE tables either way.
 */
export type BlockFp8Kernel = "measured" | "per-tensor";

/** The backend's kernel choices that change what a pass costs (one role's, as `kernelsOf` picks them). */
export interface BackendKernels {
  readonly blockFp8: BlockFp8Kernel;
  readonly qkNorm: QkNormKernel;
  /** `sharedExpertStreamTokensOf`. */
  readonly sharedExpertStreamTokens: number;
  /** vLLM's measured MLA module (hardware/mlaModule.ts), where it prices the model's attention; null: the separate ops. */
  readonly mlaModule: MlaModuleTable | null;
}

/**
 * How a backend runs a Qwen3-style per-head Q/K norm (docs/timing.md "Q/K norm"): `separate`
 * norm kernels before RoPE, priced per layer as the reference's op-level estimator prices them
 * (vLLM, SGLang); or `fused` with RoPE into one kernel that replaces the RoPE the attention op
 * would otherwise apply, so nothing is added: TensorRT-LLM's Qwen3 attention
 * (`QKNormRoPEAttention`, `fuse_qk_norm_rope=True` by default, `torch.ops.trtllm.fused_qk_norm_rope`;
 * NVIDIA/TensorRT-LLM `tensorrt_llm/_torch/modules/qk_norm_attention.py` at a98a9061).
 */
export type QkNormKernel = "separate" | "fused";

/**
 * The largest pass, in tokens, whose MoE layers run the shared experts on a second CUDA stream,
 * beside the router and the routed experts (0: never). vLLM does so for passes of at most
 * `VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD` tokens, 256 by default
 * (`vllm-project/vllm@01b747c9:vllm/model_executor/layers/fused_moe/runner/shared_experts.py`,
 * `_determine_shared_experts_order`), which the reference's vLLM model prices as its
 * `generation_moe_overlap` op (docs/timing.md "Shared experts beside the routed ones"). SGLang and
 * TRT-LLM are priced without it, as the reference prices them.
 */
export function sharedExpertStreamTokensOf(backend: TimedRole["backend"]): number {
  return backend === "vllm" || backend === undefined ? VLLM_SHARED_EXPERTS_STREAM_TOKENS : 0;
}

/** vLLM's default `VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD`. */
export const VLLM_SHARED_EXPERTS_STREAM_TOKENS = 256;

export function qkNormKernelOf(backend: TimedRole["backend"]): QkNormKernel {
  return backend === "trtllm" ? "fused" : "separate";
}

/** The block-FP8 kernel of a backend: SGLang's DeepGEMM and TRT-LLM's own kernel run at per-tensor speed. */
export function blockFp8KernelOf(backend: TimedRole["backend"]): BlockFp8Kernel {
  return backend === "sglang" || backend === "trtllm" ? "per-tensor" : "measured";
}
