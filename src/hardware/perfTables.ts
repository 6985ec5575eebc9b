import type { KvDtype, WeightDtype } from "./dtypes.js";

/**
 * Latency (milliseconds) of single operations on one GPU, as measured on silicon (AIConfigurator
 * `systems/data` tables, vLLM backend) and interpolated. Two implementations: the compact tables
 * committed in the project (`src/hardware/calibration/<gpu>.json`, derived by
 * `scripts/calibrate.ts`) and the raw parquet tree (`engine.perf_database`).
 * Every query is for shapes as ONE GPU sees them (already divided by tensor parallelism).
 */
export interface OpPerfTables {
  /** GPU id, e.g. `h200_sxm`. */
  readonly gpu: string;
  /** `[m × k] · [k × n]` GEMM. */
  gemm(dtype: WeightDtype, m: number, n: number, k: number): number;
  /** Whether `gemm` has measured cells of `dtype` (it throws for a dtype it lacks). */
  hasGemm(dtype: WeightDtype): boolean;
  /**
   * Prefill attention for `batch` requests each computing `newTokens` query tokens over
   * `prefix + newTokens` keys (causal), with `numHeads` query and `numKvHeads` KV heads per GPU.
   */
  contextAttention(
    batch: number,
    newTokens: number,
    prefix: number,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    kvDtype: KvDtype,
  ): number;
  /** Decode attention: `batch` requests, one query token each over `kvLength` cached tokens. */
  generationAttention(
    batch: number,
    kvLength: number,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    kvDtype: KvDtype,
  ): number;
  /** All-reduce of `messageBytes` (BF16 activations) across `numGpus` GPUs (vLLM custom all-reduce, CUDA graph). */
  allReduce(numGpus: number, messageBytes: number): number;
  /** Fused MoE layer: `numTokens` tokens routed to `topK` of `numExperts` experts. */
  moe(
    dtype: WeightDtype,
    numTokens: number,
    hiddenSize: number,
    expertIntermediateSize: number,
    topK: number,
    numExperts: number,
    moeTp: number,
    moeEp: number,
  ): number;
}
