/**
 * Ordinary least squares with an intercept for the 1- and 2-feature perf-model regressions
 * (`ai-dynamo/dynamo@439d645:components/src/dynamo/planner/core/perf_model/base.py`). Mirrors sklearn's `LinearRegression`: centre X and y, solve the centred
 * least-squares problem, intercept = ȳ − x̄·β. Rank-deficient designs (constant or collinear
 * features) get the minimum-norm solution, as LAPACK's `gelsd` returns it, instead of an
 * ill-conditioned blow-up.
 */

export interface OlsFit {
  readonly intercept: number;
  readonly coef: readonly number[];
}

/**
 * Relative singular-value cutoff below which the 2-feature design is treated as rank 1. Looser than
 * machine epsilon on purpose: exactly collinear inputs (e.g. kv = 200·requests) leave rounding residue
 * of a few ulps after orthogonalisation, which must not read as a second independent direction.
 */
const RANK_TOLERANCE = 1e-10;

/** Fits y ≈ intercept + coef·x over `xs` rows of length `dims`; null when there are no samples. */
export function fitOls(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  dims: 1 | 2,
): OlsFit | null {
  const n = ys.length;
  if (n === 0 || xs.length !== n) return null;
  const mean = new Array<number>(dims).fill(0);
  let my = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < dims; k++) mean[k] += xs[i][k];
    my += ys[i];
  }
  for (let k = 0; k < dims; k++) mean[k] /= n;
  my /= n;
  const yc = ys.map((y) => y - my);
  const cols: number[][] = [];
  for (let k = 0; k < dims; k++) cols.push(xs.map((row) => row[k] - mean[k]));
  const coef = dims === 1 ? solve1(cols[0], yc) : solve2(cols[0], cols[1], yc);
  let intercept = my;
  for (let k = 0; k < dims; k++) intercept -= mean[k] * coef[k];
  return { intercept, coef };
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function solve1(x: readonly number[], y: readonly number[]): number[] {
  const sxx = dot(x, x);
  return [sxx > 0 ? dot(x, y) / sxx : 0];
}

/**
 * Two centred columns via a pivoted, re-orthogonalised Gram–Schmidt QR (stabler than the normal
 * equations, which square the condition number), then back-substitution or, for rank 1, the
 * minimum-norm solution β = r·(q₁·y)/‖r‖² where X ≈ q₁ rᵀ.
 */
function solve2(a: readonly number[], b: readonly number[], y: readonly number[]): number[] {
  const na = Math.sqrt(dot(a, a));
  const nb = Math.sqrt(dot(b, b));
  if (na === 0 && nb === 0) return [0, 0];
  const swap = nb > na;
  const p = swap ? b : a;
  const q = swap ? a : b;
  const r11 = swap ? nb : na;
  const q1 = p.map((v) => v / r11);
  let r12 = dot(q1, q);
  const v = q.map((val, i) => val - r12 * q1[i]);
  const s = dot(q1, v);
  for (let i = 0; i < v.length; i++) v[i] -= s * q1[i];
  r12 += s;
  const r22 = Math.sqrt(dot(v, v));

  const frob = r11 * r11 + r12 * r12 + r22 * r22;
  const det = Math.abs(r11 * r22);
  const sMax = Math.sqrt((frob + Math.sqrt(Math.max(0, frob * frob - 4 * det * det))) / 2);
  const sMin = sMax > 0 ? det / sMax : 0;

  let bp: number;
  let bq: number;
  if (sMin <= RANK_TOLERANCE * sMax) {
    const c = dot(q1, y) / (r11 * r11 + r12 * r12);
    bp = r11 * c;
    bq = r12 * c;
  } else {
    const q2 = v.map((val) => val / r22);
    bq = dot(q2, y) / r22;
    bp = (dot(q1, y) - r12 * bq) / r11;
  }
  return swap ? [bq, bp] : [bp, bq];
}
