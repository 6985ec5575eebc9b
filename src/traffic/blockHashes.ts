/**
 * Engine-block hashes of a prompt described by trace `hash_ids` (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`), computed without
 * materializing tokens.
 *
 * The prompt is conceptually `[h repeated traceBlockSize times for h in hashIds]` truncated to
 * `inputLength`, re-chunked into engine blocks of `engineBlockSize` tokens. Only FULL engine blocks get a
 * hash; a trailing partial block has none (it is never shareable).
 *
 * - Local hash of a block: a hash over the canonical run-length encoding of its tokens, i.e. the list of
 *   `(token value, run length)` with equal adjacent runs merged. Identical token content therefore gives
 *   identical local hashes whatever hash_ids produced it, an engine block may span several hash_ids
 *   (engine block > trace block), and several engine blocks inside one hash_id share a local hash.
 * - Sequence hash: block 0 → `chainHash(SEQUENCE_HASH_SEED, local0)`, block i → `chainHash(seq(i-1), local_i)`.
 *   It identifies the whole prefix, so equal sequence hashes ⇔ equal prefixes (up to collisions).
 *
 * Values are integers in [0, 2^53), exact in a double: two independent 32-bit lanes (a murmur3-style lane
 * finished with fmix32 and an xxhash32-style lane finished with the xxh32 avalanche) give
 * `(laneB >>> 11) · 2^32 + laneA` (the primitives: util/blockHash.ts, shared with the engine's output
 * blocks). These are NOT bit-compatible with Dynamo's xxh3-64 hashes; only the
 * equality structure matters to the simulator.
 *
 * Collision odds: treating hashes as uniform 53-bit values, a trace with n distinct prefix blocks has a
 * false-sharing probability of about n²/2^54 (≈ 3·10⁻⁴ for the 2.3M engine blocks of the Mooncake
 * conversation trace at 512/64; ≈ 3·10⁻⁸ for 20k blocks). A local-hash collision only matters when it also
 * lands on the same parent, so it is within the same bound.
 */

import {
  absorbA,
  absorbB,
  finishA,
  finishB,
  LOCAL_SEED_A,
  LOCAL_SEED_B,
  SEQ_SEED_A,
  SEQ_SEED_B,
  SEQUENCE_HASH_SEED,
  TWO_POW_32,
} from "../util/blockHash.js";

/** Number of full engine blocks in a prompt of `inputLength` tokens. */
export function fullBlockCount(inputLength: number, engineBlockSize: number): number {
  return Math.floor(inputLength / engineBlockSize);
}

/**
 * Writes the sequence hashes of the full engine blocks of one prompt into `out[outStart ..]` and returns
 * how many were written (`fullBlockCount(inputLength, engineBlockSize)`).
 *
 * @param ids u32 token values of the trace blocks (already truncated to u32); the prompt uses
 *   `ids[idStart .. idStart + idCount)`.
 * @param inputLength prompt tokens; must be ≤ idCount · traceBlockSize.
 * @param localsOut optional: receives the local hash of each block at the same offsets (tests/debugging).
 */
export function computeBlockHashes(
  ids: Uint32Array,
  idStart: number,
  idCount: number,
  traceBlockSize: number,
  inputLength: number,
  engineBlockSize: number,
  out: Float64Array,
  outStart: number,
  localsOut?: Float64Array,
): number {
  return computeBlockHashPrefix(
    ids,
    idStart,
    idCount,
    traceBlockSize,
    inputLength,
    engineBlockSize,
    out,
    outStart,
    Number.POSITIVE_INFINITY,
    localsOut,
  );
}

/**
 * `computeBlockHashes` of the prompt's first `limit` full blocks only (all of them when it has
 * fewer); returns how many were written. Each block's hash depends on its prefix alone, so these
 * are the first hashes `computeBlockHashes` writes: a source hashes a prompt only as far as a
 * lookup can reach (traffic/mooncake/stream.ts "Lazy hashes").
 */
export function computeBlockHashPrefix(
  ids: Uint32Array,
  idStart: number,
  idCount: number,
  traceBlockSize: number,
  inputLength: number,
  engineBlockSize: number,
  out: Float64Array,
  outStart: number,
  limit: number,
  localsOut?: Float64Array,
): number {
  const T = traceBlockSize;
  const E = engineBlockSize;
  if (!(Number.isInteger(T) && T > 0 && Number.isInteger(E) && E > 0)) {
    throw new RangeError(`block sizes must be positive integers (trace ${T}, engine ${E})`);
  }
  if (inputLength > idCount * T) {
    throw new RangeError(`inputLength ${inputLength} exceeds ${idCount} hash ids × ${T} tokens`);
  }
  const full = fullBlockCount(inputLength, E);
  const n = Math.min(limit, full);
  // Parent sequence hash as words: lo = lane A (32 bits), hi = lane B >>> 11 (21 bits).
  let pLo = SEQUENCE_HASH_SEED;
  let pHi = 0;
  let j = idStart;
  let remInTrace = T; // tokens of ids[j] not yet consumed
  let cachedValue = -1; // single-run cache (u32 values are never -1)
  let cachedSA = 0;
  let cachedSB = 0;
  let cachedLocal = 0;
  let blk = 0;
  while (blk < n) {
    if (remInTrace >= E) {
      // Engine blocks lying wholly inside trace block j: single runs with one local hash, so only the
      // chain step varies. Consume as many as fit in a tight loop.
      const v = ids[j];
      if (v !== cachedValue) {
        cachedValue = v;
        const la = finishA(absorbA(absorbA(LOCAL_SEED_A, v), E), 2);
        const lh = finishB(absorbB(absorbB(LOCAL_SEED_B, v), E), 2) >>> 11;
        cachedSA = absorbA(absorbA(SEQ_SEED_A, la), lh);
        cachedSB = absorbB(absorbB(SEQ_SEED_B, la), lh);
        cachedLocal = lh * TWO_POW_32 + (la >>> 0);
      }
      const sA = cachedSA;
      const sB = cachedSB;
      let k = Math.floor(remInTrace / E);
      if (k > n - blk) k = n - blk;
      const end = blk + k;
      for (; blk < end; blk++) {
        const a = finishA(absorbA(absorbA(sA, pLo), pHi), 4);
        const b = finishB(absorbB(absorbB(sB, pLo), pHi), 4);
        pLo = a;
        pHi = b >>> 11;
        out[outStart + blk] = pHi * TWO_POW_32 + (pLo >>> 0);
        if (localsOut !== undefined) localsOut[outStart + blk] = cachedLocal;
      }
      remInTrace -= k * E;
      if (remInTrace === 0) {
        j++;
        remInTrace = T;
      }
    } else {
      // The block spans several trace blocks: canonical RLE, merging equal adjacent values.
      let a = LOCAL_SEED_A;
      let b = LOCAL_SEED_B;
      let words = 0;
      let runValue = ids[j];
      let runLength = 0;
      let need = E;
      while (need > 0) {
        const take = Math.min(remInTrace, need);
        const v = ids[j];
        if (v === runValue) {
          runLength += take;
        } else {
          a = absorbA(absorbA(a, runValue), runLength);
          b = absorbB(absorbB(b, runValue), runLength);
          words += 2;
          runValue = v;
          runLength = take;
        }
        need -= take;
        remInTrace -= take;
        if (remInTrace === 0) {
          j++;
          remInTrace = T;
        }
      }
      a = absorbA(absorbA(a, runValue), runLength);
      b = absorbB(absorbB(b, runValue), runLength);
      words += 2;
      const la = finishA(a, words);
      const lh = finishB(b, words) >>> 11;
      const sA = absorbA(absorbA(SEQ_SEED_A, la), lh);
      const sB = absorbB(absorbB(SEQ_SEED_B, la), lh);
      const ca = finishA(absorbA(absorbA(sA, pLo), pHi), 4);
      const cb = finishB(absorbB(absorbB(sB, pLo), pHi), 4);
      pLo = ca;
      pHi = cb >>> 11;
      out[outStart + blk] = pHi * TWO_POW_32 + (pLo >>> 0);
      if (localsOut !== undefined) localsOut[outStart + blk] = lh * TWO_POW_32 + (la >>> 0);
      blk++;
    }
  }
  return n;
}

/** Local and sequence hashes of one prompt (convenience wrapper; allocates). */
export interface PromptBlockHashes {
  readonly sequence: Float64Array;
  readonly local: Float64Array;
}

/**
 * Convenience wrapper over `computeBlockHashes` for one prompt given as plain hash ids (truncated to u32;
 * `inputLength` defaults to, and is clamped to, `hashIds.length · traceBlockSize`).
 */
export function promptBlockHashes(
  hashIds: ArrayLike<number>,
  traceBlockSize: number,
  engineBlockSize: number,
  inputLength?: number,
): PromptBlockHashes {
  const ids = new Uint32Array(hashIds.length);
  for (let i = 0; i < hashIds.length; i++) ids[i] = toU32(hashIds[i]);
  const capacity = ids.length * traceBlockSize;
  const len = inputLength === undefined ? capacity : Math.min(inputLength, capacity);
  const n = fullBlockCount(len, engineBlockSize);
  const sequence = new Float64Array(n);
  const local = new Float64Array(n);
  computeBlockHashes(ids, 0, ids.length, traceBlockSize, len, engineBlockSize, sequence, 0, local);
  return { sequence, local };
}

/** Truncates a non-negative integer (up to 2^53) to u32, like Rust's `as u32`. */
export function toU32(value: number): number {
  return value < TWO_POW_32 ? value >>> 0 : value % TWO_POW_32;
}

/** Block hashes of many prompts, packed: prompt i owns `hashes[offsets[i] .. offsets[i+1])`. */
export interface PackedBlockHashes {
  readonly offsets: Int32Array;
  readonly hashes: Float64Array;
}

/**
 * Where each of `count` prompts' full-block hashes start in a packed array (`count + 1` offsets,
 * the last the total). A RangeError past 2^31 − 1 blocks.
 */
export function blockOffsetsOf(count: number, inputLength: Int32Array, engineBlockSize: number): Int32Array {
  const offsets = new Int32Array(count + 1);
  let total = 0;
  for (let i = 0; i < count; i++) {
    offsets[i] = total;
    total += fullBlockCount(inputLength[i], engineBlockSize);
    if (total > 0x7fffffff) throw new RangeError(`too many engine blocks (more than ${0x7fffffff})`);
  }
  offsets[count] = total;
  return offsets;
}

/**
 * Hashes `count` prompts whose u32 hash ids are packed in `ids` (prompt i uses
 * `ids[idOffsets[i] .. idOffsets[i+1])`) and whose lengths are `inputLength[i]` (each ≤ its capacity).
 * With `limits`, prompt i is hashed only over its first `limits[i]` full blocks (the rest of its
 * slots stay 0, for a lazy table to write on demand: `RequestTable.lazyHashes`).
 */
export function hashPrompts(
  count: number,
  ids: Uint32Array,
  idOffsets: Int32Array,
  inputLength: Int32Array,
  traceBlockSize: number,
  engineBlockSize: number,
  limits?: Int32Array,
): PackedBlockHashes {
  const offsets = blockOffsetsOf(count, inputLength, engineBlockSize);
  const hashes = new Float64Array(offsets[count]);
  for (let i = 0; i < count; i++) {
    const start = idOffsets[i];
    computeBlockHashPrefix(
      ids,
      start,
      idOffsets[i + 1] - start,
      traceBlockSize,
      inputLength[i],
      engineBlockSize,
      hashes,
      offsets[i],
      limits === undefined ? Number.POSITIVE_INFINITY : limits[i],
    );
  }
  return { offsets, hashes };
}
