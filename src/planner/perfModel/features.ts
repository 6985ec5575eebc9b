/**
 * The two features the reference's Planner regression learns a forward pass on (the AIS core's
 * FPM regression in aisimulate 0.13.0, `estimation_mode: fpm_regression`; its definition:
 * `ai-dynamo/aisimulate@070638b:docs/fpm-recursive-regression.md` "What one store learns" and the
 * feature reference it links, `python/aisimulate/docs/fpm/aic-fpm-regression-design.md`
 * "Reference: symbols and features"):
 *
 * - x0, **attention work**: KV tokens read plus, for prompts, the attention pairs a chunk computes.
 *   A prefill of P fresh tokens over H cached ones in N requests computes
 *   Q = H·P/N + P²/(2N) + P/2 pairs (each request taken as the batch's average);
 * - x1, **token-wise FFN/MoE work**: fresh prefill tokens and decode requests.
 *
 * | role       | x0                  | x1     |
 * |------------|---------------------|--------|
 * | prefill    | α·H̃ + β·Q           | γ·P    |
 * | decode     | α·K                 | γ·B    |
 * | aggregated | α·(H̃ + K) + β·Q     | γ·(P+B)|
 *
 * with H̃ = H when P > 0 (cached prefix without fresh tokens computes nothing), K the decode
 * requests' KV tokens, B their count. The weights α, β, γ are 1 in the reference's Planner (its
 * `estimator_config.features` defaults); they are kept as named constants so the formula reads
 * as its definition.
 */

import type { WorkerRole } from "../../util/workerRole.js";

/** `attention_kv_weight` (α), `prefill_attention_pair_weight` (β), `ffn_token_weight` (γ). */
export const ATTENTION_KV_WEIGHT = 1;
export const PREFILL_ATTENTION_PAIR_WEIGHT = 1;
export const FFN_TOKEN_WEIGHT = 1;

/** One pass's scheduled work, as its FPM counts it. */
export interface PassWork {
  /** P: fresh prompt tokens computed. */
  readonly prefillTokens: number;
  /** N: prompts in the pass. */
  readonly prefillRequests: number;
  /** H: prompt tokens already in the KV cache (prefix hits and earlier chunks). */
  readonly prefillKvTokens: number;
  /** B: decoding requests. */
  readonly decodeRequests: number;
  /** K: their KV tokens. */
  readonly decodeKvTokens: number;
}

/**
 * The reference's workload stores: a prefill or decode worker has one, an aggregated worker one per
 * kind of pass (`cross_rank_aggregated` is the kind of an attention-DP iteration whose ranks split
 * prefill and decode; the reference's Planner replay tunes and queries one rank at a time, so a
 * pass here is never of that kind).
 */
export type WorkloadKind =
  | "pure_decode"
  | "contains_locally_mixed"
  | "cross_rank_aggregated"
  | "pure_prefill";

/** The aggregated model's stores, in the reference's order (`regression_store_diagnostics`). */
export const AGGREGATED_KINDS: readonly WorkloadKind[] = [
  "pure_decode",
  "contains_locally_mixed",
  "cross_rank_aggregated",
  "pure_prefill",
];

/** Q: the attention pairs a prefill computes, each of its N prompts taken at the average lengths. */
export function prefillAttentionPairs(
  prefillTokens: number,
  prefillKvTokens: number,
  prefillRequests: number,
): number {
  if (!(prefillTokens > 0)) return 0;
  const n = prefillRequests > 0 ? prefillRequests : 1;
  return (
    (prefillKvTokens * prefillTokens) / n + (prefillTokens * prefillTokens) / (2 * n) + prefillTokens / 2
  );
}

/** The kind of a pass: null when it schedules nothing (priced 0, never learned from). */
export function workloadKind(w: PassWork): WorkloadKind | null {
  const prefill = w.prefillTokens > 0;
  const decode = w.decodeRequests > 0;
  if (prefill) return decode ? "contains_locally_mixed" : "pure_prefill";
  return decode ? "pure_decode" : null;
}

/** Writes the pass's features for a worker of `role` into `out` ([x0, x1]). */
export function passFeatures(role: WorkerRole, w: PassWork, out: Float64Array): void {
  if (role === "decode") {
    out[0] = ATTENTION_KV_WEIGHT * w.decodeKvTokens;
    out[1] = FFN_TOKEN_WEIGHT * w.decodeRequests;
    return;
  }
  const cached = w.prefillTokens > 0 ? w.prefillKvTokens : 0;
  const pairs = prefillAttentionPairs(w.prefillTokens, w.prefillKvTokens, w.prefillRequests);
  if (role === "prefill") {
    out[0] = ATTENTION_KV_WEIGHT * cached + PREFILL_ATTENTION_PAIR_WEIGHT * pairs;
    out[1] = FFN_TOKEN_WEIGHT * w.prefillTokens;
  } else {
    out[0] = ATTENTION_KV_WEIGHT * (cached + w.decodeKvTokens) + PREFILL_ATTENTION_PAIR_WEIGHT * pairs;
    out[1] = FFN_TOKEN_WEIGHT * (w.prefillTokens + w.decodeRequests);
  }
}
