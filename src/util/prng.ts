/**
 * Small seeded PRNG: sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 128-bit state),
 * seeded through splitmix32. Uses only 32-bit integer arithmetic (`Math.imul`, `>>>`, `|0`), so the
 * integer stream is bit-identical on every platform and Node version. Derived floats are exact
 * functions of that stream; samplers built on `Math.log`/`Math.exp` are repeatable per V8 version.
 */

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/** splitmix32 step: returns the next state word and an avalanche output. */
function splitmix32(state: number): [next: number, out: number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [next, z | 0];
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /**
   * @param seed any safe integer (negative and > 2^32 allowed); the low and high 32-bit words are both
   *   mixed in, so seeds that differ only above bit 31 give different streams.
   */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`Prng seed must be a safe integer, got ${seed}`);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / TWO_POW_32) >>> 0;
    let s = lo ^ Math.imul(hi, 0x27d4eb2d);
    let out: number;
    [s, out] = splitmix32(s);
    this.a = out;
    [s, out] = splitmix32(s ^ hi);
    this.b = out;
    [s, out] = splitmix32(s);
    this.c = out;
    this.d = 1;
    // Discard the first outputs so nearby seeds decorrelate fully.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** Uniform integer in [0, 2^32). */
  nextUint32(): number {
    const a = this.a;
    const b = this.b;
    const c = this.c;
    const d = this.d;
    const t = (((a + b) | 0) + d) | 0;
    this.d = (d + 1) | 0;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    this.c = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  /** Uniform double in [0, 1) with 53 random bits (two draws). */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / TWO_POW_53;
  }

  /** Uniform integer in [lo, hi] (inclusive); hi − lo must be below 2^32. Tiny modulo bias, fine for workloads. */
  nextIntInclusive(lo: number, hi: number): number {
    const span = hi - lo + 1;
    if (!(span >= 1 && span <= TWO_POW_32)) throw new RangeError(`bad range [${lo}, ${hi}]`);
    return lo + Math.floor(this.nextFloat() * span);
  }

  /** Exponential sample with the given mean (inverse CDF: −ln(1−u)·mean). */
  nextExponential(mean: number): number {
    return -Math.log(1 - this.nextFloat()) * mean;
  }
}
