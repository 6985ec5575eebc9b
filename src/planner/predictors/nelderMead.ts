/**
 * Deterministic Nelder–Mead minimiser (standard coefficients 1, 2, 0.5, 0.5) for the few-parameter
 * ARMA fits. Non-finite objective values act as +∞, which is how parameter constraints are expressed.
 */
export interface NelderMeadOptions {
  /** Initial simplex offset per coordinate. */
  readonly steps: readonly number[];
  readonly maxIterations?: number;
  /** Stop when the spread of objective values over the simplex is at most this (absolute + relative). */
  readonly fTol?: number;
  /** …and every vertex is within this of the best one, per coordinate. */
  readonly xTol?: number;
}

export interface NelderMeadResult {
  readonly x: number[];
  readonly fx: number;
  readonly iterations: number;
}

export function nelderMead(
  f: (x: readonly number[]) => number,
  x0: readonly number[],
  opts: NelderMeadOptions,
): NelderMeadResult {
  const n = x0.length;
  const maxIterations = opts.maxIterations ?? 400 * Math.max(1, n);
  const fTol = opts.fTol ?? 1e-12;
  const xTol = opts.xTol ?? 1e-10;
  const evaluate = (x: readonly number[]): number => {
    const v = f(x);
    return Number.isFinite(v) ? v : Number.POSITIVE_INFINITY;
  };
  const simplex: number[][] = [x0.slice()];
  for (let i = 0; i < n; i++) {
    const v = x0.slice();
    v[i] += opts.steps[i];
    simplex.push(v);
  }
  const values = simplex.map(evaluate);
  const order = (): void => {
    const idx = simplex.map((_, i) => i).sort((a, b) => values[a] - values[b] || a - b);
    const s = idx.map((i) => simplex[i]);
    const v = idx.map((i) => values[i]);
    for (let i = 0; i <= n; i++) {
      simplex[i] = s[i];
      values[i] = v[i];
    }
  };
  const along = (centroid: readonly number[], worst: readonly number[], t: number): number[] =>
    centroid.map((c, j) => c + t * (worst[j] - c));

  let it = 0;
  for (; it < maxIterations; it++) {
    order();
    const best = values[0];
    const worst = values[n];
    if (Number.isFinite(worst) && worst - best <= fTol * (1 + Math.abs(best))) {
      let size = 0;
      for (let i = 1; i <= n; i++)
        for (let j = 0; j < n; j++) size = Math.max(size, Math.abs(simplex[i][j] - simplex[0][j]));
      if (size <= xTol) break;
    }
    const centroid = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) centroid[j] += simplex[i][j] / n;
    const xr = along(centroid, simplex[n], -1);
    const fr = evaluate(xr);
    if (fr < values[0]) {
      const xe = along(centroid, simplex[n], -2);
      const fe = evaluate(xe);
      if (fe < fr) {
        simplex[n] = xe;
        values[n] = fe;
      } else {
        simplex[n] = xr;
        values[n] = fr;
      }
      continue;
    }
    if (fr < values[n - 1]) {
      simplex[n] = xr;
      values[n] = fr;
      continue;
    }
    // Contraction: outside when the reflection improved on the worst point, inside otherwise.
    const outside = fr < values[n];
    const xc = along(centroid, simplex[n], outside ? -0.5 : 0.5);
    const fc = evaluate(xc);
    if (fc < (outside ? fr : values[n])) {
      simplex[n] = xc;
      values[n] = fc;
      continue;
    }
    for (let i = 1; i <= n; i++) {
      simplex[i] = simplex[i].map((v, j) => simplex[0][j] + 0.5 * (v - simplex[0][j]));
      values[i] = evaluate(simplex[i]);
    }
  }
  order();
  return { x: simplex[0], fx: values[0], iterations: it };
}
