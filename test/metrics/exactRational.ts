/**
 * Exact rational arithmetic on doubles for tests: the mean and population variance of a list of
 * doubles as exact fractions, and the double nearest a fraction (ties to even), found by exact
 * comparison with a candidate's neighbours rather than by the code under test's rounding.
 */

/** `x` as `m · 2^e` exactly (m a BigInt, e an integer). */
export function toDyadic(x: number): { m: bigint; e: number } {
  if (!Number.isFinite(x)) throw new RangeError(`not finite: ${x}`);
  let v = x;
  let e = 0;
  while (!Number.isInteger(v)) {
    v *= 2;
    e--;
  }
  return { m: BigInt(v), e };
}

export interface Fraction {
  readonly num: bigint;
  readonly den: bigint;
}

const F64 = new Float64Array(1);
const U64 = new BigUint64Array(F64.buffer);

function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  F64[0] = x;
  U64[0] += x > 0 ? 1n : -1n;
  return F64[0];
}

function nextDown(x: number): number {
  return -nextUp(-x);
}

/** Compares |a − q| with |b − q| exactly: negative when a is nearer. */
function compareDistance(a: number, b: number, q: Fraction): number {
  const da = absDiff(a, q);
  const db = absDiff(b, q);
  // da.num/da.den vs db.num/db.den
  const l = da.num * db.den;
  const r = db.num * da.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

function absDiff(x: number, q: Fraction): Fraction {
  const { m, e } = toDyadic(x);
  // x = m / 2^-e (e ≤ 0) or m · 2^e
  const xn = e >= 0 ? m << BigInt(e) : m;
  const xd = e >= 0 ? 1n : 1n << BigInt(-e);
  let num = xn * q.den - q.num * xd;
  if (num < 0n) num = -num;
  return { num, den: xd * q.den };
}

function isEven(x: number): boolean {
  F64[0] = x;
  return (U64[0] & 1n) === 0n;
}

/** The double nearest `q` (ties to even), for |q| within the normal range. */
export function nearestDouble(q: Fraction): number {
  if (q.num === 0n) return 0;
  // A candidate within a few ulps: both sides shifted to fit a double's range, then divided.
  const bits = (x: bigint): number => (x < 0n ? -x : x).toString(2).length;
  const s1 = Math.max(0, bits(q.num) - 60);
  const s2 = Math.max(0, bits(q.den) - 60);
  let c = Number(q.num >> BigInt(s1)) / Number(q.den >> BigInt(s2));
  for (let e = s1 - s2; e !== 0; ) {
    const step = Math.max(-1000, Math.min(1000, e));
    c *= 2 ** step;
    e -= step;
  }
  for (;;) {
    const up = nextUp(c);
    const down = nextDown(c);
    if (compareDistance(up, c, q) < 0) c = up;
    else if (compareDistance(down, c, q) < 0) c = down;
    else break;
  }
  // A tie goes to the even neighbour.
  for (const n of [nextUp(c), nextDown(c)]) if (compareDistance(n, c, q) === 0 && isEven(n)) return n;
  return c;
}

/** The exact mean and population variance (÷ n) of `values`, rounded once each to the nearest double. */
export function exactMeanVariance(values: readonly number[]): { mean: number; variance: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, variance: 0 };
  const parts = values.map(toDyadic);
  const minE = Math.min(0, ...parts.map((p) => p.e));
  // Σx and Σx² over a common denominator: x = m·2^(e − minE) / 2^−minE.
  let sum = 0n;
  let squares = 0n;
  for (const p of parts) {
    const scaled = p.m << BigInt(p.e - minE);
    sum += scaled;
    squares += scaled * scaled;
  }
  const unit = 1n << BigInt(-minE);
  const N = BigInt(n);
  const mean = nearestDouble({ num: sum, den: N * unit });
  // (n·Σx² − (Σx)²) / n², over unit².
  const num = N * squares - sum * sum;
  const variance = num <= 0n ? 0 : nearestDouble({ num, den: N * N * unit * unit });
  return { mean, variance };
}
