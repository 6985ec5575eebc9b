/**
 * Engine-level queries over a forward-pass perf model (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py` current query semantics:
 * `aic_adapter.estimate_*` + `engine_query.get_*`). A live FPM is turned into a synthetic batch — the
 * queue (optionally scaled for consolidation), plus a typical next request, minus the prefix-cache
 * discount — and priced pass by pass with the model's `forwardPassS`.
 */

import type { ForwardPassMetrics } from "../types.js";
import type { QueryPerfModel } from "./index.js";

/** Prefix-cache discount never exceeds this: some prefill work always remains. */
export const MAX_KV_HIT_RATE_DISCOUNT = 0.95;

/** None / NaN / ±inf → 0; else clamp to [0, 0.95]. */
export function clampKvHitRate(h: number | null | undefined): number {
  if (h === null || h === undefined || !Number.isFinite(h)) return 0;
  return Math.min(MAX_KV_HIT_RATE_DISCOUNT, Math.max(0, h));
}

function ceilNonNegative(v: number): number {
  return v <= 0 ? 0 : Math.ceil(v);
}

/**
 * One query group per (worker, rank), sorted, unless the engine runs attention-DP > 1 and the caller
 * wants whole-worker groups (ranks step together, so a pass lasts as long as its slowest rank).
 */
export function queryGroups(
  fpms: readonly ForwardPassMetrics[],
  groupAttentionDp = false,
): ForwardPassMetrics[][] {
  const sorted = [...fpms].sort((a, b) => a.workerId - b.workerId || a.dpRank - b.dpRank);
  if (!groupAttentionDp) return sorted.map((f) => [f]);
  const byWorker = new Map<number, ForwardPassMetrics[]>();
  for (const f of sorted) {
    const g = byWorker.get(f.workerId);
    if (g === undefined) byWorker.set(f.workerId, [f]);
    else g.push(f);
  }
  return [...byWorker.values()];
}

export interface PrefillQuery {
  readonly maxNumBatchedTokens: number;
  readonly kvHitRate?: number | null;
  /** Multiplier on the queued prefill (0 = the next request alone; N/(N−1) = after consolidation). */
  readonly queueScale?: number;
  /** Multiplier on the decode load attached to agg passes. */
  readonly decodeScale?: number;
  /** Agg: attach queued decode to the scheduled decode load too. */
  readonly includeQueuedDecode?: boolean;
  readonly addNextRequest?: boolean;
}

export interface RankPrefill {
  readonly tokens: number;
  readonly requests: number;
  readonly decodeRequests: number;
  readonly decodeKv: number;
}

/** One rank's synthetic prefill batch for a query: its queue (scaled), the next request, the cache discount, its decode load. */
export function syntheticPrefill(
  model: QueryPerfModel,
  fpm: ForwardPassMetrics,
  q: PrefillQuery,
): RankPrefill {
  const queueScale = q.queueScale ?? 1;
  const decodeScale = q.decodeScale ?? 1;
  let tokens = fpm.sumQueuedPrefillTokens * queueScale;
  let requests = fpm.numQueuedPrefill * queueScale;
  if ((q.addNextRequest ?? true) && model.avgIsl > 0) {
    tokens += model.avgIsl;
    requests += 1;
  }
  // The discount applies to the whole backlog incl. the next request: it hits the cache like the rest.
  tokens *= 1 - clampKvHitRate(q.kvHitRate);
  let decodeKv = fpm.sumDecodeKvTokens;
  let decodeRequests = fpm.numDecodeRequests;
  if (q.includeQueuedDecode ?? false) {
    decodeKv += fpm.sumQueuedDecodeKvTokens;
    decodeRequests += fpm.numQueuedDecode;
  }
  const agg = model.workerType === "aggregated";
  return {
    tokens: ceilNonNegative(tokens),
    requests: ceilNonNegative(requests),
    decodeRequests: agg ? ceilNonNegative(decodeRequests * decodeScale) : 0,
    decodeKv: agg ? ceilNonNegative(decodeKv * decodeScale) : 0,
  };
}

/** A pass of a multi-rank group lasts as long as its slowest rank; null if any rank cannot be priced. */
function groupPassS(
  model: QueryPerfModel,
  ranks: readonly [number, number, number, number][],
): number | null {
  let worst = 0;
  for (const [pt, pr, dr, dk] of ranks) {
    const t = model.forwardPassS(pt, pr, dr, dk);
    if (t === null || !Number.isFinite(t)) return null;
    worst = Math.max(worst, t);
  }
  return worst;
}

/**
 * Seconds to drain a group's queued prefill (plus the next request) in MBT-sized chunks: each rank runs
 * `⌊tokens/MBT⌋` full chunks then its tail; passes are priced between rank breakpoints and repeated.
 * Null when the model cannot answer (decode-only model, not ready, MBT ≤ 0).
 *
 * Written over scratch arrays rather than per-rank objects, a set and a sort: the Planner asks this
 * several times a tick, and its optimized code (compiled anew by every run) was among the largest
 * TurboFan compilations of a replay (docs/performance.md "Where the CPU goes: the compiler"). The
 * arithmetic is the same, in the same order.
 */
export function estimateQueuedPrefillTimeS(
  model: QueryPerfModel,
  group: readonly ForwardPassMetrics[],
  q: PrefillQuery,
): number | null {
  if (model.workerType === "decode" || group.length === 0) return null;
  const mbt = q.maxNumBatchedTokens;
  if (!(mbt > 0)) return null;
  const n = group.length;
  const plan = prefillPlan(n);
  let work = false;
  for (let k = 0; k < n; k++) {
    const r = syntheticPrefill(model, group[k], q);
    const full = Math.floor(r.tokens / mbt);
    const tail = r.tokens % mbt;
    plan.full[k] = full;
    plan.tail[k] = tail;
    plan.requests[k] = r.requests;
    plan.decodeRequests[k] = r.decodeRequests;
    plan.decodeKv[k] = r.decodeKv;
    if (full !== 0 || tail !== 0) work = true;
  }
  if (!work) return 0;
  // The ranks' breakpoints (0, each full-chunk count, each count + 1 with a tail), ascending, once each.
  const points = plan.points;
  let count = 0;
  count = insertPoint(points, count, 0);
  for (let k = 0; k < n; k++) {
    if (plan.full[k] > 0) count = insertPoint(points, count, plan.full[k]);
    if (plan.tail[k] > 0) count = insertPoint(points, count, plan.full[k] + 1);
  }
  let total = 0;
  for (let i = 0; i + 1 < count; i++) {
    const start = points[i];
    // The group's pass lasts as long as its slowest rank; null if any rank cannot be priced.
    let worst = 0;
    for (let k = 0; k < n; k++) {
      const full = plan.full[k];
      const chunk = start < full ? mbt : start === full ? plan.tail[k] : 0;
      const t = model.forwardPassS(
        chunk,
        chunk === 0 ? 0 : Math.max(1, plan.requests[k]),
        plan.decodeRequests[k],
        plan.decodeKv[k],
      );
      if (t === null || !Number.isFinite(t)) return null;
      worst = Math.max(worst, t);
    }
    total += worst * (points[i + 1] - start);
  }
  return total;
}

/** Per rank of a group: its chunk plan and decode load; the breakpoints (`estimateQueuedPrefillTimeS`). */
interface PrefillPlan {
  full: Float64Array;
  tail: Float64Array;
  requests: Float64Array;
  decodeRequests: Float64Array;
  decodeKv: Float64Array;
  points: Float64Array;
}

let plans: PrefillPlan = planFor(4);

function planFor(ranks: number): PrefillPlan {
  return {
    full: new Float64Array(ranks),
    tail: new Float64Array(ranks),
    requests: new Float64Array(ranks),
    decodeRequests: new Float64Array(ranks),
    decodeKv: new Float64Array(ranks),
    points: new Float64Array(2 * ranks + 1),
  };
}

/** The scratch plan, grown for `ranks` ranks. */
function prefillPlan(ranks: number): PrefillPlan {
  if (plans.full.length < ranks) plans = planFor(Math.max(ranks, 2 * plans.full.length));
  return plans;
}

/** Inserts `v` into the ascending `points[0 .. count)` unless it is there; returns the new count. */
function insertPoint(points: Float64Array, count: number, v: number): number {
  let i = count;
  while (i > 0 && points[i - 1] > v) i--;
  if (i > 0 && points[i - 1] === v) return count;
  for (let j = count; j > i; j--) points[j] = points[j - 1];
  points[i] = v;
  return count + 1;
}

export interface DecodeQuery {
  /** Multiplier on the decode load (N/(N−1) after consolidation). */
  readonly decodeScale?: number;
  readonly includeQueuedDecode?: boolean;
  /** Agg consolidation: queued prompts become decode KV once admitted. */
  readonly includeQueuedPrefillAsKv?: boolean;
  readonly addNextRequest?: boolean;
}

/**
 * Seconds of the next decode pass of a group with its (scaled) decode load plus one typical new
 * request. Agg passes carry the learned typical prefill mix rather than this pass's own prefill, so the
 * ITL signal does not jump with every prompt chunk. Null for prefill-only models or when not ready.
 */
export function estimateScheduledDecodeItlS(
  model: QueryPerfModel,
  group: readonly ForwardPassMetrics[],
  q: DecodeQuery = {},
): number | null {
  if (model.workerType === "prefill" || group.length === 0) return null;
  const scale = q.decodeScale ?? 1;
  let prefillTokens = 0;
  let prefillRequests = 0;
  if (model.workerType === "aggregated") {
    prefillTokens = ceilNonNegative(model.avgPrefillTokens);
    prefillRequests = Math.max(ceilNonNegative(model.avgNumPrefill), prefillTokens > 0 ? 1 : 0);
  }
  const batch = group.map((f): [number, number, number, number] => {
    let kv = f.sumDecodeKvTokens;
    let requests = f.numDecodeRequests;
    if (q.includeQueuedDecode ?? true) {
      kv += f.sumQueuedDecodeKvTokens;
      requests += f.numQueuedDecode;
    }
    if (q.includeQueuedPrefillAsKv ?? false) {
      kv += f.sumQueuedPrefillTokens;
      requests += f.numQueuedPrefill;
    }
    kv *= scale;
    requests *= scale;
    if ((q.addNextRequest ?? true) && model.avgDecodeLength > 0) {
      kv += model.avgDecodeLength;
      requests += 1;
    }
    return [prefillTokens, prefillRequests, ceilNonNegative(requests), ceilNonNegative(kv)];
  });
  return groupPassS(model, batch);
}
