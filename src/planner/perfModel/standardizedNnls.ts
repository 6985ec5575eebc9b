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
  const x = new Float64Array(n * dims);
  for (let i = 0; i < n; i++) for (let k = 0; k < dims; k++) x[i * dims + k] = xs[i][k];
  return fitStandardizedNnlsRows(x, Float64Array.from(ys), n, dims, minObservations);
}

/**
 * Scratch of the fit (a store refits after every pass it learns: nothing allocated but the fit it
 * returns). Grown to the largest `dims` asked for.
 */
let scratchDims = -1;
let scatter = new Float64Array(0);
let scatterY = new Float64Array(0);
let normal = new Float64Array(0);
let normalRhs = new Float64Array(0);
let augmented = new Float64Array(0);
let faceSlopes = new Float64Array(0);
let fittedAxes = new Int32Array(0);
let varyingAxes = new Int32Array(0);

function reserveScratch(dims: number): void {
  if (dims <= scratchDims) return;
  scratchDims = dims;
  scatter = new Float64Array(dims * dims);
  scatterY = new Float64Array(dims);
  normal = new Float64Array(dims * dims);
  normalRhs = new Float64Array(dims);
  augmented = new Float64Array(dims * (dims + 1));
  faceSlopes = new Float64Array(dims);
  fittedAxes = new Int32Array(dims);
  varyingAxes = new Int32Array(dims);
}

/**
 * `fitStandardizedNnls` of the `n` rows `x[i·dims .. i·dims + dims)` and targets `y[0 .. n)`:
 * the same operations in the same order, on typed scratch instead of arrays built per call, so
 * every value is the same double (test/planner/standardizedNnls.rows.test.ts keeps the
 * array-based form as its reference).
 */
export function fitStandardizedNnlsRows(
  x: Float64Array,
  y: Float64Array,
  n: number,
  dims: number,
  minObservations: number,
): StandardizedFit | null {
  if (n === 0 || n < minObservations) return null;
  reserveScratch(dims);
  const means = new Array<number>(dims).fill(0);
  let meanY = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < dims; k++) means[k] += x[i * dims + k];
    meanY += y[i];
  }
  for (let k = 0; k < dims; k++) means[k] /= n;
  meanY /= n;
  // Centered scatter: c[j·dims + k] over features, cy[k] feature × target, cyy target.
  const c = scatter;
  const cy = scatterY;
  c.fill(0, 0, dims * dims);
  cy.fill(0, 0, dims);
  let cyy = 0;
  for (let i = 0; i < n; i++) {
    const dy = y[i] - meanY;
    cyy += dy * dy;
    for (let j = 0; j < dims; j++) {
      const dj = x[i * dims + j] - means[j];
      cy[j] += dj * dy;
      for (let k = 0; k < dims; k++) c[j * dims + k] += dj * (x[i * dims + k] - means[k]);
    }
  }
  const scales = new Array<number>(dims);
  const active = new Array<boolean>(dims);
  let varyingCount = 0;
  for (let j = 0; j < dims; j++) {
    scales[j] = Math.sqrt(Math.max(0, c[j * dims + j] / n));
    active[j] = Number.isFinite(scales[j]) && scales[j] > INACTIVE_SCALE * Math.max(1, Math.abs(means[j]));
    if (active[j]) varyingAxes[varyingCount++] = j;
  }
  if (varyingCount === 0) return null;

  let bestSse = Number.NaN;
  let bestSlopes: number[] | null = null;
  for (let mask = 0; mask < 1 << varyingCount; mask++) {
    let m = 0;
    for (let i = 0; i < varyingCount; i++) if ((mask & (1 << i)) !== 0) fittedAxes[m++] = varyingAxes[i];
    // Standardized normal equations of the fitted slopes (the intercept separates: a = mean y).
    for (let a = 0; a < m; a++) {
      const fa = fittedAxes[a];
      for (let b = 0; b < m; b++) {
        const fb = fittedAxes[b];
        normal[a * m + b] = c[fa * dims + fb] / scales[fa] / scales[fb];
      }
      normalRhs[a] = cy[fa] / scales[fa];
    }
    if (!solveInto(m, 0) && !solveInto(m, ridgeOf(m, n))) continue;
    let usable = true;
    for (let i = 0; i < m; i++) if (!Number.isFinite(faceSlopes[i]) || faceSlopes[i] < 0) usable = false;
    if (!usable) continue;
    let sse = cyy;
    for (let i = 0; i < m; i++) {
      sse -= 2 * faceSlopes[i] * normalRhs[i];
      for (let j = 0; j < m; j++) sse += faceSlopes[i] * normal[i * m + j] * faceSlopes[j];
    }
    if (!Number.isFinite(sse)) continue;
    if (bestSlopes === null || sse < bestSse) {
      const slopes = new Array<number>(dims).fill(0);
      for (let i = 0; i < m; i++) slopes[fittedAxes[i]] = faceSlopes[i];
      bestSse = sse;
      bestSlopes = slopes;
    }
  }
  if (bestSlopes === null) return null;
  const underdetermined = n <= varyingCount;
  if (!underdetermined && !bestSlopes.some((v) => v > 0)) return null;
  return { intercept: meanY, slopes: bestSlopes, means, scales, active };
}

/**
 * The reference's singular-solve ridge for the face's `m`-slope system in `normal`: λ = scale ·
 * max(1, Σ|H_kk|) over the normal matrix with the intercept's entry n.
 */
function ridgeOf(m: number, n: number): number {
  let trace = n;
  for (let i = 0; i < m; i++) trace += Math.abs(normal[i * m + i]);
  return SINGULAR_RIDGE_SCALE * Math.max(1, trace);
}

/**
 * Solves the face's system (`normal` + `ridge` on its diagonal, `normalRhs`) into `faceSlopes` by
 * Gaussian elimination with partial pivoting; false on a pivot below `PIVOT_TOLERANCE`.
 */
function solveInto(m: number, ridge: number): boolean {
  const w = m + 1;
  const rows = augmented;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++)
      rows[i * w + j] = i === j && ridge !== 0 ? normal[i * m + j] + ridge : normal[i * m + j];
    rows[i * w + m] = normalRhs[i];
  }
  for (let col = 0; col < m; col++) {
    let p = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(rows[r * w + col]) > Math.abs(rows[p * w + col])) p = r;
    if (!(Math.abs(rows[p * w + col]) >= PIVOT_TOLERANCE)) return false;
    if (p !== col) {
      for (let k = 0; k <= m; k++) {
        const swap = rows[col * w + k];
        rows[col * w + k] = rows[p * w + k];
        rows[p * w + k] = swap;
      }
    }
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = rows[r * w + col] / rows[col * w + col];
      if (f === 0) continue;
      for (let k = col; k <= m; k++) rows[r * w + k] -= f * rows[col * w + k];
    }
  }
  for (let i = 0; i < m; i++) faceSlopes[i] = rows[i * w + m] / rows[i * w + i];
  return true;
}

/** The fit's prediction (ms) at `x`, floored at `MIN_PREDICTION_MS`; null when not finite. */
export function predictMs(fit: StandardizedFit, x: ArrayLike<number>): number | null {
  let y = fit.intercept;
  for (let j = 0; j < fit.slopes.length; j++) {
    if (fit.active[j]) y += (fit.slopes[j] * (x[j] - fit.means[j])) / fit.scales[j];
  }
  return Number.isFinite(y) ? Math.max(MIN_PREDICTION_MS, y) : null;
}
