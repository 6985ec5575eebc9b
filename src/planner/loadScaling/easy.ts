/**
 * Easy targets (`throughput`, `latency`, `load`; `ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`): static thresholds on queue / KV
 * pressure, no perf model. ANY engine over the up-threshold adds one replica (one hot engine already
 * hurts users); scale-down needs N > 1 and ALL engines under the down-threshold.
 */

import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../types.js";
import type { LoadReason, RoleDecision } from "./types.js";

/** Prefill: queued prompt tokens / context_length. */
const PREFILL_THRESHOLDS = {
  throughput: { up: 1.0, down: 0.1 },
  latency: { up: 0.1, down: 0.0 },
} as const;

/** Decode / agg: (scheduled + queued KV [+ queued prompts]) / max_kv_tokens. */
const DECODE_THRESHOLDS = {
  throughput: { up: 1.0, down: 0.6 },
  latency: { up: 0.4, down: 0.1 },
} as const;

function none(reason: LoadReason): RoleDecision {
  return { desired: null, reason, estimateMs: null };
}

function target(desired: number): RoleDecision {
  return { desired, reason: null, estimateMs: null };
}

/** Prefill role of a disaggregated deployment. */
export function prefillEasyDecision(
  s: PlannerSettings,
  caps: EngineCapabilities | null,
  fpms: readonly ForwardPassMetrics[],
  n: number,
  minEndpoint: number,
): RoleDecision {
  if (n === 0) return none("insufficient_data");
  let values: number[];
  let up: number;
  let down: number;
  let downInclusive: boolean;
  if (s.optimizationTarget === "load") {
    if (s.prefillScaleUpQueueTokens === null || s.prefillScaleDownQueueTokens === null) {
      return none("insufficient_data");
    }
    values = fpms.map((f) => f.sumQueuedPrefillTokens);
    up = s.prefillScaleUpQueueTokens;
    down = s.prefillScaleDownQueueTokens;
    downInclusive = true;
  } else {
    const ctx = caps?.contextLength ?? 0;
    if (!(ctx > 0)) return none("insufficient_data");
    const t = s.optimizationTarget === "latency" ? PREFILL_THRESHOLDS.latency : PREFILL_THRESHOLDS.throughput;
    values = fpms.map((f) => f.sumQueuedPrefillTokens / ctx);
    up = t.up;
    down = t.down;
    // Latency scales down only when every queue is empty (ratio ≤ 0); throughput when all are < 10 %.
    downInclusive = s.optimizationTarget === "latency";
  }
  if (values.length === 0) return none("insufficient_data");
  if (values.some((v) => v >= up)) return target(n + 1);
  if (n > 1 && values.every((v) => (downInclusive ? v <= down : v < down))) {
    return target(Math.max(n - 1, minEndpoint));
  }
  return none("no_change");
}

/**
 * Decode role (disagg) or the aggregated pool (`includeQueuedPrefill`: queued prompts become KV once
 * admitted, so they count as cache pressure too).
 */
export function decodeEasyDecision(
  s: PlannerSettings,
  caps: EngineCapabilities | null,
  fpms: readonly ForwardPassMetrics[],
  n: number,
  minEndpoint: number,
  includeQueuedPrefill: boolean,
): RoleDecision {
  const maxKv = caps?.maxKvTokens ?? 0;
  if (!(maxKv > 0)) return none("insufficient_data");
  if (n === 0) return none("insufficient_data");
  const isLoad = s.optimizationTarget === "load";
  let up: number;
  let down: number;
  if (isLoad) {
    if (s.decodeScaleUpKvRate === null || s.decodeScaleDownKvRate === null) return none("insufficient_data");
    up = s.decodeScaleUpKvRate / 100;
    down = s.decodeScaleDownKvRate / 100;
  } else {
    const t = s.optimizationTarget === "latency" ? DECODE_THRESHOLDS.latency : DECODE_THRESHOLDS.throughput;
    up = t.up;
    down = t.down;
  }
  const utils = fpms.map(
    (f) =>
      (f.sumDecodeKvTokens +
        f.sumQueuedDecodeKvTokens +
        (includeQueuedPrefill ? f.sumQueuedPrefillTokens : 0)) /
      maxKv,
  );
  if (utils.length === 0) return none("insufficient_data");
  // `load` thresholds are user-given and inclusive; the built-in ones are strict.
  if (utils.some((u) => (isLoad ? u >= up : u > up))) return target(n + 1);
  if (n > 1 && utils.every((u) => (isLoad ? u <= down : u < down)))
    return target(Math.max(n - 1, minEndpoint));
  return none("no_change");
}
