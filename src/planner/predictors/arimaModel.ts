/**
 * A small, deterministic auto-ARIMA standing in for `pmdarima.auto_arima` (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py`;
 * hand-written rather than the npm `arima` port, docs/predictors.md "Behaviour"). Model selection follows pmdarima's defaults where they matter at this size:
 *
 * - constant input ⇒ ARIMA(0,0,0) without intercept (pmdarima's "perfect" constant model);
 * - d from repeated KPSS level-stationarity tests (α = 0.05, lshort lag rule, d ≤ 2);
 * - constant differenced series ⇒ ARIMA(0,d,0), with intercept when d < 2;
 * - otherwise every (p, q) with p, q ≤ min(2, ⌊n/3⌋) (pmdarima caps at ⌊n/3⌋ and 5), with and without
 *   intercept when d ≤ 1 (pmdarima's stepwise search toggles it), stationary AR and invertible MA
 *   parts only, at least two residuals more than parameters, lowest AIC wins (ties: first in p, q,
 *   intercept-first order). σ² is floored at 1e-12 × mean square so exact (noise-free) fits tie and the
 *   smaller model wins instead of every exact fit scoring −∞.
 *
 * Deviation: parameters are conditional-sum-of-squares estimates (OLS for pure AR, Nelder–Mead
 * otherwise) rather than statsmodels' exact Kalman-filter MLE; every candidate conditions on the same
 * first `cond` points so their AICs compare over the same residuals.
 */
import { leastSquares } from "./linalg.js";
import { nelderMead } from "./nelderMead.js";

export interface ArimaSpec {
  readonly p: number;
  readonly d: number;
  readonly q: number;
  readonly intercept: boolean;
}

export interface ArimaFit extends ArimaSpec {
  /** Leading points of the differenced series used only as lags (no residual). */
  readonly cond: number;
  /** [c if intercept] + φ₁..φ_p + θ₁..θ_q. */
  readonly params: readonly number[];
  readonly sse: number;
  readonly aic: number;
}

const MAX_ORDER = 2;
const MAX_D = 2;
/** KPSS 5 % critical value for the level null: p-value < 0.05 ⇔ statistic > 0.463. */
const KPSS_CRITICAL_5PCT = 0.463;
/** Nelder–Mead iterations per pass when only re-estimating a known order (pmdarima's update also runs few). */
const UPDATE_ITERATIONS = 100;

export function isConstant(x: readonly number[]): boolean {
  for (let i = 1; i < x.length; i++) if (x[i] !== x[0]) return false;
  return true;
}

export function difference(x: readonly number[], d: number): number[] {
  let out = x.slice();
  for (let k = 0; k < d; k++) {
    const next: number[] = [];
    for (let i = 1; i < out.length; i++) next.push(out[i] - out[i - 1]);
    out = next;
  }
  return out;
}

/** KPSS level-stationarity statistic (Newey–West long-run variance, lag ⌊3√n/13⌋). */
export function kpssStatistic(x: readonly number[]): number {
  const n = x.length;
  const mean = x.reduce((s, v) => s + v, 0) / n;
  const e = x.map((v) => v - mean);
  let partial = 0;
  let eta = 0;
  for (const v of e) {
    partial += v;
    eta += partial * partial;
  }
  eta /= n * n;
  let s2 = e.reduce((s, v) => s + v * v, 0) / n;
  const lags = Math.trunc((3 * Math.sqrt(n)) / 13);
  let acc = 0;
  for (let i = 1; i <= lags; i++) {
    let cov = 0;
    for (let t = i; t < n; t++) cov += e[t] * e[t - i];
    acc += (1 - i / (lags + 1)) * cov;
  }
  s2 += (2 * acc) / n;
  return eta / s2;
}

/** Order of differencing as pmdarima's `ndiffs(test="kpss")`. */
export function chooseDifferencing(y: readonly number[], maxD = MAX_D): number {
  if (isConstant(y)) return 0;
  let x = y.slice();
  let stat = kpssStatistic(x);
  if (Number.isNaN(stat)) return 0;
  let d = 0;
  while (stat > KPSS_CRITICAL_5PCT && d < maxD) {
    d++;
    x = difference(x, 1);
    if (isConstant(x)) return d;
    stat = kpssStatistic(x);
    if (Number.isNaN(stat)) return d - 1;
  }
  return d;
}

/** 1 − a₁B − a₂B² has its roots outside the unit circle (orders ≤ 2, written out). */
function rootsOutsideUnitCircle(a: readonly number[]): boolean {
  if (a.length === 0) return true;
  if (a.length === 1) return Math.abs(a[0]) < 1;
  if (a.length === 2) return a[0] + a[1] < 1 && a[1] - a[0] < 1 && Math.abs(a[1]) < 1;
  throw new RangeError(`order ${a.length} > ${MAX_ORDER} is not supported`);
}

function split(spec: ArimaSpec, params: readonly number[]): { c: number; phi: number[]; theta: number[] } {
  const o = spec.intercept ? 1 : 0;
  return {
    c: spec.intercept ? params[0] : 0,
    phi: params.slice(o, o + spec.p),
    theta: params.slice(o + spec.p, o + spec.p + spec.q),
  };
}

function admissible(spec: ArimaSpec, params: readonly number[]): boolean {
  const { phi, theta } = split(spec, params);
  // The MA polynomial is 1 + θ₁B + θ₂B², i.e. a = −θ in the AR-style check.
  return rootsOutsideUnitCircle(phi) && rootsOutsideUnitCircle(theta.map((t) => -t));
}

/** CSS residuals e_t for t ≥ cond (earlier residuals are taken as 0); returns their sum of squares. */
function residuals(
  w: readonly number[],
  cond: number,
  spec: ArimaSpec,
  params: readonly number[],
  e: number[],
): number {
  const { c, phi, theta } = split(spec, params);
  let sse = 0;
  for (let t = 0; t < w.length; t++) {
    if (t < cond) {
      e[t] = 0;
      continue;
    }
    let pred = c;
    for (let i = 0; i < phi.length; i++) pred += phi[i] * w[t - 1 - i];
    for (let j = 0; j < theta.length && t - 1 - j >= 0; j++) pred += theta[j] * e[t - 1 - j];
    const r = w[t] - pred;
    e[t] = r;
    sse += r * r;
  }
  return sse;
}

/** OLS fit of the AR(p) part (with intercept when requested) on the conditioned rows. */
function fitAr(w: readonly number[], cond: number, spec: ArimaSpec): number[] {
  const rows: number[][] = [];
  const target: number[] = [];
  for (let t = cond; t < w.length; t++) {
    const row: number[] = spec.intercept ? [1] : [];
    for (let i = 1; i <= spec.p; i++) row.push(w[t - i]);
    rows.push(row);
    target.push(w[t]);
  }
  if (rows.length === 0 || rows[0].length === 0) return [];
  return leastSquares(rows, target);
}

function estimate(
  w: readonly number[],
  cond: number,
  spec: ArimaSpec,
  start: readonly number[] | null,
  maxIterations: number,
): { params: number[]; sse: number } {
  const e = new Array<number>(w.length).fill(0);
  const sseOf = (params: readonly number[]): number =>
    admissible(spec, params) ? residuals(w, cond, spec, params, e) : Number.POSITIVE_INFINITY;
  let ar: number[] | null = null;
  try {
    ar = fitAr(w, cond, spec);
  } catch (err) {
    // A rank-deficient pure-AR design means a lower order fits as well; drop this candidate.
    if (spec.q === 0) throw err;
  }
  // Pure AR: conditional least squares is OLS, exact and cheap.
  if (spec.q === 0 && ar !== null && admissible(spec, ar)) return { params: ar, sse: sseOf(ar) };
  const zeros = (k: number): number[] => new Array<number>(k).fill(0);
  let x0: number[];
  if (start !== null && admissible(spec, start)) {
    x0 = start.slice();
  } else if (ar !== null && admissible(spec, [...ar, ...zeros(spec.q)])) {
    // Start MA models from the AR fit with θ = 0.
    x0 = [...ar, ...zeros(spec.q)];
  } else {
    const mean = w.reduce((s, v) => s + v, 0) / w.length;
    x0 = [...(spec.intercept ? [mean] : []), ...zeros(spec.p + spec.q)];
  }
  if (x0.length === 0) return { params: [], sse: sseOf([]) };
  const scale = Math.sqrt(w.reduce((s, v) => s + v * v, 0) / w.length) || 1;
  const steps = x0.map((v, i) => (spec.intercept && i === 0 ? 0.1 * Math.max(Math.abs(v), scale) : 0.1));
  // Two passes: a restart from the first optimum guards against a collapsed simplex.
  let best = nelderMead(sseOf, x0, { steps, maxIterations });
  best = nelderMead(sseOf, best.x, { steps: steps.map((s) => s / 10), maxIterations });
  if (!Number.isFinite(best.fx)) throw new RangeError("ARIMA estimation found no admissible parameters");
  return { params: best.x, sse: best.fx };
}

function aicOf(sse: number, residualCount: number, k: number, varianceFloor: number): number {
  // Exact fits would give σ² = 0 (AIC = −∞); the floor makes exact fits tie, so fewer parameters win.
  const sigma2 = Math.max(sse / residualCount, varianceFloor);
  return residualCount * (Math.log(2 * Math.PI * sigma2) + 1) + 2 * k;
}

function paramCount(spec: ArimaSpec): number {
  return spec.p + spec.q + (spec.intercept ? 1 : 0) + 1; // + σ², as statsmodels counts it
}

function varianceFloor(w: readonly number[]): number {
  return 1e-12 * Math.max(Number.MIN_VALUE, w.reduce((s, v) => s + v * v, 0) / w.length);
}

function fitSpec(
  w: readonly number[],
  cond: number,
  spec: ArimaSpec,
  start: readonly number[] | null,
  maxIterations: number,
): ArimaFit {
  const { params, sse } = estimate(w, cond, spec, start, maxIterations);
  const n = w.length - cond;
  return { ...spec, cond, params, sse, aic: aicOf(sse, n, paramCount(spec), varianceFloor(w)) };
}

/**
 * Every candidate the search fits for `y` (at least 2 points), in grid order; a single entry for the
 * constant and constant-difference shortcuts. Candidates that fail to fit are left out.
 */
export function arimaCandidates(y: readonly number[]): ArimaFit[] {
  const n = y.length;
  if (n < 2) throw new RangeError("auto-ARIMA needs at least 2 points");
  if (isConstant(y)) return [fitSpec(y, 0, { p: 0, d: 0, q: 0, intercept: false }, null, 0)];
  const d = chooseDifferencing(y);
  const w = difference(y, d);
  if (isConstant(w)) return [fitSpec(w, 0, { p: 0, d, q: 0, intercept: d < 2 }, null, 0)];
  const maxP = Math.min(MAX_ORDER, Math.floor(n / 3));
  const maxQ = Math.min(MAX_ORDER, Math.floor(n / 3));
  const cond = maxP;
  const residualCount = w.length - cond;
  const fits: ArimaFit[] = [];
  for (let p = 0; p <= maxP; p++) {
    for (let q = 0; q <= maxQ; q++) {
      for (const intercept of d < 2 ? [true, false] : [false]) {
        const spec = { p, d, q, intercept };
        // Require two residuals beyond the parameter count: with fewer, near-exact fits make AIC meaningless.
        if (residualCount - paramCount(spec) - 1 < 1) continue;
        try {
          fits.push(fitSpec(w, cond, spec, null, 400 * (p + q + 1)));
        } catch {
          // pmdarima's error_action="ignore": a candidate that fails to fit is skipped.
        }
      }
    }
  }
  return fits;
}

/** Selects and fits a model for `y`: lowest criterion, first wins ties. Throws when nothing fits. */
export function autoArima(y: readonly number[]): ArimaFit {
  let best: ArimaFit | null = null;
  for (const fit of arimaCandidates(y)) if (best === null || fit.aic < best.aic) best = fit;
  if (best === null) throw new RangeError("auto-ARIMA: no candidate model could be fitted");
  return best;
}

/** Re-estimates the parameters of an already selected order on the grown series (pmdarima `update`). */
export function refitArima(y: readonly number[], prev: ArimaFit): ArimaFit {
  const spec: ArimaSpec = { p: prev.p, d: prev.d, q: prev.q, intercept: prev.intercept };
  return fitSpec(difference(y, prev.d), prev.cond, spec, prev.params, UPDATE_ITERATIONS);
}

/** One-step-ahead forecast of y from a fit made on (a prefix of) y. */
export function forecastArima(y: readonly number[], fit: ArimaFit): number {
  const w = difference(y, fit.d);
  const e = new Array<number>(w.length).fill(0);
  residuals(w, fit.cond, fit, fit.params, e);
  const { c, phi, theta } = split(fit, fit.params);
  const t = w.length;
  let next = c;
  for (let i = 0; i < phi.length; i++) next += phi[i] * w[t - 1 - i];
  for (let j = 0; j < theta.length && t - 1 - j >= 0; j++) next += theta[j] * e[t - 1 - j];
  // Undo the differencing: add back the last value of each lower-order difference.
  let level = next;
  for (let k = fit.d - 1; k >= 0; k--) {
    const lower = difference(y, k);
    level += lower[lower.length - 1];
  }
  if (!Number.isFinite(level)) throw new RangeError("ARIMA forecast is not finite");
  return level;
}
