/**
 * Per-engine capacity search of the throughput loop (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py`, upstream
 * `engine_query.find_engine_capacity_rps`): sweep batch sizes, model each candidate's latency with the
 * forward-pass model, and keep the best sustainable request rate under the TTFT/ITL SLAs.
 */
import { clampKvHitRate } from "./perfModel/query.js";
import type { EngineCapabilities, EnginePerfModel } from "./types.js";

export type CapacityRole = "prefill" | "decode" | "agg";

export interface CapacityRequest {
  /** Predicted input length (tokens); rounded up, 0 ⇒ no answer. */
  readonly isl: number;
  /** Predicted output length (tokens); rounded up, at least 1. */
  readonly osl: number;
  /** TTFT SLA in seconds; null = no TTFT constraint. Checked for prefill and agg. */
  readonly ttftS: number | null;
  /** ITL SLA in seconds; null = no ITL constraint. Checked for decode and agg. */
  readonly itlS: number | null;
  /** Prefix-cache hit rate; discounts prefill work only. */
  readonly kvHitRate: number | null;
  /** Speculative-decoding accept length (tokens per forward pass); < 1 or non-finite ⇒ 1. */
  readonly acceptLength: number;
}

export interface EngineCapacity {
  readonly rps: number;
  /** Whether every applicable SLA is met at this batch size. */
  readonly eligible: boolean;
  readonly batch: number;
  readonly ttftS?: number;
  readonly itlS?: number;
  readonly e2eS?: number;
}

/** Upstream caps the sweep at 128 batch sizes. */
export const MAX_CAPACITY_SEARCH_CANDIDATES = 128;

/** Batch sizes searched: all of 1..max when max ≤ 128, else 128 evenly spread points from 1 to max. */
export function capacityBatchSizes(maxBatch: number): number[] {
  if (maxBatch <= 0) return [];
  if (maxBatch <= MAX_CAPACITY_SEARCH_CANDIDATES) return Array.from({ length: maxBatch }, (_, i) => i + 1);
  const span = maxBatch - 1;
  const denominator = MAX_CAPACITY_SEARCH_CANDIDATES - 1;
  return Array.from(
    { length: MAX_CAPACITY_SEARCH_CANDIDATES },
    (_, i) => 1 + Math.floor((i * span) / denominator),
  );
}

/**
 * Search the sustainable per-engine request rate. Eligible candidates beat ineligible ones, then the
 * higher rps wins (the first on ties). When nothing meets the SLA the best ineligible candidate is still
 * returned, so an unreachable SLA never inflates replicas by itself. null = model_not_ready: the model
 * could not answer, no candidate was possible, or the best rate is not positive.
 */
export function findEngineCapacityRps(
  role: CapacityRole,
  caps: EngineCapabilities,
  model: EnginePerfModel,
  req: CapacityRequest,
): EngineCapacity | null {
  const isl = Number.isFinite(req.isl) && req.isl > 0 ? Math.ceil(req.isl) : 0;
  const osl = Number.isFinite(req.osl) ? Math.max(1, Math.ceil(req.osl)) : 1;
  if (isl === 0) return null;
  const engine = new EngineTimer(model, caps);
  const shape: Shape = { isl, osl, req };
  const best =
    role === "prefill"
      ? prefillCapacity(engine, shape)
      : role === "decode"
        ? decodeCapacity(engine, shape)
        : aggCapacity(engine, shape);
  if (best === undefined || best === null || !(best.rps > 0)) return null;
  return best;
}

interface Shape {
  readonly isl: number;
  readonly osl: number;
  readonly req: CapacityRequest;
}

/** undefined: no candidate yet; null: the model could not answer (aborts the search). */
type Search = EngineCapacity | null | undefined;

function prefillCapacity(engine: EngineTimer, { isl, req }: Shape): Search {
  const islEff = effectivePrefillIsl(isl, req.kvHitRate);
  const mbt = engine.caps.maxNumBatchedTokens;
  if (mbt <= 0) return null;
  const maxBatch = islEff > mbt ? 1 : Math.min(engine.caps.maxNumSeqs, Math.floor(mbt / islEff));
  let best: Search;
  for (const b of capacityBatchSizes(maxBatch)) {
    const ttftS = engine.chunkedPrefillS(islEff * b, 0, 0);
    if (ttftS === null) return null;
    if (ttftS === 0) continue;
    const eligible = slaOk(ttftS, req.ttftS);
    best = select(best, { rps: b / ttftS, eligible, batch: b, ttftS, e2eS: ttftS });
  }
  return best;
}

function decodeCapacity(engine: EngineTimer, { isl, osl, req }: Shape): Search {
  const acc = normalizedAcceptLength(req.acceptLength);
  const ctx = decodeContextLength(isl, osl);
  let best: Search;
  for (const b of capacityBatchSizes(decodeMaxBatch(engine.caps, ctx))) {
    const forwardS = engine.forwardS(0, b, b * ctx);
    if (forwardS === null) return null;
    const itlS = forwardS / acc;
    if (itlS === 0) continue;
    const eligible = slaOk(itlS, req.itlS);
    best = select(best, { rps: b / (osl * itlS), eligible, batch: b, itlS });
  }
  return best;
}

/**
 * Aggregated engines interleave chunked prefill with decode: a batch of b decoding requests needs
 * `b·acc·isl/osl` prefill tokens per iteration to stay balanced, and only batch sizes whose prefill share
 * fits next to the b decode tokens in one MBT step are considered.
 */
function aggCapacity(engine: EngineTimer, { isl, osl, req }: Shape): Search {
  const mbt = engine.caps.maxNumBatchedTokens;
  if (mbt <= 1) return null;
  const islEff = effectivePrefillIsl(isl, req.kvHitRate);
  const acc = normalizedAcceptLength(req.acceptLength);
  const ctx = decodeContextLength(isl, osl);
  const hardCap = Math.min(decodeMaxBatch(engine.caps, ctx), Math.max(1, mbt - 1));
  let best: Search;
  for (const b of capacityBatchSizes(hardCap)) {
    const perIteration = ceilNonNegative((b * acc * islEff) / Math.max(1, osl));
    const prefillBudget = Math.max(0, mbt - b);
    if (prefillBudget === 0 || perIteration > prefillBudget) continue;
    const decodeKv = b * ctx;
    const ppi = Math.min(mbt, perIteration);
    const forwardS = engine.forwardS(ppi, b, decodeKv);
    if (forwardS === null) return null;
    const itlS = forwardS / acc;
    if (itlS === 0) continue;
    // A new request waits behind one iteration's prefill share, then prefills its own prompt.
    const ttftS = engine.chunkedPrefillS(ppi + islEff, b, decodeKv);
    if (ttftS === null) return null;
    const e2eS = ttftS + itlS * Math.max(0, osl - 1);
    const eligible = slaOk(ttftS, req.ttftS) && slaOk(itlS, req.itlS);
    best = select(best, { rps: b / (osl * itlS), eligible, batch: b, ttftS, itlS, e2eS });
  }
  return best;
}

/**
 * Forward-pass timing of one engine. With attention data parallelism the work is split evenly over the
 * ranks (the first `total mod ranks` ranks take one extra unit) and the ranks step in lockstep, so an
 * iteration lasts as long as its slowest rank. Negative model answers count as 0.
 */
class EngineTimer {
  constructor(
    private readonly model: EnginePerfModel,
    readonly caps: EngineCapabilities,
  ) {}

  forwardS(prefillTokens: number, decodeRequests: number, decodeKvTokens: number): number | null {
    const ranks = Math.max(1, Math.floor(this.caps.attentionData) || 1);
    let slowest = 0;
    const seen = new Set<string>();
    for (let rank = 0; rank < ranks; rank++) {
      const p = splitTotal(prefillTokens, ranks, rank);
      const r = splitTotal(decodeRequests, ranks, rank);
      const kv = splitTotal(decodeKvTokens, ranks, rank);
      const key = `${p}/${r}/${kv}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // A chunk of a batched prefill is presented as one prefill request, as upstream's synthetic FPM does.
      const s = this.model.forwardPassS(p, p > 0 ? 1 : 0, r, kv);
      if (s === null || !Number.isFinite(s)) return null;
      slowest = Math.max(slowest, s);
    }
    return slowest;
  }

  /** Time to prefill `tokens` in MBT-sized chunks (full chunks share one estimate, plus the tail). */
  chunkedPrefillS(tokens: number, decodeRequests: number, decodeKvTokens: number): number | null {
    const mbt = this.caps.maxNumBatchedTokens;
    const fullChunks = Math.floor(tokens / mbt);
    const tail = tokens % mbt;
    let total = 0;
    if (fullChunks > 0) {
      const s = this.forwardS(mbt, decodeRequests, decodeKvTokens);
      if (s === null) return null;
      total += s * fullChunks;
    }
    if (tail > 0) {
      const s = this.forwardS(tail, decodeRequests, decodeKvTokens);
      if (s === null) return null;
      total += s;
    }
    return total;
  }
}

function splitTotal(total: number, ranks: number, rank: number): number {
  const base = Math.floor(total / ranks);
  return base + (rank < total % ranks ? 1 : 0);
}

function select(current: Search, candidate: EngineCapacity): EngineCapacity {
  if (current === undefined || current === null) return candidate;
  if (current.eligible !== candidate.eligible) return candidate.eligible ? candidate : current;
  return candidate.rps > current.rps ? candidate : current;
}

function slaOk(valueS: number, slaS: number | null): boolean {
  return slaS === null || valueS <= slaS;
}

function effectivePrefillIsl(isl: number, kvHitRate: number | null): number {
  return Math.max(1, ceilNonNegative(isl * (1 - clampKvHitRate(kvHitRate))));
}

function decodeContextLength(isl: number, osl: number): number {
  return Math.max(1, isl + Math.floor(osl / 2));
}

function decodeMaxBatch(caps: EngineCapabilities, ctx: number): number {
  return Math.max(0, Math.min(caps.maxNumSeqs, Math.floor(caps.maxKvTokens / ctx)));
}

function normalizedAcceptLength(value: number): number {
  return Number.isFinite(value) && value > 1 ? value : 1;
}

function ceilNonNegative(value: number): number {
  return value <= 0 ? 0 : Math.ceil(value);
}
