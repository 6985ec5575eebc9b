import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import {
  fitStandardizedNnls,
  fitStandardizedNnlsRows,
  type StandardizedFit,
} from "../../src/planner/perfModel/standardizedNnls.js";

/**
 * `fitStandardizedNnlsRows` (typed scratch, what the Planner's stores call after every pass) must
 * give exactly what the array-based fit gives: the same doubles for the intercept, slopes, means
 * and scales, the same active features, and null where it is null. The array-based form is kept
 * here as the reference.
 */
const INACTIVE_SCALE = 1e-12;
const PIVOT_TOLERANCE = 1e-12;
const SINGULAR_RIDGE_SCALE = 1e-9;

/** The array-based fit as it was written first: every new value and array per call. */
function referenceFit(
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

const value = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.integer({ min: 0, max: 64 }),
  fc.constantFrom(0, 1, 1e-13, 1e9, 3.5),
);

describe("the Planner's fit on typed rows", () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.tuple(fc.array(value, { minLength: 3, maxLength: 3 }), value), { maxLength: 70 }),
      fc.integer({ min: 0, max: 8 }),
      fc.boolean(),
    ],
    { seed: 20261207, numRuns: 2000 },
  )("gives the array-based fit's doubles, bit for bit", (dims, rows, minObservations, constantFirst) => {
    const xs = rows.map(([x]) => x.slice(0, dims).map((v, k) => (constantFirst && k === 0 ? 5 : v)));
    const ys = rows.map(([, y]) => y);
    const want = referenceFit(xs, ys, dims, minObservations);
    const flat = new Float64Array(xs.length * dims);
    for (let i = 0; i < xs.length; i++) flat.set(xs[i], i * dims);
    const got = fitStandardizedNnlsRows(flat, Float64Array.from(ys), ys.length, dims, minObservations);
    expect(got).toEqual(want);
    if (want !== null && got !== null) {
      for (const key of ["slopes", "means", "scales"] as const) {
        for (let j = 0; j < want[key].length; j++)
          expect(Object.is(got[key][j], want[key][j]), `${key}[${j}]`).toBe(true);
      }
      expect(Object.is(got.intercept, want.intercept)).toBe(true);
    }
    expect(fitStandardizedNnls(xs, ys, dims, minObservations)).toEqual(want);
  });

  test.prop(
    [
      fc.array(fc.tuple(fc.integer({ min: 0, max: 9000 }), fc.integer({ min: 0, max: 256 })), {
        minLength: 5,
        maxLength: 64,
      }),
    ],
    {
      seed: 7,
      numRuns: 500,
    },
  )("on passes shaped like a worker's (tokens, batch → ms), with noise", (passes) => {
    const xs = passes.map(([a, b]) => [a, b]);
    const ys = passes.map(([a, b], i) => 3 + 0.002 * a + 0.05 * b + ((i * 7919) % 13) / 10);
    const flat = Float64Array.from(xs.flat());
    expect(fitStandardizedNnlsRows(flat, Float64Array.from(ys), ys.length, 2, 5)).toEqual(
      referenceFit(xs, ys, 2, 5),
    );
  });
});
