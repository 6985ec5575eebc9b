/**
 * What a run cost (a fleetsim extension; docs/cost.md): each role's provisioned GPU-seconds
 * (`*_worker_seconds × *_gpus_per_worker`, what `gpu_hours` sums) priced at its GPU system's
 * `cost.usd_per_gpu_hour`, then per million output tokens and per good request. Derived from the
 * summary and the spec after the run, so no other key changes.
 */
import type { RunSpec } from "../config/runSpec.js";
import { DEFAULT_USD_PER_GPU_HOUR } from "../hardware/prices.js";
import type { RunInfo } from "../output/run.js";
import type { CostKey, Summary } from "../output/summary.js";

/** The GPU system of the prefill and decode pools (an aggregated pool counts as decode, as in the summary). */
function poolHardware(spec: RunSpec): { prefill: string | null; decode: string } {
  const e = spec.engine;
  if (e.mode === "aggregated") return { prefill: null, decode: e.aggregated.hardware ?? e.hardware };
  return { prefill: e.prefill.hardware ?? e.hardware, decode: e.decode.hardware ?? e.hardware };
}

/** USD per GPU-hour of each GPU system the run provisions, or null when one has no price. */
export function runPrices(spec: RunSpec): Record<string, number> | null {
  const table = spec.cost?.usdPerGpuHour ?? DEFAULT_USD_PER_GPU_HOUR;
  const hw = poolHardware(spec);
  const out: Record<string, number> = {};
  for (const id of [hw.prefill, hw.decode]) {
    if (id === null) continue;
    const price = table[id];
    if (price === undefined) return null;
    out[id] = price;
  }
  return out;
}

export function costKeys(spec: RunSpec, s: Summary): Partial<Record<CostKey, number>> {
  const prices = runPrices(spec);
  if (prices === null) return {};
  const hw = poolHardware(spec);
  const prefill = hw.prefill === null ? 0 : prices[hw.prefill];
  const costUsd =
    (s.prefill_worker_seconds * s.prefill_gpus_per_worker * prefill +
      s.decode_worker_seconds * s.decode_gpus_per_worker * prices[hw.decode]) /
    3600;
  const good = s.goodput_completed_requests;
  return {
    cost_usd: costUsd,
    ...(s.total_output_tokens > 0
      ? { cost_per_million_output_tokens_usd: (costUsd / s.total_output_tokens) * 1e6 }
      : {}),
    ...(good !== undefined && good > 0 ? { cost_per_good_request_usd: costUsd / good } : {}),
  };
}

/** The `run.cost` block: the prices used. */
export function runCost(spec: RunSpec): Pick<RunInfo, "cost"> {
  const prices = runPrices(spec);
  return prices === null ? {} : { cost: { usd_per_gpu_hour: prices } };
}
