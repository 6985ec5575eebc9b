/**
 * A small Prophet-style forecaster: Prophet's default model (linear growth, additive seasonality)
 * without the Stan dependency, fitted as the same MAP problem on the same scaled data.
 *
 * - y is scaled by max|y|, time to [0, 1] over the retained window (Prophet `absmax` scaling);
 * - trend k·t + m + Σ δ_j·(t − s_j)₊ with up to 25 changepoints evenly placed over the first 80 % of
 *   the points (Prophet's placement, numpy half-to-even rounding);
 * - daily (order 4), weekly (3) and yearly (10) Fourier seasonalities are switched on only as Prophet's
 *   "auto" rules do (span ≥ 2 days / 2 weeks / 730 days, spacing below the period), so the usual
 *   20–50 points × 180 s window fits the trend alone;
 * - priors k, m ~ N(0, 5), δ ~ Laplace(0, 0.05), β ~ N(0, 10), σ ~ half-N(0, 0.5).
 *
 * The MAP is found by block coordinate descent (ridge-regularised least squares for k, m, β; soft
 * thresholding for each δ; closed-form σ²), each step exactly minimising the negative log posterior in
 * its block, so the objective decreases monotonically. Deterministic; no sampling, no uncertainty.
 */
import { solveSpd } from "./linalg.js";

const CHANGEPOINT_RANGE = 0.8;
const MAX_CHANGEPOINTS = 25;
const CHANGEPOINT_PRIOR_SCALE = 0.05;
const TREND_PRIOR_SD = 5;
const SEASONALITY_PRIOR_SD = 10;
const SIGMA_PRIOR_SD = 0.5;
/** Floor on σ² in scaled units: an exact fit would otherwise drive σ → 0 and stall the iteration. */
const SIGMA2_FLOOR = 1e-12;
const MAX_OUTER = 100;
const MAX_SWEEPS = 300;
const DAY_S = 86_400;
/** 2024-01-01T00:00Z in days since the Unix epoch: upstream's `start_date` for the time axis. */
const START_DAY = 19_723;

interface Seasonality {
  readonly periodDays: number;
  readonly order: number;
}

/** numpy.round: halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Changepoint positions as indices into the window (Prophet `set_changepoints`). */
export function changepointIndices(n: number): number[] {
  const histSize = Math.floor(n * CHANGEPOINT_RANGE);
  const count = Math.min(MAX_CHANGEPOINTS, histSize - 1);
  if (count <= 0) return [];
  const out: number[] = [];
  for (let i = 1; i <= count; i++) out.push(roundHalfEven((i * (histSize - 1)) / count));
  return out;
}

/** Seasonalities Prophet's "auto" settings would enable for this window. */
export function autoSeasonalities(n: number, intervalS: number): Seasonality[] {
  const spanDays = ((n - 1) * intervalS) / DAY_S;
  const spacingDays = intervalS / DAY_S;
  const out: Seasonality[] = [];
  if (spanDays >= 730) out.push({ periodDays: 365.25, order: 10 });
  if (spanDays >= 14 && spacingDays < 7) out.push({ periodDays: 7, order: 3 });
  if (spanDays >= 2 && spacingDays < 1) out.push({ periodDays: 1, order: 4 });
  return out;
}

function fourierRow(step: number, intervalS: number, seasonalities: readonly Seasonality[]): number[] {
  const days = START_DAY + (step * intervalS) / DAY_S;
  const row: number[] = [];
  for (const s of seasonalities) {
    for (let i = 1; i <= s.order; i++) {
      const angle = (2 * Math.PI * i * days) / s.periodDays;
      row.push(Math.sin(angle), Math.cos(angle));
    }
  }
  return row;
}

/** A fitted window: MAP parameters in scaled units plus what is needed to evaluate it. */
export interface ProphetFit {
  /** max|y| of the window (1 when all zero). */
  readonly yScale: number;
  /** Intercept m, slope k, then Fourier coefficients, all in scaled units. */
  readonly beta: readonly number[];
  /** Rate changes at `changepointsT`. */
  readonly delta: readonly number[];
  /** Changepoints in scaled time (window's first point 0, last point 1). */
  readonly changepointsT: readonly number[];
  readonly sigma2: number;
  /** Negative log posterior (up to a constant) at the returned parameters. */
  readonly objective: number;
  /** yhat (original units) at window position `i` (may be fractional or ≥ n). */
  predictAt(i: number): number;
}

/**
 * Fits the window `y` (model space, evenly spaced, the first point at step `firstStep` of the
 * predictor's time axis). Needs ≥ 2 points.
 */
export function fitProphet(y: readonly number[], firstStep: number, intervalS: number): ProphetFit {
  const n = y.length;
  if (n < 2) throw new RangeError("the Prophet-style fit needs at least 2 points");
  let yScale = 0;
  for (const v of y) yScale = Math.max(yScale, Math.abs(v));
  if (yScale === 0) yScale = 1;
  const ys = y.map((v) => v / yScale);
  const tOf = (i: number): number => i / (n - 1);
  const cps = changepointIndices(n).map(tOf);
  const seas = autoSeasonalities(n, intervalS);
  // Block B: intercept m, slope k and Fourier terms (Gaussian priors); H: changepoint hinges (Laplace).
  const bRow = (i: number): number[] => [1, tOf(i), ...fourierRow(firstStep + i, intervalS, seas)];
  const B = ys.map((_, i) => bRow(i));
  const H = cps.map((c) => ys.map((_, i) => Math.max(0, tOf(i) - c)));
  const { beta, delta, sigma2, objective } = mapEstimate(ys, B, H);
  return {
    yScale,
    beta,
    delta,
    changepointsT: cps,
    sigma2,
    objective,
    predictAt(i: number): number {
      const row = bRow(i);
      let f = 0;
      for (let j = 0; j < row.length; j++) f += row[j] * beta[j];
      for (let j = 0; j < cps.length; j++) f += Math.max(0, tOf(i) - cps[j]) * delta[j];
      return f * yScale;
    },
  };
}

/** yhat for the step after the window's last point. */
export function prophetForecast(y: readonly number[], firstStep: number, intervalS: number): number {
  return fitProphet(y, firstStep, intervalS).predictAt(y.length);
}

function dotCols(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * Block coordinate descent on the negative log posterior
 *   n·log σ + ‖y − Bβ − Hδ‖²/(2σ²) + Σ β_j²/(2 s_j²) + Σ |δ_j|/τ + σ²/(2·0.5²).
 * For a fixed σ², (β, δ) is a lasso: coordinate sweeps find the active set and signs, and an exact solve
 * on that set (accepted only when it satisfies the optimality conditions) finishes it off, since plain
 * coordinate descent crawls on the strongly correlated hinge columns. σ² then has a closed form.
 */
function mapEstimate(
  ys: readonly number[],
  B: readonly (readonly number[])[],
  H: readonly (readonly number[])[],
): { beta: number[]; delta: number[]; sigma2: number; objective: number } {
  const n = ys.length;
  const nb = B[0].length;
  const nh = H.length;
  const bCols = B[0].map((_, j) => B.map((row) => row[j]));
  const priorPrecision = bCols.map((_, j) => 1 / (j < 2 ? TREND_PRIOR_SD : SEASONALITY_PRIOR_SD) ** 2);
  const hNorm2 = H.map((h) => dotCols(h, h));
  const btb = bCols.map((a) => bCols.map((b) => dotCols(a, b)));
  const bth = bCols.map((a) => H.map((h) => dotCols(a, h)));
  const hth = H.map((a) => H.map((h) => dotCols(a, h)));
  const sigmaPrecision = 1 / (SIGMA_PRIOR_SD * SIGMA_PRIOR_SD);

  // Prophet's initial values: line through the first and last points, no changes, σ = 1.
  const beta = new Array<number>(nb).fill(0);
  beta[0] = ys[0];
  beta[1] = ys[n - 1] - ys[0];
  const delta = new Array<number>(nh).fill(0);
  let sigma2 = 1;
  const r = ys.slice();
  const recomputeResiduals = (): void => {
    for (let i = 0; i < n; i++) {
      let f = 0;
      for (let j = 0; j < nb; j++) f += B[i][j] * beta[j];
      for (let j = 0; j < nh; j++) f += H[j][i] * delta[j];
      r[i] = ys[i] - f;
    }
  };
  recomputeResiduals();

  /** Exact minimiser on the current active set and signs, if it is the lasso optimum; else null. */
  const activeSetSolve = (lambda: number): { beta: number[]; delta: number[] } | null => {
    const active: number[] = [];
    for (let j = 0; j < nh; j++) if (delta[j] !== 0) active.push(j);
    const k = nb + active.length;
    const m: number[][] = [];
    const rhs: number[] = [];
    for (let a = 0; a < k; a++) {
      const row: number[] = [];
      for (let b = 0; b < k; b++) {
        if (a < nb && b < nb) row.push(btb[a][b] + (a === b ? sigma2 * priorPrecision[a] : 0));
        else if (a < nb) row.push(bth[a][active[b - nb]]);
        else if (b < nb) row.push(bth[b][active[a - nb]]);
        else row.push(hth[active[a - nb]][active[b - nb]]);
      }
      m.push(row);
      if (a < nb) rhs.push(dotCols(bCols[a], ys));
      else {
        const j = active[a - nb];
        rhs.push(dotCols(H[j], ys) - lambda * Math.sign(delta[j]));
      }
    }
    let x: number[];
    try {
      x = solveSpd(m, rhs);
    } catch {
      return null;
    }
    const nextDelta = new Array<number>(nh).fill(0);
    for (let a = 0; a < active.length; a++) {
      const j = active[a];
      // A sign flip means the active set is wrong; keep sweeping.
      if (Math.sign(x[nb + a]) !== Math.sign(delta[j])) return null;
      nextDelta[j] = x[nb + a];
    }
    const res = ys.map((v, i) => {
      let f = 0;
      for (let j = 0; j < nb; j++) f += B[i][j] * x[j];
      for (const j of active) f += H[j][i] * nextDelta[j];
      return v - f;
    });
    for (let j = 0; j < nh; j++) {
      if (nextDelta[j] === 0 && Math.abs(dotCols(H[j], res)) > lambda * (1 + 1e-9)) return null;
    }
    return { beta: x.slice(0, nb), delta: nextDelta };
  };

  const lassoForFixedSigma = (): void => {
    const ridge = btb.map((row, a) => row.map((v, b) => (a === b ? v + sigma2 * priorPrecision[a] : v)));
    const lambda = sigma2 / CHANGEPOINT_PRIOR_SCALE;
    for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
      let change = 0;
      // Block B given δ: ridge solve against the partial residual y − Hδ.
      const rhs = new Array<number>(nb).fill(0);
      for (let i = 0; i < n; i++) {
        let partial = r[i];
        for (let j = 0; j < nb; j++) partial += B[i][j] * beta[j];
        for (let j = 0; j < nb; j++) rhs[j] += B[i][j] * partial;
      }
      const next = solveSpd(ridge, rhs);
      for (let j = 0; j < nb; j++) {
        const d = next[j] - beta[j];
        if (d !== 0) for (let i = 0; i < n; i++) r[i] -= B[i][j] * d;
        change = Math.max(change, Math.abs(d));
        beta[j] = next[j];
      }
      // Each δ_j given the rest: soft thresholding (the Laplace prior's exact coordinate minimiser).
      for (let j = 0; j < nh; j++) {
        if (hNorm2[j] === 0) continue;
        const h = H[j];
        const dot = dotCols(h, r) + hNorm2[j] * delta[j];
        const updated = (Math.sign(dot) * Math.max(0, Math.abs(dot) - lambda)) / hNorm2[j];
        const d = updated - delta[j];
        if (d !== 0) for (let i = 0; i < n; i++) r[i] -= h[i] * d;
        change = Math.max(change, Math.abs(d));
        delta[j] = updated;
      }
      if (change <= 1e-13) return;
      const exact = activeSetSolve(lambda);
      if (exact !== null) {
        beta.splice(0, nb, ...exact.beta);
        delta.splice(0, nh, ...exact.delta);
        recomputeResiduals();
        return;
      }
    }
  };

  const objectiveAt = (s2: number): number => {
    const sse = dotCols(r, r);
    let prior = 0;
    for (let j = 0; j < nb; j++) prior += (beta[j] * beta[j] * priorPrecision[j]) / 2;
    for (const d of delta) prior += Math.abs(d) / CHANGEPOINT_PRIOR_SCALE;
    return (n / 2) * Math.log(s2) + sse / (2 * s2) + prior + (s2 * sigmaPrecision) / 2;
  };

  for (let outer = 0; outer < MAX_OUTER; outer++) {
    lassoForFixedSigma();
    const sse = dotCols(r, r);
    // argmin over σ² of the σ terms: a·σ⁴ + n·σ² − SSE = 0 with a = 1/0.5².
    const next = Math.max(
      SIGMA2_FLOOR,
      (-n + Math.sqrt(n * n + 4 * sigmaPrecision * sse)) / (2 * sigmaPrecision),
    );
    const done = Math.abs(next - sigma2) <= 1e-9 * sigma2;
    sigma2 = next;
    if (done) break;
  }
  return { beta, delta, sigma2, objective: objectiveAt(sigma2) };
}
