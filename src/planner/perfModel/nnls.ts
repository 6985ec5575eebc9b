/**
 * Non-negative least squares for the small perf-model regressions: y ≈ intercept + coef·x with the
 * intercept and every coefficient ≥ 0, so that more load never costs less time and an empty pass
 * never costs less than nothing. The reference's planner fits its FPM regressions the same way
 * (aisimulate 0.13.0's `fpm_regression.fit.kind: standardized_nnls`); with at most three unknowns
 * the exact solution is found by trying every set of free unknowns (the others held at 0) and
 * keeping the feasible fit of least squared error, which is where the KKT conditions put it.
 */
/** y ≈ intercept + coef·x. */
export interface LinearFit {
  readonly intercept: number;
  readonly coef: readonly number[];
}

/** An NNLS fit, and whether a bound held an unknown the unconstrained fit would have made negative. */
export interface NnlsFit extends LinearFit {
  readonly constrained: boolean;
}

/** A solved unknown this far below 0 (on unit-scaled columns) is rounding, read as 0. */
const NEGATIVE_TOLERANCE = 1e-12;

/** Relative pivot below which a set of free unknowns is treated as singular (skipped). */
const PIVOT_TOLERANCE = 1e-12;

/** The NNLS fit of `ys` on `xs` rows of length `dims`; null without samples or a feasible fit. */
export function fitNnls(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  dims: number,
): NnlsFit | null {
  const n = ys.length;
  if (n === 0 || xs.length !== n) return null;
  // Column 0 is the intercept's; each feature column is scaled to unit max for conditioning.
  const scale = [1];
  const cols: number[][] = [new Array<number>(n).fill(1)];
  for (let k = 0; k < dims; k++) {
    let max = 0;
    for (const row of xs) max = Math.max(max, Math.abs(row[k]));
    const s = max > 0 ? max : 1;
    scale.push(s);
    cols.push(xs.map((row) => row[k] / s));
  }
  const unknowns = dims + 1;
  const all = (1 << unknowns) - 1;
  const fitOf = (mask: number): { sse: number; beta: number[] } | null => {
    const free: number[] = [];
    for (let j = 0; j < unknowns; j++) if (mask & (1 << j)) free.push(j);
    const sol = solveNormal(
      free.map((j) => cols[j]),
      ys,
    );
    if (sol === null || sol.some((v) => v < -NEGATIVE_TOLERANCE)) return null;
    const beta = new Array<number>(unknowns).fill(0);
    free.forEach((j, i) => {
      beta[j] = Math.max(0, sol[i]);
    });
    let sse = 0;
    for (let i = 0; i < n; i++) {
      let r = ys[i];
      for (let j = 0; j < unknowns; j++) r -= beta[j] * cols[j][i];
      sse += r * r;
    }
    return { sse, beta };
  };
  // The unconstrained fit first: when it is feasible it is the answer and no bound is active.
  let best: { sse: number; beta: number[]; mask: number } | null = null;
  const free = fitOf(all);
  if (free !== null) best = { ...free, mask: all };
  else {
    for (let mask = 1; mask < all; mask++) {
      const f = fitOf(mask);
      // Ties (equal error) keep the earlier mask, the intercept alone first: a fixed order.
      if (f !== null && (best === null || f.sse < best.sse * (1 - 1e-12))) best = { ...f, mask };
    }
  }
  if (best === null) return null;
  const b = best.beta;
  return {
    intercept: b[0],
    coef: b.slice(1).map((v, k) => v / scale[k + 1]),
    constrained: best.mask !== all,
  };
}

/** Least squares on the given columns by the normal equations (Gaussian elimination, partial pivoting). */
function solveNormal(cols: readonly number[][], y: readonly number[]): number[] | null {
  const m = cols.length;
  const a: number[][] = [];
  for (let r = 0; r < m; r++) {
    const row: number[] = [];
    for (let c = 0; c < m; c++) row.push(dot(cols[r], cols[c]));
    row.push(dot(cols[r], y));
    a.push(row);
  }
  const norm = Math.max(...a.map((row, i) => Math.abs(row[i])));
  for (let c = 0; c < m; c++) {
    let p = c;
    for (let r = c + 1; r < m; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    if (!(Math.abs(a[p][c]) > PIVOT_TOLERANCE * norm)) return null;
    [a[c], a[p]] = [a[p], a[c]];
    for (let r = c + 1; r < m; r++) {
      const f = a[r][c] / a[c][c];
      for (let k = c; k <= m; k++) a[r][k] -= f * a[c][k];
    }
  }
  const x = new Array<number>(m).fill(0);
  for (let r = m - 1; r >= 0; r--) {
    let s = a[r][m];
    for (let k = r + 1; k < m; k++) s -= a[r][k] * x[k];
    x[r] = s / a[r][r];
  }
  return x;
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
