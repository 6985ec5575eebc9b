/** Small dense solvers for the ARIMA and Prophet-style fits (a few columns, tens to hundreds of rows). */

/**
 * Least squares min‖Xβ − y‖ by Householder QR (better conditioned than normal equations).
 * `rows` are the rows of X. Throws when X is rank-deficient, so an over-parameterised candidate
 * model is dropped instead of returning arbitrary coefficients.
 */
export function leastSquares(rows: readonly (readonly number[])[], y: readonly number[]): number[] {
  const n = rows.length;
  const k = n > 0 ? rows[0].length : 0;
  if (n < k) throw new RangeError(`least squares needs at least ${k} rows, got ${n}`);
  // Column-major copy of X, and a copy of y, both transformed in place.
  const a: Float64Array[] = [];
  for (let j = 0; j < k; j++) {
    const col = new Float64Array(n);
    for (let i = 0; i < n; i++) col[i] = rows[i][j];
    a.push(col);
  }
  const b = Float64Array.from(y);
  const diag = new Float64Array(k);
  let maxDiag = 0;
  for (let j = 0; j < k; j++) {
    const cj = a[j];
    let norm = 0;
    for (let i = j; i < n; i++) norm += cj[i] * cj[i];
    norm = Math.sqrt(norm);
    const alpha = cj[j] > 0 ? -norm : norm;
    diag[j] = alpha;
    maxDiag = Math.max(maxDiag, Math.abs(alpha));
    if (norm === 0) continue;
    // v = x − alpha·e1, stored in cj[j..]; reflect the remaining columns and b.
    cj[j] -= alpha;
    let vv = 0;
    for (let i = j; i < n; i++) vv += cj[i] * cj[i];
    if (vv === 0) continue;
    for (let m = j + 1; m < k; m++) {
      const cm = a[m];
      let dot = 0;
      for (let i = j; i < n; i++) dot += cj[i] * cm[i];
      const f = (2 * dot) / vv;
      for (let i = j; i < n; i++) cm[i] -= f * cj[i];
    }
    let dot = 0;
    for (let i = j; i < n; i++) dot += cj[i] * b[i];
    const f = (2 * dot) / vv;
    for (let i = j; i < n; i++) b[i] -= f * cj[i];
  }
  for (let j = 0; j < k; j++) {
    if (!(Math.abs(diag[j]) > 1e-10 * maxDiag)) throw new RangeError("least squares: rank-deficient design");
  }
  const beta = new Array<number>(k).fill(0);
  for (let j = k - 1; j >= 0; j--) {
    let s = b[j];
    for (let m = j + 1; m < k; m++) s -= a[m][j] * beta[m];
    beta[j] = s / diag[j];
  }
  return beta;
}

/** Solves M x = b for a symmetric positive-definite M (Cholesky). Throws when M is not SPD. */
export function solveSpd(m: readonly (readonly number[])[], b: readonly number[]): number[] {
  const k = b.length;
  const l: Float64Array[] = [];
  for (let i = 0; i < k; i++) {
    const row = new Float64Array(k);
    for (let j = 0; j <= i; j++) {
      let s = m[i][j];
      const lj = j === i ? row : l[j];
      for (let p = 0; p < j; p++) s -= row[p] * lj[p];
      if (i === j) {
        if (!(s > 0)) throw new RangeError("solveSpd: matrix is not positive definite");
        row[j] = Math.sqrt(s);
      } else {
        row[j] = s / l[j][j];
      }
    }
    l.push(row);
  }
  const z = new Array<number>(k).fill(0);
  for (let i = 0; i < k; i++) {
    let s = b[i];
    for (let p = 0; p < i; p++) s -= l[i][p] * z[p];
    z[i] = s / l[i][i];
  }
  const x = new Array<number>(k).fill(0);
  for (let i = k - 1; i >= 0; i--) {
    let s = z[i];
    for (let p = i + 1; p < k; p++) s -= l[p][i] * x[p];
    x[i] = s / l[i][i];
  }
  return x;
}
