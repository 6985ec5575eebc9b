/**
 * The search space an optimizer sees: named dimensions, each categorical (a list of values,
 * unordered) or numeric (a bounded interval, linear or log, optionally integer or stepped). An
 * assignment gives every dimension of a study one value. Numeric values live in a unit interval
 * for the model-based optimizer (`toUnit` / `fromUnit`), so log ranges are searched in log space.
 */
import type { Prng } from "../util/prng.js";

export interface CategoricalDimension {
  readonly kind: "categorical";
  readonly name: string;
  readonly values: readonly unknown[];
}

export interface NumericDimension {
  readonly kind: "numeric";
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly log: boolean;
  /** Values are integers (an integer knob, or a ladder of GPUs). */
  readonly integer: boolean;
  /** Values are min + k·step (a stepped linear range); null: any value in [min, max]. */
  readonly step: number | null;
}

export type Dimension = CategoricalDimension | NumericDimension;

/** Dimension name → value. */
export type Assignment = Readonly<Record<string, unknown>>;

function transform(d: NumericDimension, x: number): number {
  return d.log ? Math.log(x) : x;
}

/** A numeric value → [0, 1] (log ranges in log space). */
export function toUnit(d: NumericDimension, x: number): number {
  const lo = transform(d, d.min);
  const hi = transform(d, d.max);
  return hi === lo ? 0.5 : (transform(d, x) - lo) / (hi - lo);
}

/** [0, 1] → the nearest legal value of `d` (stepped, integer, clamped). */
export function fromUnit(d: NumericDimension, u: number): number {
  const lo = transform(d, d.min);
  const hi = transform(d, d.max);
  const t = lo + Math.min(1, Math.max(0, u)) * (hi - lo);
  return snapNumeric(d, d.log ? Math.exp(t) : t);
}

/** The legal value of `d` nearest `x`. */
export function snapNumeric(d: NumericDimension, x: number): number {
  let v = Math.min(d.max, Math.max(d.min, x));
  if (d.step !== null) {
    const k = Math.round((v - d.min) / d.step);
    // 12 significant digits: `0.1 + 2 × 0.1` is 0.3.
    v = Number((d.min + k * d.step).toPrecision(12));
    if (v > d.max) v = Number((d.min + (k - 1) * d.step).toPrecision(12));
  }
  if (d.integer) {
    v = Math.round(v);
    if (v > d.max) v = Math.floor(d.max);
    if (v < d.min) v = Math.ceil(d.min);
  }
  return v;
}

/** Number of values of a finite numeric dimension, or null when it is continuous. */
export function finiteCount(d: NumericDimension): number | null {
  if (d.step !== null) return Math.floor((d.max - d.min) / d.step + 1e-9) + 1;
  if (d.integer && !d.log) return Math.floor(d.max) - Math.ceil(d.min) + 1;
  return null;
}

/**
 * One uniform draw: a categorical value, an evenly weighted value of a finite linear range, or a
 * point uniform in (log) space snapped to the dimension.
 */
export function sampleUniform(d: Dimension, rng: Prng): unknown {
  if (d.kind === "categorical") return d.values[rng.nextIntInclusive(0, d.values.length - 1)];
  const count = d.log ? null : finiteCount(d);
  if (count !== null) {
    const k = rng.nextIntInclusive(0, count - 1);
    return snapNumeric(d, d.step !== null ? d.min + k * d.step : Math.ceil(d.min) + k);
  }
  return fromUnit(d, rng.nextFloat());
}
