import type { KvDtype, WeightDtype } from "./dtypes.js";
import type { GpuSpec } from "./gpu.js";

/**
 * Speed-of-light (roofline) latencies in ms, as AIConfigurator writes them (`get_sol` of
 * `operations/gemm.py`, `attention.py`, `moe.py`): max(math, memory) with the datasheet FLOP/s and
 * raw HBM bandwidth. Used to clamp measured GEMM/decode-attention cells (a cell faster than SOL is
 * a warm-cache artefact; AIC raises it to SOL) and to transfer utilisation to unmeasured MoE shapes.
 */

/** Bytes per element of a weight/activation dtype. */
export function weightBytes(dtype: WeightDtype): number {
  return dtype === "bfloat16" ? 2 : 1;
}

function flops(spec: GpuSpec, dtype: WeightDtype): number {
  return dtype === "bfloat16" ? spec.bf16Flops : spec.fp8Flops;
}

export function gemmSolMs(spec: GpuSpec, dtype: WeightDtype, m: number, n: number, k: number): number {
  const math = ((2 * m * n * k) / flops(spec, dtype)) * 1000;
  const mem = ((weightBytes(dtype) * (m * n + m * k + n * k)) / spec.memBandwidth) * 1000;
  return Math.max(math, mem);
}

/** Decode attention over `kv` cached tokens (AIC: s − 1 with s = cached + 1). */
export function generationAttentionSolMs(
  spec: GpuSpec,
  batch: number,
  kv: number,
  heads: number,
  kvHeads: number,
  headDim: number,
  kvDtype: KvDtype,
): number {
  const kvBytes = kvDtype === "fp8" ? 1 : 2;
  const ops = 2 * batch * heads * headDim * 2 * kv;
  const bytes = batch * (heads * headDim * 2 + 2 * kvHeads * kv * headDim * kvBytes + heads * headDim * 2);
  return attentionRooflineMs(spec, ops, bytes, kvDtype);
}

/** max(math, memory) of a decode-attention kernel; FP8 KV doubles the math rate (AIC). */
function attentionRooflineMs(spec: GpuSpec, ops: number, bytes: number, kvDtype: KvDtype): number {
  const compute = kvDtype === "fp8" ? 2 : 1;
  const math = ((ops / spec.bf16Flops) * 1000) / compute;
  const mem = (bytes / spec.memBandwidth) * 1000;
  return Math.max(math, mem);
}

/**
 * A fused MoE layer as one GPU runs it, all but the token count: one object, so that the tables,
 * their variants and the roofline take the eight numbers alike (a measured `MoeTable` is one).
 */
export interface MoeShape {
  readonly dtype: WeightDtype;
  readonly hiddenSize: number;
  /** Each expert's intermediate size (before the MoE tensor split). */
  readonly interSize: number;
  readonly topK: number;
  readonly numExperts: number;
  readonly moeTp: number;
  readonly moeEp: number;
}

/** Gated (3-GEMM) MoE MLP; router ignored; even workload (AIC `MoE.get_sol`). */
export function moeSolMs(spec: GpuSpec, shape: MoeShape, tokens: number): number {
  const {
    dtype,
    hiddenSize: hidden,
    interSize: inter,
    topK,
    numExperts: experts,
    moeTp: tp,
    moeEp: ep,
  } = shape;
  const gemms = 3;
  const total = tokens * topK;
  const ops = (total * hidden * inter * gemms * 2) / ep / tp;
  const bytes =
    weightBytes(dtype) *
    ((total / ep) * hidden * 2 +
      ((total / ep) * inter * gemms) / tp +
      ((hidden * inter * gemms) / tp) * Math.min(experts / ep, total / ep));
  const compute = dtype === "bfloat16" ? 1 : 2;
  const math = (ops / (spec.bf16Flops * compute)) * 1000;
  const mem = (bytes / spec.memBandwidth) * 1000;
  return Math.max(math, mem);
}

/**
 * Absorbed MLA decode attention (DeepSeek; FlashMLA-style): every query head reads the one cached
 * latent of `latentDim` (kv_lora + rope) per token, scores over it and sums `valueDim` (kv_lora)
 * values. Math 2 · batch · heads · kv · (latent + value); memory the latent cache plus the query
 * and output rows. FP8 KV doubles the math rate, as `generationAttentionSolMs` has it.
 */
export function mlaGenerationSolMs(
  spec: GpuSpec,
  batch: number,
  kv: number,
  heads: number,
  latentDim: number,
  valueDim: number,
  kvDtype: KvDtype,
): number {
  const kvBytes = kvDtype === "fp8" ? 1 : 2;
  const ops = 2 * batch * heads * kv * (latentDim + valueDim);
  const bytes = batch * (kv * latentDim * kvBytes + heads * (latentDim + valueDim) * 2);
  return attentionRooflineMs(spec, ops, bytes, kvDtype);
}
