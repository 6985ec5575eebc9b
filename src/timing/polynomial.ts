import { AdditiveTiming } from "./timingModel.js";

/**
 * The historical Dynamo-mocker closed form (`ai-dynamo/aisimulate@a71c2e8:crates/core/src/engine/timing.rs`, `ai-dynamo/aisimulate@4c80077:crates/core/src/engine/common/perf_model.rs`). Only new
 * (uncached, not yet computed) tokens enter prefill; decode depends only on KV utilization.
 */
export class PolynomialTiming extends AdditiveTiming {
  prefillMs(batchCount: number, meanIsl: number, meanPrefix: number): number {
    if (batchCount <= 0) return 0;
    const perRequestNew = meanIsl > meanPrefix ? meanIsl - meanPrefix : 0;
    if (perRequestNew === 0) return 0;
    const t = batchCount * perRequestNew;
    return 4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142;
  }

  decodeMs(batch: number, activeKvTokens: number, _meanContext: number, totalKvTokens: number): number {
    if (batch <= 0) return 0;
    const u = totalKvTokens > 0 ? Math.min(1, activeKvTokens / totalKvTokens) : 1;
    // Floor of 1 ms: token-emitting decode steps must not collapse onto one timestamp.
    return Math.max(1.0, -25.74 * u * u + 54.01 * u + 5.74);
  }
}
