/**
 * Synthetic workload (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py` `source.type: synthetic`, lowered by `ai-dynamo/aisimulate@791ea8e:python/aisimulate/src/aisimulate/compiler.py`): fixed
 * ISL/OSL (or per-request lengths sampled by `lengthDistribution.ts`, a fleetsim extension), every
 * request its own single-turn session, prompts unique per request (no prefix sharing).
 */
import { Prng } from "../../util/prng.js";
import { fullBlockCount } from "../blockHashes.js";
import type { LazyTableHashes, RequestTable } from "../requests.js";

export type SyntheticArrivals =
  /** Closed loop: arrival is stamped at dispatch by the driver, so timestamps are NaN. */
  | { readonly type: "concurrency" }
  /** Open loop: t0 = 0, exponential gaps with mean 1000/rate ms from a seeded PRNG. */
  | { readonly type: "poisson"; readonly requestsPerSecond: number; readonly seed: number }
  /** Open loop: t_i = i · 1000/rate ms. */
  | { readonly type: "constant_rate"; readonly requestsPerSecond: number };

export interface SyntheticOptions {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly requests: number;
  readonly engineBlockSize: number;
  readonly arrivals: SyntheticArrivals;
  /** Per-request prompt lengths (each ≥ 1), replacing `inputTokens` (docs/traffic.md §Lengths). */
  readonly inputLengths?: Int32Array;
  /** Per-request output lengths (each ≥ 0), replacing `outputTokens`. */
  readonly outputLengths?: Int32Array;
  /** Arrival times replacing `arrivals` (staged loads: stagedArrivals.ts); length `requests`. */
  readonly timestampMs?: Float64Array;
}

/**
 * Materializes the synthetic requests. Every full prompt block of the workload has its own hash (a
 * counter from 1), so no two requests share a block hash; output blocks chain their 53-bit hashes on
 * them (up to the 2^-53-scale collision odds documented in blockHashes.ts).
 * Request ids are `synthetic-<i>`; sessions have no authored id.
 */
export function makeSyntheticTable(opts: SyntheticOptions): RequestTable {
  const { inputTokens, outputTokens, requests: count, engineBlockSize: E, arrivals } = opts;
  if (!(Number.isInteger(inputTokens) && inputTokens >= 1 && inputTokens <= 0x7fffffff)) {
    throw new RangeError(`inputTokens must be a positive integer, got ${inputTokens}`);
  }
  if (!(Number.isInteger(outputTokens) && outputTokens >= 0 && outputTokens <= 0x7fffffff)) {
    throw new RangeError(`outputTokens must be a non-negative integer, got ${outputTokens}`);
  }
  if (!(Number.isInteger(count) && count >= 0))
    throw new RangeError(`requests must be a non-negative integer, got ${count}`);
  if (!(Number.isInteger(E) && E > 0))
    throw new RangeError(`engineBlockSize must be a positive integer, got ${E}`);

  const timestampMs = opts.timestampMs ?? arrivalTimes(count, arrivals);
  if (timestampMs.length !== count) throw new RangeError("timestampMs must have one entry per request");
  const inputLength = opts.inputLengths ?? new Int32Array(count).fill(inputTokens);
  const outputLength = opts.outputLengths ?? new Int32Array(count).fill(outputTokens);
  if (inputLength.length !== count || outputLength.length !== count) {
    throw new RangeError("inputLengths and outputLengths must have one entry per request");
  }

  // Every prompt block is unique by construction (no two requests share one), so its hash needs no
  // chained hashing of ids: block k of the workload (counting full blocks request by request) gets
  // hash k + 1. Distinct ids ⇔ distinct hashes is all the prefix cache and the KV router use, and
  // a run is the same as with the chained hashes of counter ids (only hash values differ; none is
  // shared either way). Output blocks chain their own 53-bit hashes on these (engine/outputHashes.ts).
  const offsets = new Int32Array(count + 1);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const len = inputLength[i];
    if (!(len >= 1)) throw new RangeError(`request ${i}: input length must be ≥ 1, got ${len}`);
    if (!(outputLength[i] >= 0)) throw new RangeError(`request ${i}: output length must be ≥ 0`);
    offsets[i] = total;
    total += fullBlockCount(len, E);
    if (total > 0x7fffffff) throw new RangeError(`too many engine blocks (${total})`);
  }
  offsets[count] = total;
  // Written row by row when a use needs them (`CounterHashes`): zeroed memory the OS maps only
  // where it is written, so a run that reads none (every block owner-only) costs no pass over
  // the workload's blocks (docs/performance.md, "Synthetic prompt hashes written on demand").
  const hashes = new Float64Array(total);
  const table = singleTurnTable(count, timestampMs, inputLength, outputLength, offsets, hashes, E);
  // No block is shared: every prompt is owner-only from its first block (engine/kvBlockPool.ts).
  return { ...table, ownerOnlyFrom: new Int32Array(count), lazyHashes: new CounterHashes(offsets, hashes) };
}

/**
 * The synthetic table's hashes, written on demand: block k of row r is hash `offsets[r] + k + 1`
 * (the workload's full blocks counted request by request, from 1). Never 0, so a row's first
 * hash in the table's array says whether the row is written.
 */
class CounterHashes implements LazyTableHashes {
  constructor(
    private readonly offsets: Int32Array,
    private readonly hashes: Float64Array,
  ) {}

  hashedCount(row: number): number {
    const first = this.offsets[row];
    const n = this.offsets[row + 1] - first;
    return n > 0 && this.hashes[first] !== 0 ? n : 0;
  }

  completePromptHashes(row: number, out: Float64Array, outStart: number): void {
    const first = this.offsets[row];
    const n = this.offsets[row + 1] - first;
    for (let k = 0; k < n; k++) out[outStart + k] = first + k + 1;
  }
}

/**
 * A table of `count` single-turn requests, each its own session, ids `synthetic-<i>`: the shape
 * every single-turn synthetic source shares (plain and shared-prefix).
 */
export function singleTurnTable(
  count: number,
  timestampMs: Float64Array,
  inputLength: Int32Array,
  outputLength: Int32Array,
  blockOffsets: RequestTable["blockOffsets"],
  blockHashes: RequestTable["blockHashes"],
  engineBlockSize: number,
): RequestTable {
  const index = new Int32Array(count);
  for (let i = 0; i < count; i++) index[i] = i;
  return {
    count,
    timestampMs,
    inputLength,
    outputLength,
    session: index,
    turn: new Int32Array(count),
    delayAfterPreviousMs: new Float64Array(count),
    blockOffsets,
    blockHashes,
    engineBlockSize,
    requestIds: { prefix: "synthetic-" },
    sessionIds: new Array<string | null>(count).fill(null),
    sessionCount: count,
    sessionFirstRow: index.slice(),
    nextTurnRow: new Int32Array(count).fill(-1),
  };
}

/** Arrival times in ms for `count` requests (NaN for concurrency). */
export function arrivalTimes(count: number, arrivals: SyntheticArrivals): Float64Array {
  const out = new Float64Array(count);
  switch (arrivals.type) {
    case "concurrency":
      out.fill(Number.NaN);
      return out;
    case "constant_rate": {
      const rate = checkRate(arrivals.requestsPerSecond);
      for (let i = 0; i < count; i++) out[i] = (i * 1000) / rate;
      return out;
    }
    case "poisson": {
      const rate = checkRate(arrivals.requestsPerSecond);
      const rng = new Prng(arrivals.seed);
      let t = 0;
      for (let i = 0; i < count; i++) {
        if (i > 0) t += (-Math.log(1 - rng.nextFloat()) / rate) * 1000;
        out[i] = t;
      }
      return out;
    }
  }
}

function checkRate(rate: number): number {
  if (!(Number.isFinite(rate) && rate > 0))
    throw new RangeError(`requestsPerSecond must be finite and > 0, got ${rate}`);
  return rate;
}
