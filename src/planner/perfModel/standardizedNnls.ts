/**
 * The reference's Planner regression fit (aisimulate 0.13.0, `fpm_regression.fit.kind:
 * standardized_nnls`; definition: `ai-dynamo/aisimulate@070638b:docs/fpm-recursive-regression.md`
 * "The fitted plane and standardization", "Solving the constrained fit from the statistics",
 * "Numerical recovery, readiness, and prediction"):
 *
 * - each feature is standardized by the retained samples' population mean and scale; a feature
 *   whose scale is at most 1e-12·max(1, |mean|) is inactive (slope 0);
 * - ŷ = a + Σ b_j·(x_j − μ_j)/s_j with the intercept a free (it may be negative) and every slope
 *   b_j ≥ 0: every face of the constraint (each subset of active slopes free, the rest 0) is solved
 *   by least squares, faces with a negative slope are dropped, the least squared error wins;
 * - not ready without an active feature, or when the winning face has no positive slope although
 *   the samples outnumber the active features (an intercept-only plane is not a model);
 * - a prediction is floored at 1e-6 ms.
 *
 * The reference keeps centered running statistics and falls back to this batch fit where they
 * are numerically ambiguous; both are the same fit in exact arithmetic, and the stores here hold
 * at most `max_num_fpm_samples` rows, so the batch fit is what is computed.
 */

/** `INACTIVE_SCALE_RELATIVE_TOLERANCE`. */
const INACTIVE_SCALE = 1e-12;
/** Pivots below this (absolute) make a face's system singular: it is retried with a small ridge. */
const PIVOT_TOLERANCE = 1e-12;
/** `singular_ridge_scale`. */
const SINGULAR_RIDGE_SCALE = 1e-9;
/** Predictions are floored here (ms): a pass never takes zero or negative time. */
export const MIN_PREDICTION_MS = 1e-6;

/** A fitted plane and the standardization it was fitted in (a consistent snapshot). */
export interface StandardizedFit {
  /** a: the fit's value at the retained means. */
  readonly intercept: number;
  /** b_j ≥ 0, per standardized feature (0 for inactive ones). */
  readonly slopes: readonly number[];
  readonly means: readonly number[];
  readonly scales: readonly number[];
  readonly active: readonly boolean[];
}

/** The fit of `ys` (ms) on the rows `xs` (each of `dims` features); null when not ready. */
export function fitStandardizedNnls(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  dims: number,
  minObservations: number,
): StandardizedFit | null {
  const n = ys.length;
  if (n === 0 || n < minObservations) return null;
  const means = new Array<number>(dims).fill(0);
  let meanY = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < dims; k++) means[k] += xs[i][k];
    meanY += ys[i];
  }
  for (let k = 0; k < dims; k++) means[k] /= n;
  meanY /= n;
  // Centered scatter: C[j][k] over features, cy[k] feature × target, cyy target.
  const c: number[][] = Array.from({ length: dims }, () => new Array<number>(dims).fill(0));
  const cy = new Array<number>(dims).fill(0);
  let cyy = 0;
  for (let i = 0; i < n; i++) {
    const dy = ys[i] - meanY;
    cyy += dy * dy;
    for (let j = 0; j < dims; j++) {
      const dj = xs[i][j] - means[j];
      cy[j] += dj * dy;
      for (let k = 0; k < dims; k++) c[j][k] += dj * (xs[i][k] - means[k]);
    }
  }
  const scales = c.map((row, j) => Math.sqrt(Math.max(0, row[j] / n)));
  const active = scales.map(
    (s, j) => Number.isFinite(s) && s > INACTIVE_SCALE * Math.max(1, Math.abs(means[j])),
  );
  const varying: number[] = [];
  for (let j = 0; j < dims; j++) if (active[j]) varying.push(j);
  if (varying.length === 0) return null;

  let best: { sse: number; slopes: number[] } | null = null;
  for (let mask = 0; mask < 1 << varying.length; mask++) {
    const fitted = varying.filter((_, i) => (mask & (1 << i)) !== 0);
    // Standardized normal equations of the fitted slopes (the intercept separates: a = mean y).
    const g = fitted.map((a) => fitted.map((b) => c[a][b] / scales[a] / scales[b]));
    const h = fitted.map((a) => cy[a] / scales[a]);
    const b = solve(g, h) ?? solve(withRidge(g, n), h);
    if (b === null || b.some((v) => !Number.isFinite(v) || v < 0)) continue;
    let sse = cyy;
    for (let i = 0; i < fitted.length; i++) {
      sse -= 2 * b[i] * h[i];
      for (let j = 0; j < fitted.length; j++) sse += b[i] * g[i][j] * b[j];
    }
    if (!Number.isFinite(sse)) continue;
    if (best === null || sse < best.sse) {
      const slopes = new Array<number>(dims).fill(0);
      fitted.forEach((axis, i) => {
        slopes[axis] = b[i];
      });
      best = { sse, slopes };
    }
  }
  if (best === null) return null;
  const underdetermined = n <= varying.length;
  if (!underdetermined && !best.slopes.some((v) => v > 0)) return null;
  return { intercept: meanY, slopes: best.slopes, means, scales, active };
}

/** The fit's prediction (ms) at `x`, floored at `MIN_PREDICTION_MS`; null when not finite. */
export function predictMs(fit: StandardizedFit, x: ArrayLike<number>): number | null {
  let y = fit.intercept;
  for (let j = 0; j < fit.slopes.length; j++) {
    if (fit.active[j]) y += (fit.slopes[j] * (x[j] - fit.means[j])) / fit.scales[j];
  }
  return Number.isFinite(y) ? Math.max(MIN_PREDICTION_MS, y) : null;
}

/**
 * The face's system with the reference's singular-solve ridge on its slopes: λ = scale ·
 * max(1, Σ|H_kk|) over the normal matrix with the intercept's entry n.
 */
function withRidge(g: readonly number[][], n: number): number[][] {
  let trace = n;
  for (let i = 0; i < g.length; i++) trace += Math.abs(g[i][i]);
  const ridge = SINGULAR_RIDGE_SCALE * Math.max(1, trace);
  return g.map((row, i) => row.map((v, j) => (i === j ? v + ridge : v)));
}

/** Gaussian elimination with partial pivoting; null on a pivot below `PIVOT_TOLERANCE`. */
function solve(a: readonly number[][], rhs: readonly number[]): number[] | null {
  const m = rhs.length;
  const rows = a.map((row, i) => [...row, rhs[i]]);
  for (let col = 0; col < m; col++) {
    let p = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(rows[r][col]) > Math.abs(rows[p][col])) p = r;
    if (!(Math.abs(rows[p][col]) >= PIVOT_TOLERANCE)) return null;
    [rows[col], rows[p]] = [rows[p], rows[col]];
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = rows[r][col] / rows[col][col];
      if (f === 0) continue;
      for (let k = col; k <= m; k++) rows[r][k] -= f * rows[col][k];
    }
  }
  return rows.map((row, i) => row[m] / row[i]);
}
