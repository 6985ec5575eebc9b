/**
 * Default price of one GPU-hour per GPU system (a fleetsim extension; docs/cost.md): round
 * on-demand rental figures of public GPU clouds in 2026, per GPU, for the whole GPU (host share
 * included as those clouds bill it). They are assumptions to compare deployments with, not quotes:
 * override them with `cost.usd_per_gpu_hour` in the config (or `--set`).
 */
export const DEFAULT_USD_PER_GPU_HOUR: Readonly<Record<string, number>> = {
  a100_sxm: 1.8,
  a100_sxm_40gb: 1.3,
  h100_sxm: 2.7,
  h200_sxm: 3.6,
  b200_sxm: 5.5,
  l40s: 1.0,
  // Estimated systems (variants.ts): the same kind of figure, where such clouds list them.
  h20_3e: 1.5,
  gb200: 6.5,
  mi300x: 2.0,
};
