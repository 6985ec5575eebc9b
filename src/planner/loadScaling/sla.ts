/**
 * SLA target (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`): per-engine TTFT / ITL estimates from the perf model against the SLA.
 * Scale up only when ALL engines are over it (strict >): one slow engine is a routing problem, not a
 * capacity one. Scale down only when every engine would still meet a sensitivity-scaled SLA after
 * absorbing its share of the removed worker's load (consolidation factor c = N/(N−1)); checking the
 * current latency instead made 2→1 oscillate, the survivor immediately violating the SLA.
 */

import type { QueryPerfModel } from "../perfModel/index.js";
import {
  type DecodeQuery,
  estimateQueuedPrefillTimeS,
  estimateScheduledDecodeItlS,
  type PrefillQuery,
  queryGroups,
} from "../perfModel/query.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../types.js";
import type { LoadReason, RoleDecision } from "./types.js";

export interface SlaContext {
  readonly settings: PlannerSettings;
  /** Ready workers of the role. */
  readonly n: number;
  readonly minEndpoint: number;
  readonly kvHitRate: number | null;
  /** Already clamped to [1, nextn+1]. */
  readonly acceptLength: number;
  readonly groupAttentionDp: boolean;
}

interface Scan {
  readonly estimates: number[];
  canScaleDown: boolean;
  refused: boolean;
}

/** What one group says of a scale-down: still possible, unknown (no estimate), or refused by the SLA. */
type Veto = "ok" | "unknown" | "refused";

/**
 * Walks the forward-pass groups: each group's estimate (ms, null: none) joins the scan, and until a group
 * rules a scale-down out, `veto` judges it with the survivor's share of the removed worker's load.
 */
function scanGroups(
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
  estimateMs: (group: readonly ForwardPassMetrics[]) => number | null,
  veto: (group: readonly ForwardPassMetrics[]) => Veto,
): Scan {
  const scan: Scan = { estimates: [], canScaleDown: ctx.n > 1, refused: false };
  for (const group of queryGroups(fpms, ctx.groupAttentionDp)) {
    const est = estimateMs(group);
    if (est !== null) scan.estimates.push(est);
    if (!scan.canScaleDown) continue;
    const v = veto(group);
    if (v === "ok") continue;
    scan.canScaleDown = false;
    if (v === "refused") scan.refused = true;
  }
  return scan;
}

/** `scanGroups` over the queued-prefill TTFT estimate (ms) of `mbt` batched tokens per pass. */
function prefillScan(
  model: QueryPerfModel,
  mbt: number,
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
  veto: (group: readonly ForwardPassMetrics[], base: PrefillQuery) => Veto,
): Scan {
  const base: PrefillQuery = { maxNumBatchedTokens: mbt, kvHitRate: ctx.kvHitRate };
  const estimateMs = (group: readonly ForwardPassMetrics[]): number | null => {
    const est = estimateQueuedPrefillTimeS(model, group, base);
    return est === null ? null : est * 1000;
  };
  return scanGroups(fpms, ctx, estimateMs, (group) => veto(group, base));
}

function sensitivity(ctx: SlaContext): number {
  return ctx.settings.loadScalingDownSensitivity / 100;
}

function consolidation(n: number): number {
  return n > 1 ? n / (n - 1) : 1;
}

function maxOf(values: readonly number[]): number | null {
  return values.length === 0 ? null : Math.max(...values);
}

function maxField(group: readonly ForwardPassMetrics[], pick: (f: ForwardPassMetrics) => number): number {
  return Math.max(...group.map(pick));
}

/**
 * Shared `_scale_decision`: no estimates → insufficient_data; all > SLA → N+1; vetted scale-down → N−1
 * (not below the role minimum); else no_change. A consolidation veto names the reason of any null
 * outcome (the KV-cache check can veto even when the model gave no estimate).
 */
function scaleDecision(scan: Scan, slaMs: number, ctx: SlaContext): RoleDecision {
  const estimateMs = maxOf(scan.estimates);
  let desired: number | null = null;
  let reason: LoadReason = "no_change";
  if (scan.estimates.length === 0) reason = "insufficient_data";
  else if (scan.estimates.every((t) => t > slaMs)) desired = ctx.n + 1;
  else if (ctx.n > 1 && scan.canScaleDown) desired = Math.max(ctx.n - 1, ctx.minEndpoint);
  if (desired !== null) return { desired, reason: null, estimateMs };
  return { desired, reason: scan.refused ? "scale_down_refused_consolidation" : reason, estimateMs };
}

/**
 * A disaggregated role's SLA decision: from its perf model (null or short of data: no decision), its
 * engine's limits, the recent forward passes and the scaling context.
 */
type DisaggSlaDecision = (
  model: QueryPerfModel | null,
  caps: EngineCapabilities | null,
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
) => RoleDecision;

function unavailable(): RoleDecision {
  return { desired: null, reason: "insufficient_data", estimateMs: null };
}

/**
 * Disagg prefill: TTFT = time to drain the queue plus the next request. The next request's own compute
 * (`t_own`, queue scaled by 0) does not shrink with more workers, so sensitivity applies only to the
 * queue-side budget `(SLA − t_own)·sens`.
 */
export const prefillSlaDecision: DisaggSlaDecision = (model, caps, fpms, ctx) => {
  if (model === null || !model.hasSufficientData() || ctx.n === 0) return unavailable();
  const mbt = caps?.maxNumBatchedTokens ?? 0;
  if (!(mbt > 0)) return unavailable();
  const ttft = ctx.settings.ttftMs;
  const sens = sensitivity(ctx);
  const c = consolidation(ctx.n);
  const scan = prefillScan(model, mbt, fpms, ctx, (group, base) => {
    const own = estimateQueuedPrefillTimeS(model, group, { ...base, queueScale: 0 });
    if (own === null) return "unknown";
    const ownMs = own * 1000;
    const budgetMs = (ttft - ownMs) * sens;
    // The next request alone already breaks the SLA: losing a worker can only make it worse.
    if (budgetMs <= 0) return "refused";
    const post = estimateQueuedPrefillTimeS(model, group, { ...base, queueScale: c });
    if (post === null) return "unknown";
    return post * 1000 - ownMs >= budgetMs ? "refused" : "ok";
  });
  return scaleDecision(scan, ttft, ctx);
};

/**
 * Disagg decode: ITL of the next pass incl. queued decode and one new request, over the accept length.
 * Scale-down must keep the survivor's KV within the cache (past it the engine queues / evicts, a regime
 * the regression cannot model) and its ITL under `SLA·sens`.
 */
export const decodeSlaDecision: DisaggSlaDecision = (model, caps, fpms, ctx) => {
  if (model === null || !model.hasSufficientData() || ctx.n === 0) return unavailable();
  return decodeScan(model, caps?.maxKvTokens ?? 0, fpms, ctx, false);
};

/** Agg prefill (TTFT with decode riding along); a vetoed scale-down returns N so decode cannot force it. */
export function aggPrefillSlaDecision(
  model: QueryPerfModel,
  mbt: number,
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
): RoleDecision {
  const ttft = ctx.settings.ttftMs;
  const sens = sensitivity(ctx);
  const c = consolidation(ctx.n);
  const scan = prefillScan(model, mbt, fpms, ctx, (group, base) => {
    // After consolidation the survivor inherits scheduled and queued decode of the removed worker too.
    const post = { ...base, decodeScale: c, includeQueuedDecode: true };
    const own = estimateQueuedPrefillTimeS(model, group, { ...post, queueScale: 0 });
    const after = estimateQueuedPrefillTimeS(model, group, { ...post, queueScale: c });
    if (own === null || after === null) return "unknown";
    const budgetMs = (ttft - own * 1000) * sens;
    return budgetMs <= 0 || after * 1000 - own * 1000 >= budgetMs ? "refused" : "ok";
  });
  return vetoKeepsCurrent(scaleDecision(scan, ttft, ctx), ctx.n);
}

/** Agg decode: like decode, with queued prompts counted as future KV in the consolidation checks. */
export function aggDecodeSlaDecision(
  model: QueryPerfModel,
  caps: EngineCapabilities | null,
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
): RoleDecision {
  return vetoKeepsCurrent(decodeScan(model, caps?.maxKvTokens ?? 0, fpms, ctx, true), ctx.n);
}

function vetoKeepsCurrent(d: RoleDecision, n: number): RoleDecision {
  return d.desired === null && d.reason === "scale_down_refused_consolidation" ? { ...d, desired: n } : d;
}

function decodeScan(
  model: QueryPerfModel,
  maxKv: number,
  fpms: readonly ForwardPassMetrics[],
  ctx: SlaContext,
  agg: boolean,
): RoleDecision {
  const itl = ctx.settings.itlMs;
  const sens = sensitivity(ctx);
  const c = consolidation(ctx.n);
  const acc = ctx.acceptLength;
  const itlMs = (group: readonly ForwardPassMetrics[], opts: DecodeQuery): number | null => {
    const est = estimateScheduledDecodeItlS(model, group, opts);
    return est === null ? null : (est * 1000) / acc;
  };
  const scan = scanGroups(
    fpms,
    ctx,
    (group) => itlMs(group, { includeQueuedDecode: true }),
    (group) => {
      const kv =
        maxField(group, (f) => f.sumDecodeKvTokens) +
        maxField(group, (f) => f.sumQueuedDecodeKvTokens) +
        (agg ? maxField(group, (f) => f.sumQueuedPrefillTokens) : 0);
      if (maxKv > 0 && Math.trunc(kv * c) >= maxKv) return "refused";
      const after = itlMs(group, {
        decodeScale: c,
        includeQueuedDecode: true,
        includeQueuedPrefillAsKv: agg,
      });
      if (after === null) return "unknown";
      return after >= itl * sens ? "refused" : "ok";
    },
  );
  return scaleDecision(scan, itl, ctx);
}
