/**
 * Synthetic benchmark FPMs that bootstrap the SLA perf model before live traffic (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`,
 * `replay/planner.py` `_generate_ais_{prefill,decode}_fpms`). Upstream prices the grid with an AIS session;
 * fleetsim prices it with its own timing model so the planner starts from the engine it simulates.
 */

import type { TimingModel } from "../../timing/timingModel.js";
import { sha256 } from "../../util/sha256.js";
import { type EngineCapabilities, type ForwardPassMetrics, forwardPassMetrics } from "../types.js";

export type BootstrapTiming = Pick<TimingModel, "prefillMs" | "decodeMs">;

export const DEFAULT_BENCHMARK_GRANULARITY = 8;

/** Engine limits the grid spans; null or ≤ 0 falls back to upstream's defaults. */
export interface BootstrapLimits {
  /** Prefill grid top (default 8192). */
  readonly maxNumBatchedTokens: number | null;
  /** Decode batch-size grid top (default 256). */
  readonly maxNumSeqs: number | null;
  /** Per-rank KV capacity `num_gpu_blocks × block_size` (default 16384 × 16). */
  readonly kvCapacityTokens: number | null;
}

const DEFAULT_MBT = 8192;
const DEFAULT_MAX_SEQS = 256;
const DEFAULT_KV_CAPACITY = 16384 * 16;
const DECODE_CONTEXTS = [500, 2000, 4000, 8000] as const;

/** Upstream uses the engine's block pool without the attention-DP multiplier. */
export function bootstrapLimitsFromCaps(caps: EngineCapabilities): BootstrapLimits {
  const dp = Math.max(1, caps.attentionData);
  return {
    maxNumBatchedTokens: caps.maxNumBatchedTokens,
    maxNumSeqs: caps.maxNumSeqs,
    kvCapacityTokens: Math.floor(caps.maxKvTokens / dp),
  };
}

function positiveOr(v: number | null, fallback: number): number {
  return v !== null && v > 0 ? v : fallback;
}

function fpm(wallTimeS: number, fields: Partial<ForwardPassMetrics>): ForwardPassMetrics {
  return forwardPassMetrics(0, { wallTimeS, ...fields });
}

/**
 * Prefill: one request of `isl ∈ range(100, MBT+1, max(1, (MBT−100)//g))`, no cached prefix.
 * Decode: `ctx ∈ {500, 2000, 4000, 8000}` × `bs ∈ range(1, maxSeqs+1, max(1, maxSeqs//g))` while
 * `bs·ctx ≤ kvCapacity`. Points priced at ≤ 0 ms are dropped, as upstream does.
 */
export function bootstrapObservations(
  role: "prefill" | "decode",
  timing: BootstrapTiming,
  limits: BootstrapLimits,
  granularity = DEFAULT_BENCHMARK_GRANULARITY,
): ForwardPassMetrics[] {
  const g = Math.max(1, Math.floor(granularity));
  const out: ForwardPassMetrics[] = [];
  if (role === "prefill") {
    const top = positiveOr(limits.maxNumBatchedTokens, DEFAULT_MBT);
    const step = Math.max(1, Math.floor((top - 100) / g));
    for (let isl = 100; isl <= top; isl += step) {
      const ms = timing.prefillMs(1, isl, 0);
      if (ms > 0) out.push(fpm(ms / 1000, { numPrefillRequests: 1, sumPrefillTokens: isl }));
    }
    return out;
  }
  const kvCap = positiveOr(limits.kvCapacityTokens, DEFAULT_KV_CAPACITY);
  const bsMax = positiveOr(limits.maxNumSeqs, DEFAULT_MAX_SEQS);
  const step = Math.max(1, Math.floor(bsMax / g));
  for (const ctx of DECODE_CONTEXTS) {
    for (let bs = 1; bs <= bsMax; bs += step) {
      const kv = bs * ctx;
      if (kv > kvCap) break;
      const ms = timing.decodeMs(bs, kv, ctx, kvCap);
      if (ms > 0) out.push(fpm(ms / 1000, { numDecodeRequests: bs, sumDecodeKvTokens: kv }));
    }
  }
  return out;
}

/** JSON with object keys sorted at every level and no whitespace, so equal data hashes equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** `metadata.bootstrap.fpm_sha256`: sha256 hex of canonical `{"decode": [...], "prefill": [...]}`. */
export function bootstrapFpmSha256(
  prefill: readonly ForwardPassMetrics[],
  decode: readonly ForwardPassMetrics[],
): string {
  return sha256().update(canonicalJson({ prefill, decode })).digest("hex");
}
