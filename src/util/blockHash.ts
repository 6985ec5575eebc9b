/**
 * The block-hash primitives (the hash family of traffic/blockHashes.ts, where the scheme is
 * described): the engine chains its output blocks onto a prompt's hashes with the same functions,
 * so they live below both. Two independent 32-bit lanes, a murmur3-style lane finished with fmix32
 * and an xxhash32-style lane finished with the xxh32 avalanche, give a 53-bit value
 * `(laneB >>> 11) · 2^32 + laneA`, exact in a double. Lanes are int32 internally (cheap in V8).
 */

/** Seed of the chain (Dynamo uses salt 1337 for its sequence hashes). */
export const SEQUENCE_HASH_SEED = 1337;

export const TWO_POW_32 = 4294967296;
// Lane seeds of local hashes (A, B) and of sequence hashes.
export const LOCAL_SEED_A = 0x6c6f6361;
export const LOCAL_SEED_B = 0x165667b1;
export const SEQ_SEED_A = 0x73657121;
export const SEQ_SEED_B = 0x27d4eb2f;

// murmur3 x86_32 body step.
export function absorbA(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

// murmur3 fmix32 with the word count folded in.
export function finishA(h: number, words: number): number {
  return avalanche(h ^ words, 16, 0x85ebca6b, 0xc2b2ae35);
}

// xxhash32 tail step (h += k·P3; h = rotl(h, 17)·P4).
export function absorbB(h: number, k: number): number {
  h = (h + Math.imul(k, 0xc2b2ae3d)) | 0;
  h = (h << 17) | (h >>> 15);
  return Math.imul(h, 0x27d4eb2f);
}

// xxhash32 avalanche with the word count folded in.
export function finishB(h: number, words: number): number {
  return avalanche((h + Math.imul(words, 0x9e3779b1)) | 0, 15, 0x85ebca77, 0xc2b2ae3d);
}

// The final mix both hashes share: xor-shift by `firstShift`, multiply, xor-shift 13, multiply,
// xor-shift 16 (murmur3's fmix32 and xxhash32's avalanche differ only in the first shift and
// the two multipliers).
function avalanche(h: number, firstShift: number, m1: number, m2: number): number {
  h ^= h >>> firstShift;
  h = Math.imul(h, m1);
  h ^= h >>> 13;
  h = Math.imul(h, m2);
  h ^= h >>> 16;
  return h | 0;
}

// Lanes are kept as int32 internally (cheap in V8); only the output is a 53-bit double.
export function combine(a: number, b: number): number {
  return (b >>> 11) * TWO_POW_32 + (a >>> 0);
}

/** Local hash of a block made of a single run: `length` copies of the u32 token `value`. */
export function localHashOfRun(value: number, length: number): number {
  const a = absorbA(absorbA(LOCAL_SEED_A, value), length);
  const b = absorbB(absorbB(LOCAL_SEED_B, value), length);
  return combine(finishA(a, 2), finishB(b, 2));
}

/**
 * Sequence hash of a block given its parent's sequence hash (or SEQUENCE_HASH_SEED) and its local hash.
 * Each lane absorbs the local hash's words first (so the hot loop can cache that state per local hash),
 * then the parent's words.
 */
export function chainHash(parent: number, local: number): number {
  const llo = local | 0;
  const lhi = (local / TWO_POW_32) | 0;
  const sA = absorbA(absorbA(SEQ_SEED_A, llo), lhi);
  const sB = absorbB(absorbB(SEQ_SEED_B, llo), lhi);
  const plo = parent | 0;
  const phi = (parent / TWO_POW_32) | 0;
  return combine(finishA(absorbA(absorbA(sA, plo), phi), 4), finishB(absorbB(absorbB(sB, plo), phi), 4));
}
