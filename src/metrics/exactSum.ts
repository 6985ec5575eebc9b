/**
 * Exact, order-free sums of doubles, and the mean and variance they give.
 *
 * Why: the token-gap moments (mean and std ITL, mean and std per-user output throughput) are fed
 * once per pass and gap, and the gaps of a request that is cut off must come back out. A running
 * (Welford) mean depends on the order of its samples and cannot take a sample back exactly; an
 * exact sum does both: adding is associative, subtracting undoes adding, and the mean and the
 * variance are rounded once, when read, from the exact sums. They are the correctly rounded mean
 * and population variance of the samples, whatever their order (test/metrics/exactSum.test.ts
 * checks them against rational arithmetic).
 *
 * Representation: a fixed-point number in limbs of 32 bits. Limb `i` holds an integer of weight
 * 2^(32·(i − BIAS)), so every finite double whose magnitude lies in [2^-1088, 2^1280) is a sum of
 * at most three limbs' worth of 32-bit chunks. Adding `weight × value` (|weight| < 2^10) adds
 * `weight × chunk` (< 2^42: exact) to three limbs with no test; every `ADDS_PER_NORMALIZE` adds
 * the limbs are brought back to [0, 2^32) by carrying into the next one, so a limb stays below
 * 2^32 + 2^10 · 2^42 < 2^53 and every operation is exact. The limbs are read back as one BigInt
 * only to round.
 */

const LIMBS = 80;
const BIAS = 40;
const WINDOW = 4294967296; // 2^32
/** Weights below this times a 32-bit chunk stay below 2^42. */
const MAX_WEIGHT = 1024; // 2^10
/** Adds of at most 2^42 each between normalizations: limbs stay below 2^53. */
const ADDS_PER_NORMALIZE = 1024;
const TWO_POW_128 = 2 ** 128;
/** Veltkamp's splitter for doubles (2^27 + 1): x·x as an exact sum of two doubles. */
const SPLITTER = 134217729;

/** 2^(−32k) for window k ∈ [−31, 31] (at index k + 40): a value of window k scaled by it lies in [1, 2^32). */
const SCALE = new Float64Array(80);
for (let k = -31; k <= 31; k++) SCALE[k + 40] = 2 ** (-32 * k);
const TWO_POW_MINUS_32 = 2 ** -32;
const TWO_POW_MINUS_64 = 2 ** -64;
const TWO_POW_MINUS_96 = 2 ** -96;

// The binary exponent of a double, read from its bits (one typed-array alias, no allocation).
const BITS = new Float64Array(1);
const WORDS = new Uint32Array(BITS.buffer);
const HIGH_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** The window k of a positive finite double: v ∈ [2^(32k), 2^(32k + 32)). */
function windowOf(v: number): number {
  BITS[0] = v;
  return Math.floor((((WORDS[HIGH_WORD] >>> 20) & 0x7ff) - 1023) / 32);
}

/**
 * Adds `w` times the three 32-bit chunks of `scaled` (a value of window k scaled into [1, 2^32), or
 * below for the windows a square's error takes) to `sums[at]`, `sums[at − 1]` and `sums[at − 2]`,
 * the limbs of window k's chunks: the one splitter of `ExactSum.addAt` and `ExactMoments.addMany`.
 */
function addChunks(sums: Float64Array, at: number, scaled: number, w: number): void {
  const c0 = Math.floor(scaled);
  const r1 = (scaled - c0) * WINDOW;
  const c1 = Math.floor(r1);
  // 53 significant bits span at most three 32-bit windows: what is left, (r1 − c1) · 2^32, is an integer.
  sums[at] += c0 * w;
  sums[at - 1] += c1 * w;
  sums[at - 2] += (r1 - c1) * WINDOW * w;
}

/** Samples `ExactMoments.addMany` takes at once: their chunk sums stay below 2^50. */
export const MAX_BATCH = 256;

/** Where `add` puts its value for `addAt`. */
const ARGUMENT = new Float64Array(1);

export class ExactSum {
  private readonly limbs = new Float64Array(LIMBS);
  /** Adds since the limbs were last normalized. */
  private adds = 0;
  /** A non-finite value was added: the sum is not a number any more. */
  private nonFinite = false;

  constructor() {
    // Field states (docs/performance.md): `adds` and `nonFinite` may change first in a copy
    // (`copyFrom`, a Planner tick's snapshot), after `addMany` is compiled; changed here once,
    // neither is ever a constant to V8.
    this.adds = 1;
    this.adds = 0;
    this.nonFinite = true;
    this.nonFinite = false;
  }

  /** Adds `weight` × `value` exactly (`weight` an integer, negative to take samples back out). */
  add(value: number, weight: number): void {
    ARGUMENT[0] = value;
    this.addAt(ARGUMENT, 0, weight);
  }

  /**
   * `add(values[index], weight)`: the value read from a typed array, not passed — a double
   * argument to a call that is not inlined is a heap number (garbage) per call.
   */
  addAt(values: Float64Array, index: number, weight: number): void {
    const value = values[index];
    if (value === 0 || weight === 0) return;
    if (!Number.isFinite(value)) {
      this.nonFinite = true;
      return;
    }
    let v = value;
    let w = weight;
    if (v < 0) {
      v = -v;
      w = -w;
    }
    if (w >= MAX_WEIGHT || w <= -MAX_WEIGHT) {
      // A large weight in two parts: w = high · 2^10 + low (value · 2^10 is exact).
      const high = Math.trunc(w / MAX_WEIGHT);
      const split = new Float64Array(2);
      split[0] = v * MAX_WEIGHT;
      split[1] = v;
      this.addAt(split, 0, high);
      this.addAt(split, 1, w - high * MAX_WEIGHT);
      return;
    }
    // The 32-bit window of the value's leading bit: the usual magnitudes (ms gaps, tokens/s, their
    // squares and the squares' rounding errors) by comparison, others from the exponent bits
    // (reading them back through an alias stalls the store buffer).
    let k: number;
    let windowShift = 0;
    if (v >= 1) {
      k = v < WINDOW ? 0 : v < WINDOW * WINDOW ? 1 : windowOf(v);
    } else if (v >= TWO_POW_MINUS_32) {
      k = -1;
    } else if (v >= TWO_POW_MINUS_64) {
      k = -2;
    } else if (v >= TWO_POW_MINUS_96) {
      k = -3;
    } else {
      k = windowOf(v);
      if (k < -31) {
        // Subnormal or nearly: scale up by 2^128 (exact) and place it four windows lower.
        v *= TWO_POW_128;
        k = windowOf(v);
        windowShift = -4;
      }
    }
    // × 2^(−32k): in [1, 2^32), exactly (a power-of-two scaling, in range for |k| ≤ 31).
    addChunks(this.limbs, k + BIAS + windowShift, k === 0 ? v : v * SCALE[k + 40], w);
    if (++this.adds === ADDS_PER_NORMALIZE) this.normalize();
  }

  /** Carries every limb's part above 32 bits into the next: limbs in [0, 2^32) but the top one. */
  private normalize(): void {
    const limbs = this.limbs;
    for (let j = 0; j < LIMBS - 1; j++) {
      const q = Math.floor(limbs[j] / WINDOW);
      if (q !== 0) {
        limbs[j] -= q * WINDOW;
        limbs[j + 1] += q;
      }
    }
    this.adds = 0;
  }

  /**
   * Adds `sums[i]` (integers of magnitude below 2^52) to limb `i` for every `i` in [from, to),
   * and clears them: a batch's chunk sums kept by limb (`ExactMoments.addMany`).
   */
  addLimbSums(sums: Float64Array, from: number, to: number): void {
    // Limbs are normalized after every batch: only `addAt`'s adds since then need carrying first.
    if (this.adds !== 0) this.normalize();
    const limbs = this.limbs;
    for (let i = from; i < to; i++) {
      limbs[i] += sums[i];
      sums[i] = 0;
    }
    // Carries from `from` up: the limbs below were not touched, and above `to` they stop moving
    // at the first limb that takes no carry.
    for (let j = from; j < LIMBS - 1; j++) {
      const q = Math.floor(limbs[j] / WINDOW);
      if (q === 0 && j >= to) break;
      if (q !== 0) {
        limbs[j] -= q * WINDOW;
        limbs[j + 1] += q;
      }
    }
  }

  /** Adds everything `other` holds, `sign` (±1) times. */
  addSum(other: ExactSum, sign: 1 | -1): void {
    if (other.nonFinite) this.nonFinite = true;
    this.normalize();
    other.normalize();
    const limbs = this.limbs;
    for (let i = 0; i < LIMBS; i++) limbs[i] += sign * other.limbs[i];
    this.normalize();
  }

  /** Whether a non-finite value was added. */
  get isFinite(): boolean {
    return !this.nonFinite;
  }

  /** The sum × 2^(32·BIAS), exactly (`FIXED_POINT_BITS`). */
  scaled(): bigint {
    let n = 0n;
    for (let i = LIMBS - 1; i >= 0; i--) n = (n << 32n) + BigInt(this.limbs[i]);
    return n;
  }

  /** The sum, correctly rounded to a double. */
  value(): number {
    if (this.nonFinite) return Number.NaN;
    return roundRatio(this.scaled(), 1n << FIXED_POINT_BITS);
  }

  copyFrom(other: ExactSum): void {
    this.adds = other.adds;
    this.limbs.set(other.limbs);
    this.nonFinite = other.nonFinite;
  }
}

/** `ExactSum.scaled()` is the sum times 2 to this power. */
const FIXED_POINT_BITS = BigInt(32 * BIAS);

/**
 * Count, Σx and Σx² of a stream of weighted samples, exactly: `mean` and `variance` are the
 * correctly rounded mean and population variance (÷ n) of the samples, in any order of addition.
 * Exact for samples whose magnitude lies in [2^-480, 2^480] (x² is split exactly into two doubles;
 * beyond, x² rounds or overflows).
 */
export class ExactMoments {
  count = 0;
  private readonly sum = new ExactSum();
  private readonly squares = new ExactSum();

  /** value², split exactly into two doubles (`addAt`). */
  private readonly square = new Float64Array(2);
  /** `addMany`'s sums of the values' and the squares' chunks, by limb (zero between calls). */
  private readonly valueSums = new Float64Array(LIMBS);
  private readonly squareSums = new Float64Array(LIMBS);

  constructor() {
    // Field states (docs/performance.md): the count takes doubles (weights summed in
    // `addMany`); holding one from the first copy on, it never changes representation
    // mid-replay, which would give later copies a new hidden class and throw away the code
    // compiled on the old one.
    this.count = 0.5;
    this.count = 0;
  }

  /** Adds `weight` samples equal to `value` (a negative weight takes them back out). */
  add(value: number, weight: number): void {
    ARGUMENT[0] = value;
    this.addAt(ARGUMENT, 0, weight);
  }

  /** `add(values[index], weight)`, the value read from a typed array (`ExactSum.addAt`). */
  addAt(values: Float64Array, index: number, weight: number): void {
    if (weight === 0) return;
    const value = values[index];
    this.count += weight;
    this.sum.addAt(values, index, weight);
    // value² = square + error exactly (Dekker's product with Veltkamp's split).
    const square = value * value;
    const c = SPLITTER * value;
    const high = c - (c - value);
    const low = value - high;
    const sq = this.square;
    sq[0] = square;
    sq[1] = high * high - square + 2 * high * low + low * low;
    this.squares.addAt(sq, 0, weight);
    this.squares.addAt(sq, 1, weight);
  }

  /**
   * `addAt(values, i, weights[i])` for every `i < n` (at most `MAX_BATCH`), skipping values ≤ 0
   * when `positiveOnly`. The usual samples — a value in [1, 2^32) whose square is below 2^64, a
   * weight below 2^10 — are split into 32-bit chunks at fixed limbs, and each limb's chunk products
   * are summed in a local (each product below 2^42, one to a local per sample: a batch's sums stay
   * below 2^50, exact) and added to the limbs once. Locals, not an array of limb sums: an array
   * element added to on every sample is a store and a load per add, and those chains were most of
   * this loop's time. Any other sample takes `addAt`'s way. The sums are exact either way, so the
   * result is the same.
   *
   * Limbs: a value's chunks at windows 0, −1, −2 (`ExactSum.addAt` splits it the same way); its
   * square's at 0, −1, −2 below 2^32, else 1, 0, −1; the square's rounding error — a multiple of
   * 2^−104 (a value ≥ 1 is a multiple of 2^−52) below 2^12 in magnitude — at the five fixed windows
   * 0 … −4, each chunk the integer part of what is left times 2^32 (every step exact).
   */
  addMany(values: Float64Array, weights: Float64Array, n: number, positiveOnly: boolean): void {
    if (n > MAX_BATCH) throw new RangeError(`internal: a batch of ${n} samples (at most ${MAX_BATCH})`);
    // Σ chunk · weight by limb: the values' (v0: window 0 … v2: −2), the squares' (q1: 1 … q2: −2)
    // and the squares' errors' (e0: 0 … e4: −4).
    let v0 = 0;
    let v1 = 0;
    let v2 = 0;
    let q1 = 0;
    let q0 = 0;
    let qm1 = 0;
    let qm2 = 0;
    let e0 = 0;
    let e1 = 0;
    let e2 = 0;
    let e3 = 0;
    let e4 = 0;
    for (let i = 0; i < n; i++) {
      const value = values[i];
      const w = weights[i];
      if (positiveOnly && !(value > 0)) continue;
      if (!(value >= 1 && value < WINDOW && w < MAX_WEIGHT && w > -MAX_WEIGHT)) {
        this.addAt(values, i, w);
        continue;
      }
      if (w === 0) continue;
      this.count += w;
      const c0 = Math.floor(value);
      const r1 = (value - c0) * WINDOW;
      const c1 = Math.floor(r1);
      v0 += c0 * w;
      v1 += c1 * w;
      v2 += (r1 - c1) * WINDOW * w;
      const square = value * value;
      // value² = square + error exactly (Dekker's product with Veltkamp's split).
      const c = SPLITTER * value;
      const high = c - (c - value);
      const low = value - high;
      const error = high * high - square + 2 * high * low + low * low;
      // Both windows' chunks computed and one set weighted by zero: a branch here first took its
      // rare side late in a run and deoptimized the loop (docs/performance.md "Deoptimizations").
      const big = square < WINDOW ? 0 : w;
      const small = w - big;
      const s = big === 0 ? square : square * TWO_POW_MINUS_32;
      const d0 = Math.floor(s);
      const t1 = (s - d0) * WINDOW;
      const d1 = Math.floor(t1);
      const d2 = (t1 - d1) * WINDOW;
      q1 += d0 * big;
      q0 += d0 * small + d1 * big;
      qm1 += d1 * small + d2 * big;
      qm2 += d2 * small;
      const e = error < 0 ? -error : error;
      const ew = error < 0 ? -w : w;
      const f0 = Math.floor(e);
      const g1 = (e - f0) * WINDOW;
      const f1 = Math.floor(g1);
      const g2 = (g1 - f1) * WINDOW;
      const f2 = Math.floor(g2);
      const g3 = (g2 - f2) * WINDOW;
      const f3 = Math.floor(g3);
      e0 += f0 * ew;
      e1 += f1 * ew;
      e2 += f2 * ew;
      e3 += f3 * ew;
      e4 += (g3 - f3) * WINDOW * ew;
    }
    const valueSums = this.valueSums;
    valueSums[BIAS] = v0;
    valueSums[BIAS - 1] = v1;
    valueSums[BIAS - 2] = v2;
    this.sum.addLimbSums(valueSums, BIAS - 2, BIAS + 1);
    const squareSums = this.squareSums;
    squareSums[BIAS + 1] = q1;
    squareSums[BIAS] = q0 + e0;
    squareSums[BIAS - 1] = qm1 + e1;
    squareSums[BIAS - 2] = qm2 + e2;
    squareSums[BIAS - 3] = e3;
    squareSums[BIAS - 4] = e4;
    this.squares.addLimbSums(squareSums, BIAS - 4, BIAS + 2);
  }

  /** The correctly rounded mean; 0 when empty. */
  get mean(): number {
    if (this.count === 0) return 0;
    if (!this.sum.isFinite) return Number.NaN;
    return roundRatio(this.sum.scaled(), BigInt(this.count) << FIXED_POINT_BITS);
  }

  /** The correctly rounded population variance (÷ n); 0 when empty. */
  get variance(): number {
    if (this.count === 0) return 0;
    if (!this.sum.isFinite || !this.squares.isFinite) return Number.NaN;
    // Σx² / n − (Σx / n)² = (n·Σx² − (Σx)²) / n², both sums scaled by 2^F.
    const n = BigInt(this.count);
    const s = this.sum.scaled();
    const numerator = ((n * this.squares.scaled()) << FIXED_POINT_BITS) - s * s;
    if (numerator <= 0n) return 0;
    return roundRatio(numerator, (n * n) << (2n * FIXED_POINT_BITS));
  }

  /** Σx and Σx², exactly, as `ExactSum.scaled` gives them (tests and diagnostics). */
  scaledSums(): [bigint, bigint] {
    return [this.sum.scaled(), this.squares.scaled()];
  }

  /** Adds (or, `sign` −1, takes out) everything `other` holds. */
  addMoments(other: ExactMoments, sign: 1 | -1): void {
    this.count += sign * other.count;
    this.sum.addSum(other.sum, sign);
    this.squares.addSum(other.squares, sign);
  }

  copyFrom(other: ExactMoments): void {
    this.count = other.count;
    this.sum.copyFrom(other.sum);
    this.squares.copyFrom(other.squares);
  }
}

function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/**
 * `numerator / denominator` (denominator > 0) correctly rounded to a double: a quotient of at
 * least 64 bits with a sticky bit for any remainder, which `Number()` rounds to nearest (ties to
 * even) as one rounding of the exact ratio would.
 */
export function roundRatio(numerator: bigint, denominator: bigint): number {
  if (numerator === 0n) return 0;
  const negative = numerator < 0n;
  const a = negative ? -numerator : numerator;
  const shift = 64 - (bitLength(a) - bitLength(denominator));
  let q: bigint;
  let r: bigint;
  if (shift >= 0) {
    const scaled = a << BigInt(shift);
    q = scaled / denominator;
    r = scaled % denominator;
  } else {
    const d = denominator << BigInt(-shift);
    q = a / d;
    r = a % d;
  }
  if (r !== 0n) q |= 1n;
  let v = Number(q);
  // × 2^−shift, in steps that neither overflow nor underflow on the way.
  let e = -shift;
  while (e > 1000) {
    v *= 2 ** 1000;
    e -= 1000;
  }
  while (e < -1000) {
    v *= 2 ** -1000;
    e += 1000;
  }
  v *= 2 ** e;
  return negative ? -v : v;
}
