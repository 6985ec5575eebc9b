/**
 * GPU systems that differ from a measured one only in memory size and bandwidth (same chip, same
 * SM count and clocks, same NVLink). Their op tables are the measured system's, each cell rescaled
 * by the roofline (`RooflineRescaledTables`): a memory-bound op slows by the bandwidth ratio, a
 * compute-bound one keeps its latency.
 */
import type { KvDtype, WeightDtype } from "./dtypes.js";
import type { GpuSpec } from "./gpu.js";
import type { OpPerfTables } from "./perfTables.js";
import { gemmSolMs, generationAttentionSolMs, moeSolMs } from "./sol.js";

export interface GpuVariant {
  /** The measured system whose op tables it reuses. */
  readonly base: string;
  readonly device: string;
  readonly memCapacityBytes: number;
  readonly memBandwidth: number;
  /** Where the figures come from. */
  readonly source: string;
}

export const GPU_VARIANTS: Readonly<Record<string, GpuVariant>> = {
  a100_sxm_40gb: {
    base: "a100_sxm",
    device: "NVIDIA A100-SXM4-40GB",
    memCapacityBytes: 40 * 2 ** 30,
    // HBM2 1,555 GB/s vs the 80 GB card's HBM2e 2,039 GB/s (NVIDIA A100 datasheet, SXM4 columns).
    memBandwidth: 1_555e9,
    source: "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB: 1,555 GB/s; 80 GB: 2,039 GB/s)",
  },
};

/** The spec of a variant over its base system's spec. */
export function variantSpec(id: string, v: GpuVariant, base: GpuSpec): GpuSpec {
  return {
    ...base,
    id,
    device: v.device,
    memCapacityBytes: v.memCapacityBytes,
    memBandwidth: v.memBandwidth,
  };
}

/** `base`'s measured tables with every cell scaled by SOL(variant) / SOL(base) of its shape. */
export class RooflineRescaledTables implements OpPerfTables {
  readonly gpu: string;

  constructor(
    private readonly base: OpPerfTables,
    private readonly baseSpec: GpuSpec,
    private readonly spec: GpuSpec,
  ) {
    this.gpu = spec.id;
  }

  gemm(dtype: WeightDtype, m: number, n: number, k: number): number {
    const ms = this.base.gemm(dtype, m, n, k);
    return ms === 0
      ? 0
      : (ms * gemmSolMs(this.spec, dtype, m, n, k)) / gemmSolMs(this.baseSpec, dtype, m, n, k);
  }

  contextAttention(
    batch: number,
    newTokens: number,
    prefix: number,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    kvDtype: KvDtype,
  ): number {
    // Prefill attention is compute-bound: the same FLOP/s give the same latency.
    return this.base.contextAttention(batch, newTokens, prefix, numHeads, numKvHeads, headDim, kvDtype);
  }

  generationAttention(
    batch: number,
    kvLength: number,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    kvDtype: KvDtype,
  ): number {
    const ms = this.base.generationAttention(batch, kvLength, numHeads, numKvHeads, headDim, kvDtype);
    if (ms === 0) return 0;
    const sol = (s: GpuSpec): number =>
      generationAttentionSolMs(s, batch, kvLength, numHeads, numKvHeads, headDim, kvDtype);
    return (ms * sol(this.spec)) / sol(this.baseSpec);
  }

  allReduce(numGpus: number, messageBytes: number): number {
    // Same NVLink: the collective does not depend on HBM bandwidth at these sizes.
    return this.base.allReduce(numGpus, messageBytes);
  }

  moe(
    dtype: WeightDtype,
    numTokens: number,
    hiddenSize: number,
    expertIntermediateSize: number,
    topK: number,
    numExperts: number,
    moeTp: number,
    moeEp: number,
  ): number {
    const ms = this.base.moe(
      dtype,
      numTokens,
      hiddenSize,
      expertIntermediateSize,
      topK,
      numExperts,
      moeTp,
      moeEp,
    );
    if (ms === 0) return 0;
    const sol = (s: GpuSpec): number =>
      moeSolMs(s, dtype, numTokens, hiddenSize, expertIntermediateSize, topK, numExperts, moeTp, moeEp);
    return (ms * sol(this.spec)) / sol(this.baseSpec);
  }
}
