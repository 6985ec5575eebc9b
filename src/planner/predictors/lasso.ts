/**
 * Exact small lasso by feature-sign search (Lee, Battle, Raina & Ng, 2007):
 *
 *   minimise F(z) = ½ zᵀQz − gᵀz + λ Σ_{j penalised} |z_j|
 *
 * with Q symmetric positive definite (on every active set). Unpenalised coordinates are always active.
 * Each step solves the quadratic on the active set with fixed signs exactly and moves towards that
 * solution with an exact line search over the convex, piecewise-quadratic F; the active set is final
 * once the optimality conditions hold. Coordinate descent finishes the job in the (numerical) case
 * where a step stalls. Used by the Prophet-style fit, where plain coordinate descent crawls on the
 * strongly correlated changepoint columns.
 */
import { solveSpd } from "./linalg.js";

type Matrix = readonly (readonly number[])[];

const MAX_STEPS = 200;
const MAX_CD_SWEEPS = 2000;

export function solveLasso(
  q: Matrix,
  g: readonly number[],
  l1: readonly boolean[],
  lambda: number,
  z0: readonly number[],
): number[] {
  const z = z0.slice();
  const tol = 1e-11 * (1 + lambda);
  for (let step = 0; step < MAX_STEPS; step++) {
    const grad = gradient(q, g, z);
    const active: number[] = [];
    for (let j = 0; j < z.length; j++) if (!l1[j] || z[j] !== 0) active.push(j);
    const signs = new Map<number, number>();
    const activeOptimal = active.every(
      (j) => Math.abs(grad[j] + (l1[j] ? lambda * Math.sign(z[j]) : 0)) <= tol,
    );
    if (activeOptimal) {
      // Add the zero coefficient that violates |grad_j| ≤ λ the most, with the descent sign.
      let worst = -1;
      let worstExcess = tol;
      for (let j = 0; j < z.length; j++) {
        if (!l1[j] || z[j] !== 0) continue;
        if (Math.abs(grad[j]) - lambda > worstExcess) {
          worstExcess = Math.abs(grad[j]) - lambda;
          worst = j;
        }
      }
      if (worst < 0) return z;
      active.push(worst);
      active.sort((a, b) => a - b);
      signs.set(worst, -Math.sign(grad[worst]));
    }
    if (!featureSignStep(q, g, l1, lambda, z, active, signs)) break;
  }
  coordinateDescent(q, g, l1, lambda, z);
  return z;
}

function gradient(q: Matrix, g: readonly number[], z: readonly number[]): number[] {
  return z.map((_, i) => {
    let s = -g[i];
    for (let j = 0; j < z.length; j++) s += q[i][j] * z[j];
    return s;
  });
}

/** Solves the active-set system, with a tiny diagonal jitter if round-off broke definiteness. */
function solveActive(m: number[][], rhs: number[]): number[] {
  try {
    return solveSpd(m, rhs);
  } catch {
    const scale = Math.max(1e-300, ...m.map((row, i) => Math.abs(row[i])));
    return solveSpd(
      m.map((row, i) => row.map((v, j) => (i === j ? v + 1e-10 * scale : v))),
      rhs,
    );
  }
}

/**
 * Moves z (in place) towards the exact minimiser on `active` with the current signs (`signs` for
 * coordinates entering at zero). Returns false when the line search finds no decrease.
 */
function featureSignStep(
  q: Matrix,
  g: readonly number[],
  l1: readonly boolean[],
  lambda: number,
  z: number[],
  active: readonly number[],
  signs: ReadonlyMap<number, number>,
): boolean {
  const signOf = (j: number): number => (l1[j] ? (signs.get(j) ?? Math.sign(z[j])) : 0);
  const target = solveActive(
    active.map((a) => active.map((b) => q[a][b])),
    active.map((j) => g[j] - lambda * signOf(j)),
  );
  const d = new Array<number>(z.length).fill(0);
  active.forEach((j, i) => {
    d[j] = target[i] - z[j];
  });
  const alpha = exactLineSearch(q, g, l1, lambda, z, d);
  if (!(alpha > 0)) return false;
  for (let j = 0; j < z.length; j++) {
    if (d[j] === 0) continue;
    const next = z[j] + alpha * d[j];
    // Land exactly on zero at a sign change so the coordinate leaves the active set.
    z[j] = l1[j] && Math.abs(next) <= 1e-14 * (Math.abs(z[j]) + Math.abs(alpha * d[j])) ? 0 : next;
  }
  return true;
}

/** argmin over α ∈ [0, 1] of F(z + α·d): convex, quadratic between the zero crossings of penalised coordinates. */
function exactLineSearch(
  q: Matrix,
  g: readonly number[],
  l1: readonly boolean[],
  lambda: number,
  z: readonly number[],
  d: readonly number[],
): number {
  const grad = gradient(q, g, z);
  let c0 = 0;
  let curvature = 0;
  for (let i = 0; i < z.length; i++) {
    if (d[i] === 0) continue;
    c0 += d[i] * grad[i];
    let qd = 0;
    for (let j = 0; j < z.length; j++) qd += q[i][j] * d[j];
    curvature += d[i] * qd;
  }
  const breaks = [0, 1];
  for (let j = 0; j < z.length; j++) {
    if (!l1[j] || d[j] === 0 || z[j] === 0) continue;
    const a = -z[j] / d[j];
    if (a > 0 && a < 1) breaks.push(a);
  }
  breaks.sort((a, b) => a - b);
  for (let k = 0; k + 1 < breaks.length; k++) {
    const lo = breaks[k];
    const hi = breaks[k + 1];
    const mid = (lo + hi) / 2;
    // Slope of the L1 term on this piece.
    let l1Slope = 0;
    for (let j = 0; j < z.length; j++)
      if (l1[j] && d[j] !== 0) l1Slope += lambda * Math.sign(z[j] + mid * d[j]) * d[j];
    const slopeAt = (a: number): number => c0 + a * curvature + l1Slope;
    if (slopeAt(hi) < 0 && k + 2 < breaks.length) continue; // still descending: the minimum lies further on
    if (slopeAt(lo) >= 0) return lo;
    return curvature > 0 ? Math.min(hi, Math.max(lo, -(c0 + l1Slope) / curvature)) : hi;
  }
  return 1;
}

/** Cyclic coordinate descent to convergence (the fallback when a feature-sign step stalls). */
function coordinateDescent(
  q: Matrix,
  g: readonly number[],
  l1: readonly boolean[],
  lambda: number,
  z: number[],
): void {
  const grad = gradient(q, g, z);
  for (let sweep = 0; sweep < MAX_CD_SWEEPS; sweep++) {
    let change = 0;
    for (let j = 0; j < z.length; j++) {
      if (!(q[j][j] > 0)) continue;
      // Partial residual term for coordinate j: g_j − Σ_{i≠j} Q_ji z_i = Q_jj z_j − grad_j.
      const rho = q[j][j] * z[j] - grad[j];
      const shrunk = l1[j] ? Math.sign(rho) * Math.max(0, Math.abs(rho) - lambda) : rho;
      const next = shrunk / q[j][j];
      const delta = next - z[j];
      if (delta === 0) continue;
      for (let i = 0; i < z.length; i++) grad[i] += q[i][j] * delta;
      z[j] = next;
      change = Math.max(change, Math.abs(delta));
    }
    if (change <= 1e-14) return;
  }
}
