import type { KvDtype, WeightDtype } from "./dtypes.js";
import type { MoeShape } from "./sol.js";

/**
 * Latency (milliseconds) of single operations on one GPU, as measured on silicon (AIConfigurator
 * `systems/data` tables, vLLM backend) and interpolated. Two implementations: the compact tables
 * committed in the project (`src/hardware/calibration/<gpu>.json`, derived by
 * `scripts/calibrate.ts`) and the raw parquet tree (`engine.perf_database`).
 * Every query is for shapes as ONE GPU sees them (already divided by tensor parallelism).
 */
/**
 * The attention heads one GPU holds and the KV cache's dtype: what prices an attention kernel
 * besides its batch and lengths, as one object that a caller builds once.
 */
export interface AttentionHeads {
  /** Query heads per GPU. */
  readonly numHeads: number;
  /** KV heads per GPU (`numHeads` for MHA). */
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly kvDtype: KvDtype;
}

export interface OpPerfTables {
  /** GPU id, e.g. `h200_sxm`. */
  readonly gpu: string;
  /** `[m × k] · [k × n]` GEMM. */
  gemm(dtype: WeightDtype, m: number, n: number, k: number): number;
  /** Whether `gemm` has measured cells of `dtype` (it throws for a dtype it lacks). */
  hasGemm(dtype: WeightDtype): boolean;
  /**
   * Prefill attention for `batch` requests each computing `newTokens` query tokens over
   * `prefix + newTokens` keys (causal).
   */
  contextAttention(heads: AttentionHeads, batch: number, newTokens: number, prefix: number): number;
  /** Decode attention: `batch` requests, one query token each over `kvLength` cached tokens. */
  generationAttention(heads: AttentionHeads, batch: number, kvLength: number): number;
  /** All-reduce of `messageBytes` (BF16 activations) across `numGpus` GPUs (vLLM custom all-reduce, CUDA graph). */
  allReduce(numGpus: number, messageBytes: number): number;
  /** Fused MoE layer of `shape`: `numTokens` tokens routed to `topK` of `numExperts` experts. */
  moe(shape: MoeShape, numTokens: number): number;
}
