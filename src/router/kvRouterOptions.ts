/**
 * Options of the KV-aware router, their defaults (Dynamo `KvRouterConfig`, `ai-dynamo/dynamo@a4bdb9b:lib/kv-router/src/scheduling/selector/default.rs`) and
 * their validation. The per-pool presets of a disaggregated deployment are `kvRouterOptionsForRole`
 * in `placement.ts`.
 */

export type PrefillLoadModel = "none" | "aic";

export interface KvRouterOptions {
  /** Engine KV block size in tokens (the router hashes and counts in the engine's blocks). */
  blockSize: number;
  /** Weight of each cached leading block against the prefill term (`overlap_score_credit`). */
  overlapScoreCredit: number;
  /** Weight of the prefill term (`prefill_load_scale`). */
  prefillLoadScale: number;
  /** Softmax temperature over normalized costs; 0 = lowest cost with seeded tie-breaks. */
  temperature: number;
  /** Count live requests' blocks as decode load (`router_track_active_blocks`); false for a prefill pool. */
  trackActiveBlocks: boolean;
  /** Count prompt tokens of requests still prefilling (`router_track_prefill_tokens`); false for a decode pool. */
  trackPrefillTokens: boolean;
  /** Deduplicate a request's blocks against blocks already live on the worker (`router_assume_kv_reuse`). */
  assumeKvReuse: boolean;
  /** `aic`: active prefill tokens decay with each request's predicted prefill duration. */
  prefillLoadModel: PrefillLoadModel;
  /** Seeds tie-breaks and softmax sampling. */
  seed: number;
}

/** The router's default PRNG seed. */
export const KV_ROUTER_DEFAULT_SEED = 0xd1a05eed;

/** Options with only the block size given: everything else takes Dynamo's default. */
export type KvRouterInit = Pick<KvRouterOptions, "blockSize"> & Partial<KvRouterOptions>;

/**
 * Fills defaults and checks ranges; throws a RangeError naming the option.
 * Dynamo requires `track_prefill_tokens` for `prefill_load_model: aic` (config validation), and so do we.
 */
export function resolveKvRouterOptions(init: KvRouterInit): KvRouterOptions {
  const opts: KvRouterOptions = {
    overlapScoreCredit: 1,
    prefillLoadScale: 1,
    temperature: 0,
    trackActiveBlocks: true,
    trackPrefillTokens: true,
    assumeKvReuse: true,
    prefillLoadModel: "none",
    seed: KV_ROUTER_DEFAULT_SEED,
    ...init,
  };
  if (!Number.isInteger(opts.blockSize) || opts.blockSize < 1) {
    throw new RangeError(`kv router blockSize must be a positive integer, got ${opts.blockSize}`);
  }
  for (const key of ["overlapScoreCredit", "prefillLoadScale", "temperature"] as const) {
    const v = opts[key];
    if (!Number.isFinite(v) || v < 0)
      throw new RangeError(`kv router ${key} must be finite and ≥ 0, got ${v}`);
  }
  if (opts.prefillLoadModel !== "none" && opts.prefillLoadModel !== "aic") {
    throw new RangeError(
      `kv router prefillLoadModel must be "none" or "aic", got ${String(opts.prefillLoadModel)}`,
    );
  }
  if (opts.prefillLoadModel === "aic" && !opts.trackPrefillTokens) {
    throw new RangeError('kv router prefillLoadModel "aic" requires trackPrefillTokens');
  }
  if (!Number.isSafeInteger(opts.seed))
    throw new RangeError(`kv router seed must be a safe integer, got ${opts.seed}`);
  return opts;
}
