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
 * Prophet's Stan L-BFGS is replaced by alternating exact minimisation (an exact lasso for k, m, β, δ at
 * fixed σ², then closed-form σ²) started from Prophet's own initial point; the objective decreases
 * monotonically. Deterministic; no sampling, no uncertainty intervals (yhat only, as upstream uses).
 */
import { solveLasso } from "./lasso.js";

/** Prophet's defaults (its constructor's keyword arguments, and the fixed priors of its Stan model). */
const PROPHET = {
  changepointRange: 0.8,
  nChangepoints: 25,
  changepointPriorScale: 0.05,
  /** Prior sd of the trend's slope k and offset m. */
  trendPriorSd: 5,
  seasonalityPriorScale: 10,
  sigmaPriorSd: 0.5,
} as const;
/** Floor on σ² in scaled units: an exact fit would otherwise drive σ → 0 and stall the iteration. */
const SIGMA2_FLOOR = 1e-12;
const MAX_OUTER = 100;
const DAY_S = 86_400;
/** 2024-01-01T00:00Z in days since the Unix epoch: upstream's `start_date` for the time axis. */
const START_DAY = 19_723;

export interface Seasonality {
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
  const histSize = Math.floor(n * PROPHET.changepointRange);
  const count = Math.min(PROPHET.nChangepoints, histSize - 1);
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
 * Alternating minimisation of the negative log posterior
 *   n·log σ + ‖y − Bβ − Hδ‖²/(2σ²) + Σ β_j²/(2 s_j²) + Σ |δ_j|/τ + σ²/(2·0.5²):
 * for a fixed σ², (β, δ) is a lasso solved exactly (`lasso.ts`); σ² then has a closed form. Each half
 * step minimises exactly, so the objective decreases monotonically from Prophet's initial point.
 */
function mapEstimate(
  ys: readonly number[],
  B: readonly (readonly number[])[],
  H: readonly (readonly number[])[],
): { beta: number[]; delta: number[]; sigma2: number; objective: number } {
  const n = ys.length;
  const nb = B[0].length;
  const nh = H.length;
  const cols = [...B[0].map((_, j) => B.map((row) => row[j])), ...H];
  const k = cols.length;
  const gram = cols.map((a) => cols.map((b) => dotCols(a, b)));
  const g = cols.map((c) => dotCols(c, ys));
  const priorPrecision = cols.map((_, j) =>
    j >= nb ? 0 : 1 / (j < 2 ? PROPHET.trendPriorSd : PROPHET.seasonalityPriorScale) ** 2,
  );
  const l1 = cols.map((_, j) => j >= nb);
  const sigmaPrecision = 1 / (PROPHET.sigmaPriorSd * PROPHET.sigmaPriorSd);
  const sseOf = (z: readonly number[]): number => {
    let sse = 0;
    for (let i = 0; i < n; i++) {
      let f = 0;
      for (let j = 0; j < k; j++) f += cols[j][i] * z[j];
      sse += (ys[i] - f) ** 2;
    }
    return sse;
  };

  // Prophet's initial values: line through the first and last points, no changes, σ = 1.
  let z = new Array<number>(k).fill(0);
  z[0] = ys[0];
  z[1] = ys[n - 1] - ys[0];
  let sigma2 = 1;
  for (let outer = 0; outer < MAX_OUTER; outer++) {
    const q = gram.map((row, a) => row.map((v, b) => (a === b ? v + sigma2 * priorPrecision[a] : v)));
    z = solveLasso(q, g, l1, sigma2 / PROPHET.changepointPriorScale, z);
    // argmin over σ² of the σ terms: a·σ⁴ + n·σ² − SSE = 0 with a = 1/0.5².
    const sse = sseOf(z);
    const next = Math.max(
      SIGMA2_FLOOR,
      (-n + Math.sqrt(n * n + 4 * sigmaPrecision * sse)) / (2 * sigmaPrecision),
    );
    const done = Math.abs(next - sigma2) <= 1e-9 * sigma2;
    sigma2 = next;
    if (done) break;
  }
  let prior = (sigma2 * sigmaPrecision) / 2;
  for (let j = 0; j < k; j++)
    prior += l1[j] ? Math.abs(z[j]) / PROPHET.changepointPriorScale : (z[j] * z[j] * priorPrecision[j]) / 2;
  const objective = (n / 2) * Math.log(sigma2) + sseOf(z) / (2 * sigma2) + prior;
  return { beta: z.slice(0, nb), delta: z.slice(nb, nb + nh), sigma2, objective };
}
