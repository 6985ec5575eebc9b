/**
 * Token lengths of synthetic traffic: fixed, or sampled per request from a distribution with the
 * seeded PRNG (docs/traffic.md §Lengths). A fleetsim extension: the reference's synthetic lengths
 * are fixed (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`); its native generator samples `LengthSpec{mean, stddev}` with a
 * Box–Muller normal (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`), which `normal` reproduces in kind (not bit for bit).
 *
 * Every sample is rounded to the nearest integer and clamped to `[min, max]`, where `min` is at
 * least the field's floor (1 for prompt and output lengths, 0 for a shared-prefix question).
 */
import type { Prng } from "../util/prng.js";

/** Largest length a table column holds (Int32Array). */
export const MAX_LENGTH = 0x7fffffff;

export type LengthSpec =
  | { readonly distribution: "fixed"; readonly value: number }
  | { readonly distribution: "uniform"; readonly min: number; readonly max: number }
  | {
      readonly distribution: "normal" | "lognormal";
      readonly mean: number;
      readonly stddev: number;
      readonly min: number;
      readonly max: number;
    }
  | {
      readonly distribution: "exponential";
      readonly mean: number;
      readonly min: number;
      readonly max: number;
    };

export type LengthDistribution = LengthSpec["distribution"];

export function fixedLength(value: number): LengthSpec {
  return { distribution: "fixed", value };
}

/** Nominal mean (before rounding and clamping): what reports show for a sampled length. */
export function nominalMean(spec: LengthSpec): number {
  switch (spec.distribution) {
    case "fixed":
      return spec.value;
    case "uniform":
      return (spec.min + spec.max) / 2;
    default:
      return spec.mean;
  }
}

/**
 * Draws lengths one at a time (no allocation per draw). The lognormal's `mean`/`stddev` are those
 * of the length itself, not of its logarithm: σ² = ln(1 + stddev²/mean²), μ = ln(mean) − σ²/2.
 */
export class LengthSampler {
  private readonly mu: number;
  private readonly sigma: number;

  constructor(
    private readonly spec: LengthSpec,
    private readonly rng: Prng,
  ) {
    if (spec.distribution === "lognormal") {
      const s2 = Math.log(1 + (spec.stddev * spec.stddev) / (spec.mean * spec.mean));
      this.sigma = Math.sqrt(s2);
      this.mu = Math.log(spec.mean) - s2 / 2;
    } else {
      this.mu = 0;
      this.sigma = 0;
    }
  }

  /** True when `next()` never draws from the PRNG (fixed lengths, zero spread). */
  get isConstant(): boolean {
    const s = this.spec;
    return (
      s.distribution === "fixed" ||
      (s.distribution === "uniform" && s.min === s.max) ||
      ((s.distribution === "normal" || s.distribution === "lognormal") && s.stddev === 0)
    );
  }

  next(): number {
    const s = this.spec;
    switch (s.distribution) {
      case "fixed":
        return s.value;
      case "uniform":
        return s.min === s.max ? s.min : this.rng.nextIntInclusive(s.min, s.max);
      case "normal":
        return s.stddev === 0
          ? clamp(Math.round(s.mean), s.min, s.max)
          : clamp(Math.round(s.mean + s.stddev * this.gaussian()), s.min, s.max);
      case "lognormal":
        return s.stddev === 0
          ? clamp(Math.round(s.mean), s.min, s.max)
          : clamp(Math.round(Math.exp(this.mu + this.sigma * this.gaussian())), s.min, s.max);
      case "exponential":
        return clamp(Math.round(this.rng.nextExponential(s.mean)), s.min, s.max);
    }
  }

  /** Standard normal by Box–Muller (one value per two uniforms, so the stream stays simple). */
  private gaussian(): number {
    const u1 = this.rng.nextFloat();
    const u2 = this.rng.nextFloat();
    return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** Fills `out[start .. start + count)` with draws. */
  fill(out: Int32Array, start = 0, count = out.length - start): Int32Array {
    if (this.isConstant) {
      out.fill(this.next(), start, start + count);
      return out;
    }
    for (let i = start; i < start + count; i++) out[i] = this.next();
    return out;
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(v, hi));
}

/** Checks a spec built in code (the config schema already enforces these rules). */
export function checkLengthSpec(spec: LengthSpec, floor: number, what: string): void {
  const intIn = (v: number, lo: number) => Number.isInteger(v) && v >= lo && v <= MAX_LENGTH;
  const ok = (() => {
    switch (spec.distribution) {
      case "fixed":
        return intIn(spec.value, floor);
      case "uniform":
        return intIn(spec.min, floor) && intIn(spec.max, spec.min);
      case "normal":
      case "lognormal":
        return (
          Number.isFinite(spec.mean) &&
          spec.mean > 0 &&
          Number.isFinite(spec.stddev) &&
          spec.stddev >= 0 &&
          intIn(spec.min, floor) &&
          intIn(spec.max, spec.min)
        );
      case "exponential":
        return (
          Number.isFinite(spec.mean) && spec.mean > 0 && intIn(spec.min, floor) && intIn(spec.max, spec.min)
        );
    }
  })();
  if (!ok) throw new RangeError(`${what}: invalid length ${JSON.stringify(spec)} (floor ${floor})`);
}
