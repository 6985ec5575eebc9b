/**
 * GPU systems without op tables of their own (docs/perf-tables.md "Derived systems"): each reuses
 * a measured system's tables, every cell rescaled by the roofline (`RooflineRescaledTables`), so a
 * memory-bound op moves with HBM bandwidth, a compute-bound one with FLOP/s and a collective with
 * NVLink bandwidth. Two kinds:
 *
 * - **memory variants**: the same chip as the base with other memory (size, bandwidth);
 * - **estimated systems**: another chip, from its datasheet, over the measured system of the
 *   closest architecture. Their timing is an estimate, never a measurement: every run on one is
 *   labelled `estimated` (`hardwareData`, catalog.ts).
 */
import type { WeightDtype } from "./dtypes.js";
import type { GpuSpec } from "./gpu.js";
import type { AttentionHeads, OpPerfTables } from "./perfTables.js";
import { gemmSolMs, generationAttentionSolMs, type MoeShape, moeSolMs } from "./sol.js";

/** The datasheet figures an estimated system replaces in its base's spec. */
type DatasheetFields =
  | "bf16Flops"
  | "fp8Flops"
  | "powerW"
  | "gpusPerNode"
  | "intraNodeBandwidth"
  | "interNodeBandwidth"
  | "pcieBandwidth";

export interface GpuVariant {
  readonly kind: "memory" | "estimated";
  /** The measured system whose op tables it reuses. */
  readonly base: string;
  readonly device: string;
  readonly memCapacityBytes: number;
  readonly memBandwidth: number;
  /** Estimated systems: the chip's own figures (a memory variant keeps the base's). */
  readonly datasheet?: Readonly<Pick<GpuSpec, DatasheetFields>>;
  /** Where the figures come from. */
  readonly source: string;
}

export const GPU_VARIANTS: Readonly<Record<string, GpuVariant>> = {
  a100_sxm_40gb: {
    kind: "memory",
    base: "a100_sxm",
    device: "NVIDIA A100-SXM4-40GB",
    memCapacityBytes: 40 * 2 ** 30,
    // HBM2 1,555 GB/s vs the 80 GB card's HBM2e 2,039 GB/s (NVIDIA A100 datasheet, SXM4 columns).
    memBandwidth: 1_555e9,
    source: "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB: 1,555 GB/s; 80 GB: 2,039 GB/s)",
  },
  h20_3e: {
    kind: "estimated",
    // Hopper sm90 with HBM3e: H200's kernels, a seventh of its tensor-core FLOP/s.
    base: "h200_sxm",
    device: "NVIDIA H20 (141 GB HBM3e)",
    memCapacityBytes: 150_754_820_096, // 143,771 MiB as nvidia-smi reports it
    memBandwidth: 4.0e12,
    datasheet: {
      bf16Flops: 148e12,
      fp8Flops: 296e12,
      powerW: 400,
      gpusPerNode: 8,
      intraNodeBandwidth: 450e9, // NVLink 900 GB/s bidirectional
      interNodeBandwidth: 50e9,
      pcieBandwidth: 64e9,
    },
    source:
      "NVIDIA H20 141 GB datasheet figures as recorded in ai-dynamo/aisimulate:python/aisimulate/src/aisimulate_core/systems/h20_3e.yaml@39dd1a6 (BF16 148 / FP8 296 dense TFLOPS, 4.0 TB/s, NVLink 900 GB/s; TDP 400 W)",
  },
  gb200: {
    kind: "estimated",
    // One Blackwell GPU of a GB200 NVL72 rack: B200's kernels, a little more FLOP/s and HBM.
    base: "b200_sxm",
    device: "NVIDIA GB200 (one GPU of an NVL72 rack)",
    memCapacityBytes: 198_674_743_296, // 189,471 MiB as nvidia-smi reports it
    memBandwidth: 8.0e12,
    datasheet: {
      bf16Flops: 2.5e15,
      fp8Flops: 5.0e15,
      powerW: 1200,
      // 4 GPUs per compute tray, but NVLink 5 through the rack's NVSwitches to all 72: beyond a
      // tray the same 900 GB/s (as the reference's system file has it).
      gpusPerNode: 4,
      intraNodeBandwidth: 900e9,
      interNodeBandwidth: 900e9,
      pcieBandwidth: 64e9,
    },
    source:
      "NVIDIA Blackwell datasheet figures as recorded in ai-dynamo/aisimulate:python/aisimulate/src/aisimulate_core/systems/gb200.yaml@45574cd (BF16 2.5 / FP8 5 dense PFLOPS, 8 TB/s, NVLink 5 900 GB/s per direction in the rack, 1,200 W)",
  },
  mi300x: {
    kind: "estimated",
    // No AMD tables exist: Hopper's kernel efficiencies stand in for ROCm's, which is the least
    // certain estimate of the catalog (ROCm kernels usually reach a smaller share of the peak).
    base: "h200_sxm",
    device: "AMD Instinct MI300X",
    memCapacityBytes: 192e9,
    memBandwidth: 5.3e12,
    datasheet: {
      bf16Flops: 1307.4e12,
      fp8Flops: 2614.9e12,
      powerW: 750,
      gpusPerNode: 8,
      // Infinity Fabric: 7 links, 896 GB/s aggregate bidirectional per GPU.
      intraNodeBandwidth: 448e9,
      interNodeBandwidth: 50e9,
      pcieBandwidth: 64e9,
    },
    source:
      "AMD Instinct MI300X data sheet (192 GB HBM3, 5.3 TB/s, BF16 1,307.4 / FP8 2,614.9 dense TFLOPS, 896 GB/s Infinity Fabric, 750 W)",
  },
};

/** The spec of a variant over its base system's spec. */
export function variantSpec(id: string, v: GpuVariant, base: GpuSpec): GpuSpec {
  return {
    ...base,
    ...v.datasheet,
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

  hasGemm(dtype: WeightDtype): boolean {
    return this.base.hasGemm(dtype);
  }

  gemm(dtype: WeightDtype, m: number, n: number, k: number): number {
    const ms = this.base.gemm(dtype, m, n, k);
    return ms === 0
      ? 0
      : (ms * gemmSolMs(this.spec, dtype, m, n, k)) / gemmSolMs(this.baseSpec, dtype, m, n, k);
  }

  contextAttention(heads: AttentionHeads, batch: number, newTokens: number, prefix: number): number {
    // Prefill attention is compute-bound: it scales with the tensor-core FLOP/s (a memory variant
    // keeps its base's latency).
    const ms = this.base.contextAttention(heads, batch, newTokens, prefix);
    return this.baseSpec.bf16Flops === this.spec.bf16Flops
      ? ms
      : (ms * this.baseSpec.bf16Flops) / this.spec.bf16Flops;
  }

  generationAttention(heads: AttentionHeads, batch: number, kvLength: number): number {
    const ms = this.base.generationAttention(heads, batch, kvLength);
    if (ms === 0) return 0;
    const { numHeads, numKvHeads, headDim, kvDtype } = heads;
    const sol = (s: GpuSpec): number =>
      generationAttentionSolMs(s, batch, kvLength, numHeads, numKvHeads, headDim, kvDtype);
    return (ms * sol(this.spec)) / sol(this.baseSpec);
  }

  allReduce(numGpus: number, messageBytes: number): number {
    if (!(numGpus > 1 && messageBytes > 0)) return 0;
    // The base's measured all-reduce (at most one of its nodes), with the ring's bandwidth term
    // moved to this system's link: a ring all-reduce sends 2 (n − 1) / n of the message per GPU.
    // Its latency term is the base's. Beyond the base's node, the node-sized one rescaled as the
    // tables do (ring factor × this system's intra- to inter-node bandwidth ratio), with this
    // system's node size and links (a GB200 rack's NVLink reaches 72 GPUs at one bandwidth).
    const baseNode = this.baseSpec.gpusPerNode;
    const n = Math.min(numGpus, baseNode);
    const ringBytes = (2 * (n - 1) * messageBytes) / n;
    const measured =
      this.base.allReduce(n, messageBytes) +
      ringBytes * (1 / this.spec.intraNodeBandwidth - 1 / this.baseSpec.intraNodeBandwidth) * 1000;
    if (numGpus <= baseNode) return measured;
    const link =
      numGpus <= this.spec.gpusPerNode ? this.spec.intraNodeBandwidth : this.spec.interNodeBandwidth;
    return (measured * ((numGpus - 1) / numGpus) * (n / (n - 1)) * this.spec.intraNodeBandwidth) / link;
  }

  moe(shape: MoeShape, numTokens: number): number {
    const ms = this.base.moe(shape, numTokens);
    if (ms === 0) return 0;
    return (ms * moeSolMs(this.spec, shape, numTokens)) / moeSolMs(this.baseSpec, shape, numTokens);
  }
}
