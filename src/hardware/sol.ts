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
  const compute = kvDtype === "fp8" ? 2 : 1;
  const ops = 2 * batch * heads * headDim * 2 * kv;
  const bytes = batch * (heads * headDim * 2 + 2 * kvHeads * kv * headDim * kvBytes + heads * headDim * 2);
  const math = ((ops / spec.bf16Flops) * 1000) / compute;
  const mem = (bytes / spec.memBandwidth) * 1000;
  return Math.max(math, mem);
}

/** Gated (3-GEMM) MoE MLP; router ignored; even workload (AIC `MoE.get_sol`). */
export function moeSolMs(
  spec: GpuSpec,
  dtype: WeightDtype,
  tokens: number,
  hidden: number,
  inter: number,
  topK: number,
  experts: number,
  tp: number,
  ep: number,
): number {
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
