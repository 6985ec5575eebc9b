/**
 * Decode attention of multi-head-attention models (as many KV heads as query heads per GPU) where
 * the op tables' grid is not physical (docs/timing.md "MHA decode attention"). A decode step
 * reads every cached token's K and V once from HBM; AIConfigurator's MHA generation-attention
 * grids on H100, H200, A100 and L40S report some cells faster than that read can be (Llama-2-7B
 * on H100, batch 8 × 1,024 tokens: 134 MB per layer in 22 µs, 6 TB/s on a 3.35 TB/s part) and
 * jump to twice the HBM time between (batch 16 → 32 at 700 tokens: 70 → 215 µs), where the GQA
 * grids never break the bound. Such a grid is replaced by the line it follows where the cache is
 * large: its smallest cell as the fixed cost, plus the KV bytes at the bandwidth of its largest
 * cell. On the calibration runs (docs/fidelity.md "Calibration runs") the measured steps of
 * Llama-2-7B grow by that bandwidth with the batch (0.13 ms per sequence at 700 tokens), not by
 * the grid's (0.25 ms).
 */

import type { KvDtype } from "../hardware/dtypes.js";
import type { GpuSpec } from "../hardware/gpu.js";
import type { AttentionHeads, OpPerfTables } from "../hardware/perfTables.js";

export interface DecodeRoofline {
  /** A kernel's cost with (almost) nothing cached, ms. */
  readonly fixedMs: number;
  /** KV bytes read per ms at the bandwidth the grid reaches with a large cache. */
  readonly bytesPerMs: number;
  /** K and V bytes per cached token of one layer on one GPU. */
  readonly bytesPerToken: number;
}

const PROBE_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128];
const PROBE_LENGTHS = [128, 256, 512, 1024, 2048, 4096];

/**
 * The roofline that replaces an MHA grid breaking the HBM bound, or null when the grid holds
 * (GQA, or an MHA grid whose every probed cell reads no faster than HBM allows).
 */
export function mhaDecodeRoofline(
  tables: OpPerfTables,
  gpu: GpuSpec,
  heads: number,
  kvHeads: number,
  headDim: number,
  kvDtype: KvDtype,
): DecodeRoofline | null {
  if (kvHeads !== heads || heads <= 0) return null;
  const bytesPerToken = 2 * kvHeads * headDim * (kvDtype === "fp8" ? 1 : 2);
  const query: AttentionHeads = { numHeads: heads, numKvHeads: kvHeads, headDim, kvDtype };
  const at = (b: number, l: number) => tables.generationAttention(query, b, l);
  let broken = false;
  for (const b of PROBE_BATCHES)
    for (const l of PROBE_LENGTHS)
      if (at(b, l) < ((b * l * bytesPerToken) / gpu.memBandwidth) * 1000) broken = true;
  if (!broken) return null;
  const fixedMs = at(1, PROBE_LENGTHS[0]);
  const bMax = PROBE_BATCHES[PROBE_BATCHES.length - 1];
  const lMax = PROBE_LENGTHS[PROBE_LENGTHS.length - 1];
  const largest = at(bMax, lMax);
  if (!(largest > fixedMs)) return null;
  return { fixedMs, bytesPerMs: (bMax * lMax * bytesPerToken) / (largest - fixedMs), bytesPerToken };
}

/** One layer's decode attention for `batch` requests over `context` cached tokens each, ms. */
export function rooflineDecodeMs(r: DecodeRoofline, batch: number, context: number): number {
  return r.fixedMs + (batch * context * r.bytesPerToken) / r.bytesPerMs;
}
